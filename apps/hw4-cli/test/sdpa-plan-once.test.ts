/**
 * `hw4-cli sdpa` plans once per problem and hands the plan down: a run on files validates the problem once and plans
 * its kernel once (in the command, with planAttention; attention() then runs that plan), and --conformance plans each
 * case once for each kernel and dtype. Counted on the functions that do the work: @fa/core's sdpaProblem validates a
 * problem; @fa/sdpa's fp32Plan, decodePlan and matrixPlan plan a kernel. They are wrapped where they are defined, so
 * every caller inside the library goes through the count.
 *
 * In this process, on a stand-in GPU: an H100-like adapter (as in @fa/sdpa's kernel-snapshots.test.ts) whose device
 * records nothing and reads back zeros, and kernels that encode nothing in place of compiled ones. No shader is
 * compiled, so the results are zeros: these tests count, the others check values.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { sdpaProblem, type SdpaDims } from '@fa/core';
import { encodeNpy } from '@fa/io';
import { attention, planAttention, SDPA_CASE_GROUPS } from '@fa/sdpa';
import { decodePlan, prepareDecodeKernel } from '../../../packages/sdpa/src/decode/attention-decode.js';
import { fp32Plan } from '../../../packages/sdpa/src/fp32/attention-fp32.js';
import { matrixPlan } from '../../../packages/sdpa/src/matrix/attention-matrix.js';
import { prepareTiledKernel } from '../../../packages/sdpa/src/tiled-host.js';
import { sdpaCommand } from '../src/commands/sdpa.js';
import { UsageError } from '../src/exit-codes.js';
import { tempFolder } from './cli-helpers.js';

const stand = vi.hoisted(() => {
  /** A buffer that holds nothing and maps to zeros. */
  const buffer = (size: number): unknown => ({
    size,
    destroy: () => undefined,
    mapAsync: () => Promise.resolve(),
    getMappedRange: (offset = 0, length = size - offset) => new ArrayBuffer(length),
    unmap: () => undefined,
  });
  const gpu = {
    device: {
      features: new Set(['subgroups', 'shader-f16', 'timestamp-query', 'chromium-experimental-subgroup-matrix']),
      limits: { minStorageBufferOffsetAlignment: 256 },
      createBuffer: ({ size }: { size: number }) => buffer(size),
      queue: { writeBuffer: () => undefined, submit: () => undefined },
      createCommandEncoder: () => ({ copyBufferToBuffer: () => undefined, finish: () => ({}) }),
      createShaderModule: () => ({ getCompilationInfo: () => Promise.resolve({ messages: [] }) }),
      pushErrorScope: () => undefined,
      popErrorScope: () => Promise.resolve(null),
    },
    adapter: { info: { subgroupMatrixConfigs: [{ componentType: 'f16', resultComponentType: 'f32', M: 16, N: 16, K: 16 }] } },
    report: {
      description: 'an H100-like stand-in',
      boundsChecks: false,
      subgroupMinSize: 32,
      subgroupMaxSize: 32,
      limits: { maxComputeWorkgroupStorageSize: 49152, maxStorageBufferBindingSize: 2147483644, maxBufferSize: 2 ** 40 },
    },
    lost: new Promise(() => undefined),
  };
  /** A kernel that encodes nothing, in place of a compiled one. */
  const kernel = (plan: unknown): Promise<unknown> => Promise.resolve({ plan, encode: () => undefined, destroy: () => undefined, dispose: () => undefined });
  return { gpu, kernel };
});

vi.mock('../src/env.js', () => ({ makeEnv: vi.fn(() => Promise.resolve({ threads: 1, gpu: stand.gpu })) }));
vi.mock('@fa/core', async (importOriginal) => {
  const actual = await importOriginal<typeof import('@fa/core')>();
  return { ...actual, sdpaProblem: vi.fn(actual.sdpaProblem) };
});
vi.mock('@fa/sdpa', async (importOriginal) => {
  const actual = await importOriginal<typeof import('@fa/sdpa')>();
  return { ...actual, planAttention: vi.fn(actual.planAttention), attention: vi.fn(actual.attention) };
});
vi.mock('../../../packages/sdpa/src/fp32/attention-fp32.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../packages/sdpa/src/fp32/attention-fp32.js')>();
  return { ...actual, fp32Plan: vi.fn(actual.fp32Plan) };
});
vi.mock('../../../packages/sdpa/src/matrix/attention-matrix.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../packages/sdpa/src/matrix/attention-matrix.js')>();
  return { ...actual, matrixPlan: vi.fn(actual.matrixPlan) };
});
// The stand-in GPU runs no shader: score and mask functions evaluate to the identity and to every key visible.
vi.mock('../../../packages/sdpa/src/mods/mod-host.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../packages/sdpa/src/mods/mod-host.js')>();
  const evaluateMods = vi.fn((_gpu: unknown, problem: { dims: { B: number; Hq: number; Lq: number; Lk: number } }) => {
    const { B, Hq, Lq, Lk } = problem.dims;
    return Promise.resolve({ scores: new Float32Array(B * Hq * Lq * Lk), visible: new Uint8Array(B * Hq * Lq * Lk).fill(1) });
  });
  return { ...actual, evaluateMods };
});
vi.mock('../../../packages/sdpa/src/decode/attention-decode.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../packages/sdpa/src/decode/attention-decode.js')>();
  return { ...actual, decodePlan: vi.fn(actual.decodePlan), prepareDecodeKernel: vi.fn((_gpu: unknown, _problem: unknown, plan: unknown) => stand.kernel(plan)) };
});
vi.mock('../../../packages/sdpa/src/tiled-host.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../packages/sdpa/src/tiled-host.js')>();
  return { ...actual, prepareTiledKernel: vi.fn((_gpu: unknown, _problem: unknown, plan: unknown) => stand.kernel(plan)) };
});
vi.mock('../../../packages/sdpa/src/cache/append-cache.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../packages/sdpa/src/cache/append-cache.js')>();
  return { ...actual, prepareCacheAppend: vi.fn(() => stand.kernel(undefined)) };
});

/** The calls of each counted function since the test began. */
const counts = (): Record<string, number> => ({
  validations: vi.mocked(sdpaProblem).mock.calls.length,
  fp32Plan: vi.mocked(fp32Plan).mock.calls.length,
  decodePlan: vi.mocked(decodePlan).mock.calls.length,
  matrixPlan: vi.mocked(matrixPlan).mock.calls.length,
  compiled: vi.mocked(prepareTiledKernel).mock.calls.length + vi.mocked(prepareDecodeKernel).mock.calls.length,
});

const dir = tempFolder();

/** Q, K and V files of `dims` (bhsd, float32), small values. */
function files(name: string, { B, Hq, Hkv, Lq, Lk, d }: SdpaDims): [string, string, string] {
  const write = (tensor: string, shape: number[]): string => {
    const path = join(dir, `${name}-${tensor}.npy`);
    writeFileSync(path, encodeNpy(shape, Float32Array.from({ length: shape.reduce((a, n) => a * n, 1) }, (_, i) => Math.sin(i) / 2)));
    return path;
  };
  return [write('q', [B, Hq, Lq, d]), write('k', [B, Hkv, Lk, d]), write('v', [B, Hkv, Lk, d])];
}

let stdout: MockInstance<typeof process.stdout.write>;
beforeAll(() => {
  vi.stubGlobal('GPUBufferUsage', { MAP_READ: 1, MAP_WRITE: 2, COPY_SRC: 4, COPY_DST: 8, INDEX: 16, VERTEX: 32, UNIFORM: 64, STORAGE: 128, INDIRECT: 256, QUERY_RESOLVE: 512 });
  vi.stubGlobal('GPUMapMode', { READ: 1, WRITE: 2 });
  return () => vi.unstubAllGlobals();
});
beforeEach(() => {
  vi.clearAllMocks();
  stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('hw4-cli sdpa on files: one validation and one plan per run, handed down', () => {
  const prefill: SdpaDims = { B: 1, Hq: 4, Hkv: 2, Lq: 24, Lk: 40, d: 16 };

  it('the default kernel: planned once in the command, and attention() runs that plan', async () => {
    const [q, k, v] = files('prefill', prefill);
    expect(await sdpaCommand([q, k, v, join(dir, 'out.npy'), '--causal', '--lse', join(dir, 'lse.npy')])).toBe(0);
    expect(counts()).toEqual({ validations: 1, fp32Plan: 1, decodePlan: 0, matrixPlan: 0, compiled: 1 });
    expect(vi.mocked(planAttention)).toHaveBeenCalledTimes(1);
    const plan = vi.mocked(planAttention).mock.results[0]?.value as unknown;
    expect(vi.mocked(attention)).toHaveBeenCalledTimes(1);
    expect(vi.mocked(attention).mock.calls[0]?.[3]).toEqual({ plan });
    expect(vi.mocked(prepareTiledKernel).mock.calls[0]?.[2]).toBe(vi.mocked(fp32Plan).mock.results[0]?.value);
  });

  it('a kernel named with --impl: planned once, the same', async () => {
    const [q, k, v] = files('named', prefill);
    expect(await sdpaCommand([q, k, v, join(dir, 'named-out.npy'), '--impl', 'attention-matrix'])).toBe(0);
    expect(counts()).toEqual({ validations: 1, fp32Plan: 0, decodePlan: 0, matrixPlan: 1, compiled: 1 });
  });

  it('a decode step: one validation, one decode plan', async () => {
    const [q, k, v] = files('decode', { ...prefill, Lq: 1 });
    expect(await sdpaCommand([q, k, v, join(dir, 'decode-out.npy')])).toBe(0);
    expect(counts()).toEqual({ validations: 1, fp32Plan: 0, decodePlan: 1, matrixPlan: 0, compiled: 1 });
  });

  it('a named kernel that cannot run the problem: refused after one validation and one plan, nothing compiled', async () => {
    const [q, k, v] = files('declined', { ...prefill, d: 8 });
    const run = sdpaCommand([q, k, v, join(dir, 'declined-out.npy'), '--impl', 'attention-matrix']);
    await expect(run).rejects.toThrow(UsageError);
    await expect(run).rejects.toThrow(/^attention-matrix cannot run this problem here: d = 8 is not a multiple of 16/);
    expect(counts()).toEqual({ validations: 1, fp32Plan: 0, decodePlan: 0, matrixPlan: 1, compiled: 0 });
  });
});

describe('hw4-cli sdpa --conformance: each case planned once per kernel and dtype, and checked on that plan', () => {
  it('--impl attention-fp32 --dtype f32: one plan per case', async () => {
    const cases = SDPA_CASE_GROUPS.flatMap((group) => group.cases).length;
    await sdpaCommand(['--conformance', '--impl', 'attention-fp32', '--dtype', 'f32', '--json']);
    const written = stdout.mock.calls.map(([chunk]) => String(chunk)).join('');
    const { rows } = JSON.parse(written) as { rows: { declined?: string }[] };
    expect(rows).toHaveLength(cases);
    const declined = rows.filter((row) => row.declined !== undefined).length;
    expect(vi.mocked(planAttention)).toHaveBeenCalledTimes(cases);
    expect(counts()).toMatchObject({ fp32Plan: cases, decodePlan: 0, matrixPlan: 0, compiled: cases - declined });
  });
});
