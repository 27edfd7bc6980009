/**
 * The scaled-dot-product attention oracle against a direct formula written independently of @fa/core's problem.ts
 * (its own band, broadcasting and layout arithmetic, exp without max-subtraction on small values), the float32 and f16
 * computations against the oracle, and the arguments sdpaProblem refuses.
 */
import { describe, expect, it } from 'vitest';
import { sdpaProblem, SdpaArgumentError, type SdpaDims, type SdpaLayout, type SdpaOptions } from '@fa/core';
import { generateInput } from '@fa/io';
import { attentionOracle, sdpaFloat16Plain, sdpaFloat32, sdpaOracle } from '../src/index.js';

/** Deterministic values in [−range, range). */
function values(count: number, seed: number, range = 1): Float32Array {
  let state = seed >>> 0;
  return Float32Array.from({ length: count }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state / 2 ** 32) * 2 * range - range;
  });
}

function tensors({ B, Hq, Hkv, Lq, Lk, d }: SdpaDims, seed: number, range = 1): { q: Float32Array; k: Float32Array; v: Float32Array } {
  return { q: values(B * Hq * Lq * d, seed, range), k: values(B * Hkv * Lk * d, seed + 1, range), v: values(B * Hkv * Lk * d, seed + 2, range) };
}

/** Element index of (b, h, l, x) in a [B, H, L, d] ('bhsd') or [B, L, H, d] ('bshd') tensor. */
function at(layout: SdpaLayout, H: number, L: number, d: number, b: number, h: number, l: number, x: number): number {
  return layout === 'bhsd' ? ((b * H + h) * L + l) * d + x : ((b * L + l) * H + h) * d + x;
}

/** Index into a row-major tensor of `shape` broadcast to four dimensions, at `coords` (trailing dimensions aligned). */
function broadcastIndex(shape: readonly number[], coords: readonly number[]): number {
  const offset = coords.length - shape.length;
  let index = 0;
  shape.forEach((size, axis) => {
    index = index * size + (size === 1 ? 0 : (coords[offset + axis] as number));
  });
  return index;
}

/**
 * Attention straight from its definition: Σ exp(s) v / (Σ exp(s) + exp(sink)) over the keys each query sees, s the
 * scaled product softcapped, less the ALiBi distance, plus the additive mask.
 */
function naive(dims: SdpaDims, options: SdpaOptions, q: Float32Array, k: Float32Array, v: Float32Array): { out: Float64Array; lse: Float64Array } {
  const { B, Hq, Hkv, Lq, Lk, d } = dims;
  const layout = options.layout ?? 'bhsd';
  const scale = options.scale ?? 1 / Math.sqrt(d);
  const [left, right] = options.window ?? [-1, -1];
  const out = new Float64Array(B * Hq * Lq * d);
  const lse = new Float64Array(B * Hq * Lq);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < Hq; h++) {
      const kvHead = Math.floor((h * Hkv) / Hq);
      for (let i = 0; i < Lq; i++) {
        let Z = 0;
        const sum = new Float64Array(d);
        for (let j = 0; j < Lk; j++) {
          const diagonal = i - Lq + Lk;
          if (left >= 0 && j < diagonal - left) continue;
          if (right >= 0 && j > diagonal + right) continue;
          if (options.causal === true && j > diagonal) continue;
          const bm = options.blockMask;
          if (bm && bm.data[broadcastIndex(bm.shape, [b, h, Math.floor(i / bm.rows), Math.floor(j / bm.keys)])] === 0) continue;
          let s = 0;
          for (let x = 0; x < d; x++) s += (q[at(layout, Hq, Lq, d, b, h, i, x)] as number) * (k[at(layout, Hkv, Lk, d, b, kvHead, j, x)] as number);
          s *= scale;
          if (options.softcap !== undefined) s = options.softcap * Math.tanh(s / options.softcap);
          if (options.alibiSlopes) s -= (options.alibiSlopes[h] as number) * Math.abs(diagonal - j);
          const mask = options.mask;
          if (mask) {
            const value = mask.data[broadcastIndex(mask.shape, [b, h, i, j])] as number;
            if (mask.kind === 'bool' && value === 0) continue;
            if (mask.kind === 'additive') s += value;
          }
          const w = Math.exp(s);
          Z += w;
          for (let x = 0; x < d; x++) sum[x] = (sum[x] as number) + w * (v[at(layout, Hkv, Lk, d, b, kvHead, j, x)] as number);
        }
        if (options.sinks) Z += Math.exp(options.sinks[h] as number);
        for (let x = 0; x < d; x++) out[at(layout, Hq, Lq, d, b, h, i, x)] = Z === 0 ? 0 : (sum[x] as number) / Z;
        lse[(b * Hq + h) * Lq + i] = Math.log(Z);
      }
    }
  }
  return { out, lse };
}

/** Largest |a − b|, counting equal values (±Infinity included) as 0 and a mismatched infinity as Infinity. */
function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let e = 0; e < a.length; e++) {
    const x = a[e] as number;
    const y = b[e] as number;
    if (x === y) continue;
    const diff = Math.abs(x - y);
    worst = Number.isNaN(diff) ? Number.POSITIVE_INFINITY : Math.max(worst, diff);
  }
  return worst;
}

interface Case {
  name: string;
  dims: SdpaDims;
  options?: Omit<SdpaOptions, 'layout'>;
  /** The number of query rows (over every batch and head) that see no key. */
  emptyRows?: number;
}

const dims = (B: number, Hq: number, Hkv: number, Lq: number, Lk: number, d: number): SdpaDims => ({ B, Hq, Hkv, Lq, Lk, d });
const flags = (count: number, keep: (e: number) => boolean): Uint8Array => Uint8Array.from({ length: count }, (_, e) => (keep(e) ? 1 : 0));
/** Additive values in [−2, 2) with every fifth −Infinity. */
const additive = (count: number, seed: number): Float32Array => values(count, seed, 2).map((x, e) => (e % 5 === 3 ? Number.NEGATIVE_INFINITY : x));

/** Slopes or sink logits for `count` query heads. */
const perHead = (count: number, seed: number, range: number): Float32Array => values(count, seed, range);

const CASES: Case[] = [
  { name: 'GQA, 4 query heads per KV head', dims: dims(2, 8, 2, 5, 7, 8) },
  { name: 'one query head per KV head', dims: dims(2, 3, 3, 6, 6, 4) },
  { name: 'one KV head for every query head, a scale', dims: dims(1, 4, 1, 5, 5, 8), options: { scale: 0.7 } },
  { name: 'Lq < Lk, causal (bottom-right)', dims: dims(1, 2, 1, 3, 9, 4), options: { causal: true } },
  { name: 'Lq > Lk, causal: the first Lq − Lk rows see nothing', dims: dims(2, 2, 1, 9, 4, 4), options: { causal: true }, emptyRows: 2 * 2 * 5 },
  { name: 'window [2, 1]', dims: dims(1, 2, 2, 8, 8, 4), options: { window: [2, 1] } },
  { name: 'window [−1, 2], Lq < Lk', dims: dims(1, 2, 1, 5, 8, 4), options: { window: [-1, 2] } },
  { name: 'window [0, −1], Lq > Lk', dims: dims(1, 1, 1, 10, 4, 4), options: { window: [0, -1] }, emptyRows: 0 },
  { name: 'window [1, 0], Lq > Lk: the first Lq − Lk rows see nothing', dims: dims(1, 1, 1, 7, 3, 4), options: { window: [1, 0] }, emptyRows: 4 },
  { name: 'causal with window [2, −1]', dims: dims(1, 2, 1, 6, 6, 4), options: { causal: true, window: [2, -1] } },
  { name: 'bool mask [Lk]', dims: dims(2, 2, 1, 4, 6, 4), options: { mask: { kind: 'bool', data: flags(6, (e) => e !== 2), shape: [6] } } },
  { name: 'bool mask [1, Hq, 1, Lk]', dims: dims(1, 4, 2, 5, 6, 4), options: { mask: { kind: 'bool', data: flags(24, (e) => e % 3 !== 0), shape: [1, 4, 1, 6] } } },
  {
    name: 'bool mask [B, 1, Lq, Lk] with a row all false, causal',
    dims: dims(2, 2, 2, 4, 5, 4),
    options: { causal: true, mask: { kind: 'bool', data: flags(40, (e) => e >= 5 && e % 4 !== 1), shape: [2, 1, 4, 5] } },
    emptyRows: 2,
  },
  { name: 'additive mask [Lk]', dims: dims(1, 2, 1, 4, 7, 4), options: { mask: { kind: 'additive', data: additive(7, 5), shape: [7] } } },
  { name: 'additive mask [1, Hq, 1, Lk]', dims: dims(2, 2, 1, 3, 5, 4), options: { mask: { kind: 'additive', data: additive(10, 6), shape: [1, 2, 1, 5] } } },
  { name: 'additive mask [B, 1, Lq, Lk], windowed', dims: dims(2, 3, 1, 4, 6, 4), options: { window: [3, 1], mask: { kind: 'additive', data: additive(48, 7), shape: [2, 1, 4, 6] } } },
  {
    name: 'block mask 2 × 3 with an empty row of blocks',
    dims: dims(1, 2, 1, 7, 8, 4),
    options: { blockMask: { rows: 2, keys: 3, data: flags(12, (e) => Math.floor(e / 3) !== 1 && e % 2 === 0), shape: [4, 3] } },
    emptyRows: 2 * 2,
  },
  {
    name: 'block mask [B, 1, ·, ·] with a bool mask, causal',
    dims: dims(2, 2, 2, 6, 6, 4),
    options: {
      causal: true,
      blockMask: { rows: 4, keys: 2, data: flags(12, (e) => e !== 0 && e !== 4), shape: [2, 1, 2, 3] },
      mask: { kind: 'bool', data: flags(6, (e) => e !== 5), shape: [6] },
    },
  },
  { name: 'softcap 0.3, GQA', dims: dims(2, 4, 2, 5, 7, 8), options: { softcap: 0.3 } },
  { name: 'ALiBi slopes (some negative), Lq < Lk, causal', dims: dims(1, 4, 2, 3, 9, 4), options: { causal: true, alibiSlopes: perHead(4, 8, 0.5) } },
  { name: 'sinks, Lq > Lk, causal: rows that see nothing give 0 and log-sum-exp the sink', dims: dims(2, 2, 1, 9, 4, 4), options: { causal: true, sinks: perHead(2, 9, 3) }, emptyRows: 0 },
  {
    name: 'softcap, ALiBi and sinks with an additive mask, windowed',
    dims: dims(2, 3, 1, 4, 6, 4),
    options: { window: [3, 1], softcap: 1.5, alibiSlopes: perHead(3, 10, 1), sinks: perHead(3, 12, 2), mask: { kind: 'additive', data: additive(48, 7), shape: [2, 1, 4, 6] } },
  },
];

describe.each(['bhsd', 'bshd'] as const)('sdpaOracle in layout %s', (layout) => {
  it.for(CASES)('matches the direct formula: $name', ({ dims: caseDims, options = {}, emptyRows }, { expect }) => {
    const { q, k, v } = tensors(caseDims, 11);
    const all = { ...options, layout };
    const expected = naive(caseDims, all, q, k, v);
    const { out, lse } = sdpaOracle(sdpaProblem(caseDims, all), q, k, v);
    expect(maxDiff(out, expected.out)).toBeLessThan(1e-12);
    expect(maxDiff(lse, expected.lse)).toBeLessThan(1e-12);
    if (emptyRows !== undefined) {
      const empty = [...lse.keys()].filter((r) => lse[r] === Number.NEGATIVE_INFINITY);
      expect(empty.length).toBe(emptyRows);
    }
  });
});

describe('sdpaOracle', () => {
  it('gives 0 and log-sum-exp −Infinity for rows that see no key (Lq > Lk, causal)', () => {
    const caseDims = dims(1, 1, 1, 6, 2, 3);
    const { q, k, v } = tensors(caseDims, 2);
    const { out, lse } = sdpaOracle(sdpaProblem(caseDims, { causal: true }), q, k, v);
    expect([...lse.subarray(0, 4)]).toEqual([-Infinity, -Infinity, -Infinity, -Infinity]);
    expect([...out.subarray(0, 12)].every((x) => x === 0)).toBe(true);
    expect(Number.isFinite(lse[4])).toBe(true);
    // row 4 sees key 0 only: its output is v_0 exactly
    expect([...out.subarray(12, 15)]).toEqual([...v.subarray(0, 3)]);
  });

  it('equals the hw4 attentionOracle for one head, Lq = Lk and no mask', () => {
    const shape = { B: 2, N: 16, d: 8 };
    const input = generateInput({ shape, seed: 9 });
    const size = shape.N * shape.d;
    const part = (m: number): Float32Array => Float32Array.from({ length: shape.B * size }, (_, e) => input[(Math.floor(e / size) * 3 + m) * size + (e % size)] as number);
    const problem = sdpaProblem(dims(2, 1, 1, 16, 16, 8));
    expect(sdpaOracle(problem, part(0), part(1), part(2)).out).toEqual(attentionOracle(input, shape));
  });

  it('refuses q, k or v of the wrong length in one line', () => {
    const problem = sdpaProblem(dims(1, 2, 1, 3, 4, 2));
    const { q, k, v } = tensors(problem.dims, 1);
    expect(() => sdpaOracle(problem, q.subarray(1), k, v)).toThrow(/^q holds 11 values but the problem needs 12$/);
    expect(() => sdpaFloat32(problem, q, k, v.subarray(1))).toThrow(SdpaArgumentError);
  });
});

describe('sdpaFloat32', () => {
  const cases: Case[] = [
    { name: 'GQA, Lq ≠ Lk', dims: dims(2, 4, 2, 33, 47, 32) },
    { name: 'causal, Lq > Lk', dims: dims(1, 3, 1, 40, 24, 16), options: { causal: true } },
    { name: 'softcap, ALiBi and sinks, causal, Lq > Lk', dims: dims(1, 3, 1, 40, 24, 16), options: { causal: true, softcap: 2, alibiSlopes: perHead(3, 5, 0.3), sinks: perHead(3, 6, 2) } },
    { name: 'window and an additive mask', dims: dims(1, 2, 2, 30, 30, 64), options: { window: [5, 3], mask: { kind: 'additive', data: additive(30, 3), shape: [30] } } },
    {
      name: 'block mask and a bool mask',
      dims: dims(2, 2, 1, 25, 31, 8),
      options: {
        blockMask: { rows: 8, keys: 8, data: flags(16, (e) => e !== 5 && e < 12), shape: [4, 4] },
        mask: { kind: 'bool', data: flags(31, (e) => e % 4 !== 0), shape: [31] },
      },
    },
  ];

  describe.each(['bhsd', 'bshd'] as const)('layout %s', (layout) => {
    it.for(cases)('is within 1e-5 of the oracle: $name', ({ dims: caseDims, options = {} }, { expect }) => {
      const { q, k, v } = tensors(caseDims, 21, 2);
      const problem = sdpaProblem(caseDims, { ...options, layout });
      const exact = sdpaOracle(problem, q, k, v);
      const plain = sdpaFloat32(problem, q, k, v);
      expect(maxDiff(plain.out, exact.out)).toBeLessThan(1e-5);
      expect(maxDiff(plain.lse, exact.lse)).toBeLessThan(1e-5);
    });
  });
});

describe('sdpaFloat16Plain', () => {
  it('is near the oracle, but not equal to it, in either layout', () => {
    for (const layout of ['bhsd', 'bshd'] as const) {
      const caseDims = dims(1, 4, 2, 20, 28, 16);
      const { q, k, v } = tensors(caseDims, 4, 2);
      const problem = sdpaProblem(caseDims, { layout, causal: true, mask: { kind: 'additive', data: additive(28, 8), shape: [28] } });
      const error = maxDiff(sdpaFloat16Plain(problem, q, k, v).out, sdpaOracle(problem, q, k, v).out);
      expect(error).toBeGreaterThan(1e-6);
      expect(error).toBeLessThan(5e-3);
    }
  });

  it('gives v rounded to f16 where a row sees one key, and 0 where it sees none', () => {
    const caseDims = dims(1, 1, 1, 3, 2, 2);
    const v = Float32Array.of(1 / 3, 2 / 3, 0.1, 0.2);
    const { out } = sdpaFloat16Plain(sdpaProblem(caseDims, { causal: true }), new Float32Array(6), Float32Array.of(1, 2, 3, 4), v);
    expect([...out.subarray(0, 2)]).toEqual([0, 0]);
    expect([...out.subarray(2, 4)]).toEqual([0.333251953125, 0.66650390625]);
  });
});

describe('sdpaProblem refuses, in one line', () => {
  const base = dims(2, 4, 2, 3, 5, 8);
  const refused = (what: string, d: SdpaDims, options: SdpaOptions, message: RegExp): { what: string; d: SdpaDims; options: SdpaOptions; message: RegExp } => ({ what, d, options, message });
  it.for([
    refused('Hq not a multiple of Hkv', dims(1, 6, 4, 3, 5, 8), {}, /^6 query heads are not a multiple of 4 key\/value heads; give Hq = g·Hkv$/),
    refused('a mask that does not broadcast', base, { mask: { kind: 'bool', data: new Uint8Array(4), shape: [4] } }, /^the mask of shape \[4\] does not broadcast to \[2, 4, 3, 5\]/),
    refused('a mask head count that does not broadcast', base, { mask: { kind: 'bool', data: new Uint8Array(10), shape: [2, 5] } }, /does not broadcast/),
    refused('a mask of the wrong length', base, { mask: { kind: 'additive', data: new Float32Array(6), shape: [1, 5] } }, /^the mask holds 6 values but its shape \[1, 5\] needs 5$/),
    refused('a block mask of the wrong length', base, { blockMask: { rows: 2, keys: 2, data: new Uint8Array(5), shape: [2, 3] } }, /^the block mask holds 5 flags/),
    refused('a window below −1', base, { window: [-2, 0] }, /^window \[-2, 0\] is not two integers ≥ −1/),
    refused('a window that is not an integer', base, { window: [1, 0.5] }, /^window \[1, 0.5\] is not two integers ≥ −1/),
    refused('an additive mask with NaN', base, { mask: { kind: 'additive', data: Float32Array.of(0, Number.NaN, 0, 0, 0), shape: [5] } }, /NaN or \+Infinity/),
    refused('sinks for another number of query heads', base, { sinks: new Float32Array(2) }, /^sinks holds 2 values but there are 4 query heads \(Hq\); give one per query head$/),
    refused('an ALiBi slope of Infinity', base, { alibiSlopes: Float32Array.of(0.5, 0.25, Number.POSITIVE_INFINITY, 0) }, /^alibiSlopes\[2\] is Infinity; give finite slopes$/),
    refused('a softcap of 0', base, { softcap: 0 }, /^softcap is 0; give a positive finite number c \(scores become c·tanh\(s\/c\)\), or leave it out$/),
  ])('$what', ({ d, options, message }) => {
    let error: unknown;
    try {
      sdpaProblem(d, options);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SdpaArgumentError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });
});
