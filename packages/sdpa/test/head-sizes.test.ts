/**
 * V's own head size (dv) and head sizes up to 256, without a GPU: the validation of dv, the shapes attention takes and
 * returns, the CPU path against the float64 oracle, and what each kernel's plan does with them on an H100-like adapter
 * and on one with 32 KiB of workgroup memory (the GPU runs are the conformance cases').
 */
import { describe, expect, it } from 'vitest';
import { sdpaProblem, SUBGROUP_MATRIX_FEATURE, type GpuContext, type SdpaDims } from '@fa/core';
import { sdpaOracle } from '@fa/reference';
import { decodePlan } from '../src/decode/attention-decode.js';
import { fp32Plan } from '../src/fp32/attention-fp32.js';
import { fragmentArray, fragmentStruct, matrixPlan, O_FRAGMENTS, Q_FRAGMENTS, S_FRAGMENTS } from '../src/matrix/attention-matrix.js';
import { attention, dimsOf, planAttention, SdpaArgumentError } from '../src/index.js';
import { maxAbs, tensors } from '../src/conformance.js';

/** What the plans read of a GPU, as kernel-snapshots.test.ts describes an H100; `workgroupBytes` its memory per workgroup. */
function gpuLike(workgroupBytes: number, subgroupSize = 32): GpuContext {
  return {
    device: { features: new Set(['subgroups', 'shader-f16', SUBGROUP_MATRIX_FEATURE]) },
    adapter: { info: { subgroupMatrixConfigs: [{ componentType: 'f16', resultComponentType: 'f32', M: 16, N: 16, K: 16 }] } },
    report: { subgroupMinSize: subgroupSize, subgroupMaxSize: subgroupSize, limits: { maxComputeWorkgroupStorageSize: workgroupBytes, maxStorageBufferBindingSize: 2 ** 31 - 4, maxBufferSize: 2 ** 40 } },
  } as unknown as GpuContext;
}
const H100_LIKE = gpuLike(49152);
const SOFTWARE_LIKE = gpuLike(32768, 8);

const PREFILL: SdpaDims = { B: 1, Hq: 16, Hkv: 8, Lq: 4096, Lk: 4096, d: 256 };
const MLA: SdpaDims = { B: 1, Hq: 16, Hkv: 16, Lq: 4096, Lk: 4096, d: 192, dv: 128 };

const refusal = (work: () => unknown): string => {
  try {
    work();
  } catch (error) {
    if (error instanceof SdpaArgumentError) return error.message;
    throw error;
  }
  return 'nothing refused';
};

describe('dv: validated in one line, and a problem with dv = d is the problem without it', () => {
  it.for([
    [0, 'dv is 0; give a positive integer (V\'s head size), or leave it out for dv = d'],
    [2.5, 'dv is 2.5; give a positive integer (V\'s head size), or leave it out for dv = d'],
    ['8', 'dv is "8"; give a positive integer (V\'s head size), or leave it out for dv = d'],
  ] as const)('dv %j', ([dv, message]) => {
    expect(refusal(() => sdpaProblem({ ...MLA, dv: dv as number }))).toBe(message);
  });
  it('keeps dv only where it differs from d', () => {
    expect(sdpaProblem({ ...MLA, dv: 192 }).dims).toEqual({ B: 1, Hq: 16, Hkv: 16, Lq: 4096, Lk: 4096, d: 192 });
    expect(sdpaProblem(MLA).dims.dv).toBe(128);
  });
  it('reads dv from v\'s last dimension, and refuses a v whose other dimensions are not k\'s', () => {
    const t = (shape: number[]): { data: Float32Array; shape: number[] } => ({ data: new Float32Array(shape.reduce((a, n) => a * n, 1)), shape });
    expect(dimsOf(t([1, 2, 3, 8]), t([1, 1, 5, 8]), t([1, 1, 5, 4]))).toEqual({ B: 1, Hq: 2, Hkv: 1, Lq: 3, Lk: 5, d: 8, dv: 4 });
    expect(dimsOf(t([1, 3, 2, 8]), t([1, 5, 1, 8]), t([1, 5, 1, 8]), 'bshd')).toEqual({ B: 1, Hq: 2, Hkv: 1, Lq: 3, Lk: 5, d: 8 });
    expect(refusal(() => dimsOf(t([1, 2, 3, 8]), t([1, 1, 5, 8]), t([1, 1, 6, 4])))).toBe('v has shape [1, 1, 6, 4] but k has [1, 1, 5, 8]; give v the shape of k but for its last dimension (V\'s head size)');
  });
});

describe('the CPU path with dv ≠ d', () => {
  it.for([
    ['bhsd', { B: 2, Hq: 4, Hkv: 2, Lq: 5, Lk: 7, d: 12, dv: 20 }],
    ['bshd', { B: 1, Hq: 2, Hkv: 1, Lq: 6, Lk: 9, d: 16, dv: 4 }],
  ] as const)('returns [B, Hq, Lq, dv] in %s, within float32 of the oracle, causal', async ([layout, dims]) => {
    const { q, k, v } = tensors(dims, 5);
    const shape = (L: number, H: number, d: number): number[] => (layout === 'bshd' ? [dims.B, L, H, d] : [dims.B, H, L, d]);
    const result = await attention({ data: q, shape: shape(dims.Lq, dims.Hq, dims.d) }, { data: k, shape: shape(dims.Lk, dims.Hkv, dims.d) }, { data: v, shape: shape(dims.Lk, dims.Hkv, dims.dv) }, { causal: true, layout, returnLse: true });
    const exact = sdpaOracle(sdpaProblem(dims, { causal: true, layout }), q, k, v);
    expect(result.impl).toBe('cpu-fp32');
    expect(result.out.shape).toEqual(shape(dims.Lq, dims.Hq, dims.dv));
    expect(maxAbs(result.out.data as Float32Array, exact.out)).toBeLessThan(1e-6);
    expect(maxAbs(result.lse ?? [], exact.lse)).toBeLessThan(1e-5);
  });
});

describe('which kernel takes d = 256 and dv ≠ d', () => {
  const planned = <T>(plan: T | string): T => {
    if (typeof plan === 'string') throw new Error(`the plan declined: ${plan}`);
    return plan;
  };
  it('attention-fp32: d = 256 in row groups of 8 with 16-key tiles on 48 KiB, 8-key tiles on 32 KiB', () => {
    const problem = sdpaProblem(PREFILL, { causal: true });
    expect(planned(fp32Plan(problem, H100_LIKE, false, 'f16')).constants).toMatchObject({ D: 256, H: 8, BC: 16, ROWS: 2 });
    const small = planned(fp32Plan(problem, SOFTWARE_LIKE, false));
    expect(small.constants).toMatchObject({ D: 256, H: 8, BC: 8 });
    expect(small.workgroupBytes).toBeLessThanOrEqual(32768);
  });
  it('attention-fp32: tuning.fp32Invocations sets WG (at least one row group), and declines other sizes', () => {
    const problem = sdpaProblem({ ...PREFILL, d: 64 }, { causal: true });
    const plain = planned(fp32Plan(problem, H100_LIKE, false));
    const wide = planned(fp32Plan(problem, H100_LIKE, false, 'f32', { fp32Invocations: 256 }));
    expect(wide.constants).toMatchObject({ ...plain.constants, WG: 256 });
    expect(wide.BR).toBe((plain.BR * 256) / (plain.constants.WG ?? 0));
    expect(fp32Plan(problem, H100_LIKE, false, 'f32', { fp32Invocations: 96 })).toBe('tuning.fp32Invocations is 96; give 32, 64, 128 or 256');
  });
  it('attention-fp32: DV only where dv ≠ d, its row group chosen for the wider head', () => {
    expect(planned(fp32Plan(sdpaProblem(MLA, { causal: true }), H100_LIKE, false)).constants).toMatchObject({ D: 192, DV: 128, H: 8 });
    expect(planned(fp32Plan(sdpaProblem({ ...MLA, d: 32, dv: 128 }), H100_LIKE, false)).constants).toMatchObject({ D: 32, DV: 128, H: 4 });
    expect(planned(fp32Plan(sdpaProblem({ ...MLA, dv: 192 }), H100_LIKE, false)).constants).not.toHaveProperty('DV');
  });
  it('each kernel that cannot declines in one line naming the head size', () => {
    expect(fp32Plan(sdpaProblem({ ...PREFILL, d: 260 }), H100_LIKE, false)).toBe('d = 260 is above this kernel\'s largest head size, 256');
    expect(fp32Plan(sdpaProblem({ ...MLA, dv: 130 }), H100_LIKE, false)).toBe('dv = 130 is not a multiple of 4');
    expect(decodePlan(sdpaProblem({ ...MLA, Lq: 1, dv: 512 }), H100_LIKE, false, 'f32')).toBe('dv = 512 is above this kernel\'s largest head size, 256');
    expect(matrixPlan(sdpaProblem(MLA), H100_LIKE, false, 'f16')).toBe('dv = 128 ≠ d = 192: a V head size of its own is attention-fp32\'s and attention-decode\'s');
    expect(matrixPlan(sdpaProblem(PREFILL), H100_LIKE, false, 'f32')).toBe('d = 256 with f32 tensors is above the matrix kernel\'s 128 for two f16 parts (f16 tensors run to 256)');
    expect(matrixPlan(sdpaProblem({ ...PREFILL, d: 272 }), H100_LIKE, false, 'f16')).toBe('d = 272 is above the matrix kernel\'s 256');
  });
  it('attention-matrix: f16 head sizes above 128 in teams of two subgroups per 16 rows where d is a multiple of 32', () => {
    const plan = planned(matrixPlan(sdpaProblem(PREFILL, { causal: true }), H100_LIKE, false, 'f16'));
    // Each subgroup holds half of d (8 fragments of Q and of O, as at d = 128): 4 teams of 2 (64 rows) in 40,464 bytes,
    // one workgroup in the H100-like 48 KiB: one K/V tile of 32 rows of 264 f16 (V in K's place), S for 8
    // subgroups and P̃ for 4 teams. On 32 KiB, 16-key tiles and 2 teams.
    expect(plan.constants).toMatchObject({ D: 256, BC: 32, PARTS: 1, NSG: 8, OW: 32, KV_TILES: 1, HALVES: 2 });
    expect(plan.BR).toBe(64);
    expect(plan.workgroupBytes).toBe(40464);
    expect(plan.summary).toContain('two per 16 rows, each with half of d');
    for (const set of [Q_FRAGMENTS, O_FRAGMENTS]) expect(plan.kernel.code).toContain(fragmentStruct(set, 8));
    expect(plan.kernel.code).toContain('const DK_MAX: u32 = 8u;');
    const small = planned(matrixPlan(sdpaProblem(PREFILL, { causal: true }), gpuLike(32768), false, 'f16'));
    expect(small.constants).toMatchObject({ D: 256, BC: 16, NSG: 4, HALVES: 2 });
    expect(small.BR).toBe(32);
    expect(small.workgroupBytes).toBeLessThanOrEqual(32768);
    for (const d of [160, 192, 224]) expect(planned(matrixPlan(sdpaProblem({ ...PREFILL, d }), H100_LIKE, false, 'f16')).constants).toMatchObject({ HALVES: 2, BC: 32, NSG: 8 });
    expect(matrixPlan(sdpaProblem(PREFILL), H100_LIKE, false, 'f16', { matrixHalves: 3 })).toBe('tuning.matrixHalves is 3; give 1 or 2');
    expect(matrixPlan(sdpaProblem({ ...PREFILL, d: 128 }), H100_LIKE, false, 'f32', { matrixHalves: 2 })).toBe('tuning.matrixHalves 2 takes f16 tensors and d a multiple of 32');
    expect(planned(matrixPlan(sdpaProblem({ ...PREFILL, d: 128 }), H100_LIKE, false, 'f16')).constants).not.toHaveProperty('HALVES');
  });
  it('attention-matrix: the wide-head variant above d = 128 where a subgroup holds all of d, in 16-key tiles', () => {
    // d = 240 is not a multiple of 32; d = 256 with one subgroup per 16 rows is tuning's (matrixHalves 1).
    for (const plan of [
      planned(matrixPlan(sdpaProblem({ ...PREFILL, d: 240 }, { causal: true }), H100_LIKE, false, 'f16')),
      planned(matrixPlan(sdpaProblem(PREFILL, { causal: true }), H100_LIKE, false, 'f16', { matrixHalves: 1 })),
    ]) {
      expect(plan.constants).toMatchObject({ BC: 16, PARTS: 1, NSG: 4, OW: 16, KV_TILES: 1 });
      expect(plan.constants).not.toHaveProperty('HALVES');
      expect(plan.kernel.code).toContain('const DK_MAX: u32 = 16u;');
      // The register fragments: in the kernel as written (d up to 128) Q's and O's 8 and S's 4 are members of structs
      // reached through a switch (arrays, indexed by a loop's counter, the H100's compiler kept in local memory); above
      // 128 O's are 16 members and Q's an array of 16.
      expect(plan.kernel.code).toContain(fragmentArray(Q_FRAGMENTS));
      expect(plan.kernel.code).toContain(fragmentStruct(O_FRAGMENTS, 16));
      for (const set of [Q_FRAGMENTS, O_FRAGMENTS]) expect(plan.kernel.code).not.toContain(fragmentStruct(set, 8));
      expect(plan.kernel.code).toContain(fragmentStruct(S_FRAGMENTS, 4));
    }
    // Four subgroups in 16,656 bytes at d = 256, two workgroups in the H100-like 48 KiB: one K/V tile of 16 rows of 264
    // f16 (V in K's place), Q staged through it 16 rows at a time, S and P̃. Two tiles side by side (25,104 bytes) fit one.
    expect(planned(matrixPlan(sdpaProblem(PREFILL, { causal: true }), H100_LIKE, false, 'f16', { matrixHalves: 1 })).workgroupBytes).toBe(16656);
    const twoTiles = planned(matrixPlan(sdpaProblem(PREFILL, { causal: true }), H100_LIKE, false, 'f16', { matrixHalves: 1, matrixKvTiles: 2 }));
    expect(twoTiles.workgroupBytes).toBe(25104);
    expect(twoTiles.constants).not.toHaveProperty('KV_TILES');
    const narrow = planned(matrixPlan(sdpaProblem({ ...PREFILL, d: 128 }, { causal: true }), H100_LIKE, false, 'f16'));
    for (const set of [Q_FRAGMENTS, O_FRAGMENTS]) expect(narrow.kernel.code).toContain(fragmentStruct(set, 8));
    expect(narrow.kernel.code).toContain(fragmentStruct(S_FRAGMENTS, 4));
    expect(narrow.kernel.code).not.toMatch(/var \w+: array<[LA],/);
    for (const d of [144, 160, 176, 192, 208, 224, 240]) expect(typeof matrixPlan(sdpaProblem({ ...PREFILL, d }), H100_LIKE, false, 'f16')).toBe('object');
  });
  it('the default: f16 prefills of d = 256 on attention-matrix, of dv ≠ d on attention-fp32, decode rows on attention-decode', () => {
    expect(planned(planAttention(H100_LIKE, PREFILL, { causal: true, dtype: 'f16' })).kernel).toBe('attention-matrix');
    expect(planned(planAttention(H100_LIKE, MLA, { causal: true, dtype: 'f16' })).kernel).toBe('attention-fp32');
    const decode = planned(planAttention(H100_LIKE, { ...MLA, Lq: 1, Hkv: 1 }, { dtype: 'f16' }));
    expect(decode.kernel).toBe('attention-decode');
    expect(decode.kernelPlan.constants).toMatchObject({ D: 192, DV: 128, R: 16 });
    expect(planned(planAttention(H100_LIKE, { ...PREFILL, Lq: 1 }, { dtype: 'f16' })).kernel).toBe('attention-decode');
  });
});
