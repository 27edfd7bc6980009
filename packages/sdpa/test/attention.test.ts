/**
 * The attention function on awkward cases, against the float64 oracle: the GPU kernel (on the software GPU in CI) within
 * 2× the error of the plain float32 computation (or 1e-6), the CPU path, the log-sum-exps, and the arguments it
 * refuses. The cases are grouped so that they share few pipelines: each distinct set of kernel constants is one compile,
 * minutes on a software GPU with a cold shader cache.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdpaProblem, type GpuContext, type SdpaDims, type SdpaOptions } from '@fa/core';
import { acquireNodeGpu } from '@fa/core/node';
import { sdpaFloat16Plain, sdpaFloat32, sdpaOracle } from '@fa/reference';
import { attention, dimsOf, floatsToHalves, halvesToFloats, prepareAttention, SdpaArgumentError } from '../src/index.js';

let gpu: GpuContext | undefined;
let missing = '';
beforeAll(async () => {
  const acquired = await acquireNodeGpu();
  gpu = acquired.gpu;
  if (!gpu) {
    missing = acquired.reason ?? 'no GPU adapter';
    if (process.env.FA_REQUIRE_GPU === '1') throw new Error(`FA_REQUIRE_GPU=1 but ${missing}`);
  }
});
afterAll(() => {
  gpu?.destroy();
});

/** Deterministic values in [−range, range). */
function values(count: number, seed: number, range = 3): Float32Array {
  let state = seed >>> 0;
  return Float32Array.from({ length: count }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state / 2 ** 32) * 2 * range - range;
  });
}

interface Case {
  name: string;
  dims: SdpaDims;
  options?: SdpaOptions;
}

function tensors({ B, Hq, Hkv, Lq, Lk, d }: SdpaDims, seed: number): { q: Float32Array; k: Float32Array; v: Float32Array } {
  return { q: values(B * Hq * Lq * d, seed), k: values(B * Hkv * Lk * d, seed + 1), v: values(B * Hkv * Lk * d, seed + 2) };
}

const maxAbs = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let worst = 0;
  for (let x = 0; x < a.length; x++) {
    const ax = a[x] as number;
    const bx = b[x] as number;
    if (ax === bx) continue;
    worst = Math.max(worst, Number.isFinite(ax) && Number.isFinite(bx) ? Math.abs(ax - bx) : Number.POSITIVE_INFINITY);
  }
  return worst;
};

const boolMask = (count: number, seed: number): Uint8Array => Uint8Array.from(values(count, seed), (x) => (x > -1 ? 1 : 0));

/** Grouped by kernel constants (head size, masks): one pipeline per group. */
const GROUPS: { name: string; cases: Case[] }[] = [
  {
    name: 'd = 64, bands',
    cases: [
      { name: 'GQA 4, causal, Lq = Lk = 77', dims: { B: 2, Hq: 4, Hkv: 1, Lq: 77, Lk: 77, d: 64 }, options: { causal: true } },
      { name: 'Lq = 1 over 130 keys, bshd', dims: { B: 1, Hq: 2, Hkv: 2, Lq: 1, Lk: 130, d: 64 }, options: { layout: 'bshd' } },
      { name: 'Lq = 100 > Lk = 37, causal: rows that see nothing', dims: { B: 1, Hq: 1, Hkv: 1, Lq: 100, Lk: 37, d: 64 }, options: { causal: true } },
      { name: 'window [5, 3], Lq < Lk', dims: { B: 1, Hq: 2, Hkv: 1, Lq: 40, Lk: 90, d: 64 }, options: { window: [5, 3] } },
      { name: 'Lk = 1, GQA 8', dims: { B: 1, Hq: 8, Hkv: 1, Lq: 9, Lk: 1, d: 64 } },
      { name: 'scale 0.3, bshd, GQA 2, causal', dims: { B: 2, Hq: 4, Hkv: 2, Lq: 33, Lk: 50, d: 64 }, options: { scale: 0.3, layout: 'bshd', causal: true } },
    ],
  },
  { name: 'd = 8', cases: [{ name: 'window [−1, 4], GQA 2', dims: { B: 1, Hq: 2, Hkv: 1, Lq: 33, Lk: 65, d: 8 }, options: { window: [-1, 4] } }] },
  { name: 'd = 128', cases: [{ name: 'causal, Lq < Lk', dims: { B: 1, Hq: 1, Hkv: 1, Lq: 40, Lk: 50, d: 128 }, options: { causal: true } }] },
  {
    name: 'd = 80, element masks',
    cases: [
      {
        name: 'additive mask over keys, broadcast from [Lk]',
        dims: { B: 1, Hq: 2, Hkv: 1, Lq: 20, Lk: 45, d: 80 },
        options: { mask: { kind: 'additive', data: Float32Array.from(values(45, 9), (x, j) => (j % 7 === 0 ? Number.NEGATIVE_INFINITY : x)), shape: [45] } },
      },
      {
        name: 'boolean mask [B, 1, Lq, Lk] with an empty row, causal',
        dims: { B: 2, Hq: 2, Hkv: 2, Lq: 12, Lk: 30, d: 80 },
        options: { causal: true, mask: { kind: 'bool', data: boolMask(2 * 12 * 30, 4).map((x, e) => (Math.floor(e / 30) % 12 === 5 ? 0 : x)), shape: [2, 1, 12, 30] } },
      },
    ],
  },
  {
    name: 'd = 64, block masks',
    cases: [
      {
        name: 'blocks of 16 × 16 with an empty row of blocks',
        dims: { B: 1, Hq: 2, Hkv: 2, Lq: 70, Lk: 100, d: 64 },
        options: { blockMask: { rows: 16, keys: 16, data: Uint8Array.from({ length: 5 * 7 }, (_, e) => (Math.floor(e / 7) === 2 ? 0 : (e * 5) % 3 === 0 ? 1 : 0)), shape: [5, 7] } },
      },
    ],
  },
];

describe.each(GROUPS)('attention-fp32: $name', ({ cases }) => {
  it.for(cases)('$name', { timeout: 600_000 }, async ({ dims, options }, context) => {
    if (!gpu) {
      context.skip(`no GPU: ${missing}`);
      return;
    }
    const { q, k, v } = tensors(dims, 17);
    const problem = sdpaProblem(dims, options);
    const exact = sdpaOracle(problem, q, k, v);
    const plain = sdpaFloat32(problem, q, k, v);
    const prepared = await prepareAttention(gpu, dims, { ...options, lse: true });
    const { out, lse } = await prepared.run(q, k, v);
    prepared.destroy();
    const error = maxAbs(out, exact.out);
    const limit = Math.max(2 * maxAbs(plain.out, exact.out), 1e-6);
    expect(error, `max error ${error} against the plain float32 computation's limit ${limit}`).toBeLessThanOrEqual(limit);
    expect(maxAbs(lse ?? [], exact.lse)).toBeLessThanOrEqual(Math.max(2 * maxAbs(plain.lse, exact.lse), 1e-5));
  });
});

describe('attention-fp32 with f16 tensors', () => {
  it('stays within 2× the error of the plain f16 computation (GQA 2, causal, Lq < Lk)', { timeout: 600_000 }, async (context) => {
    if (!gpu) {
      context.skip(`no GPU: ${missing}`);
      return;
    }
    if (!gpu.device.features.has('shader-f16')) {
      context.skip('the GPU lacks shader-f16');
      return;
    }
    const dims = { B: 1, Hq: 4, Hkv: 2, Lq: 30, Lk: 70, d: 64 };
    const halves = tensors(dims, 23);
    const [q, k, v] = [halves.q, halves.k, halves.v].map((x) => floatsToHalves(x)) as [Uint16Array, Uint16Array, Uint16Array];
    const [qf, kf, vf] = [q, k, v].map((x) => halvesToFloats(x)) as [Float32Array, Float32Array, Float32Array];
    const problem = sdpaProblem(dims, { causal: true });
    const exact = sdpaOracle(problem, qf, kf, vf);
    const prepared = await prepareAttention(gpu, dims, { causal: true, dtype: 'f16' });
    const { out } = await prepared.run(q, k, v);
    prepared.destroy();
    const error = maxAbs(halvesToFloats(out as Uint16Array), exact.out);
    expect(error).toBeLessThanOrEqual(2 * maxAbs(sdpaFloat16Plain(problem, qf, kf, vf), exact.out));
  });
});

describe('attention()', () => {
  const dims = { B: 1, Hq: 2, Hkv: 1, Lq: 9, Lk: 13, d: 12 };
  const { q, k, v } = tensors(dims, 3);
  const shapeQ = [1, 2, 9, 12];
  const shapeKV = [1, 1, 13, 12];

  it('computes on the CPU without a GPU, with the oracle\'s semantics', async () => {
    const result = await attention({ data: q, shape: shapeQ }, { data: k, shape: shapeKV }, { data: v, shape: shapeKV }, { causal: true, returnLse: true });
    const exact = sdpaOracle(sdpaProblem(dims, { causal: true }), q, k, v);
    expect(result.impl).toBe('cpu-fp32');
    expect(maxAbs(result.out.data, exact.out)).toBeLessThan(1e-5);
    expect(maxAbs(result.lse ?? [], exact.lse)).toBeLessThan(1e-5);
  });

  it('takes f16 tensors as their bits and returns f16', async () => {
    const half = (x: Float32Array): Uint16Array => Uint16Array.from(x, (_, e) => 0x3c00 + (e % 64)); // values 1 … 1.06
    const result = await attention({ data: half(q), shape: shapeQ }, { data: half(k), shape: shapeKV }, { data: half(v), shape: shapeKV });
    expect(result.out.data).toBeInstanceOf(Uint16Array);
    expect(result.out.shape).toEqual(shapeQ);
  });

  it('refuses shapes that do not fit, in one line', () => {
    expect(() => sdpaProblem({ ...dims, Hkv: 3, Hq: 4 })).toThrow(/4 query heads are not a multiple of 3 key\/value heads/);
    expect(() => dimsOf({ data: q, shape: shapeQ }, { data: k, shape: [1, 1, 13, 11] }, { data: v, shape: shapeKV })).toThrow(SdpaArgumentError);
    expect(() => dimsOf({ data: q, shape: [2, 9, 12] }, { data: k, shape: shapeKV }, { data: v, shape: shapeKV })).toThrow(/q has 3 dimensions; give 4/);
  });
});
