/**
 * attention-decode's two key loops: which one the plan takes. The lane loop (attention-decode-lanes.wgsl) for f32 and
 * f16 tensors where it holds the rows, the tile loop for what the lane loop declines; the numbers are checked by the
 * conformance cases on the GPU (attention.test.ts), which run the plan's loop.
 */
import { describe, expect, it } from 'vitest';
import { sdpaProblem, type GpuContext, type SdpaDims } from '@fa/core';
import { decodeKernelSource, decodePlan, type DecodePlan } from '../src/decode/attention-decode.js';
import { H100_LIKE } from './h100-like.js';

const LLAMA3_DECODE: SdpaDims = { B: 1, Hq: 32, Hkv: 8, Lq: 1, Lk: 32768, d: 128 };

function planned(plan: DecodePlan | string): DecodePlan {
  if (typeof plan === 'string') throw new Error(`the plan declined: ${plan}`);
  return plan;
}

/** The H100-like adapter with other subgroups. */
function withSubgroups(features: string[], size: number): GpuContext {
  return { ...H100_LIKE, device: { features: new Set(features) }, report: { ...H100_LIKE.report, subgroupMinSize: size, subgroupMaxSize: size } } as unknown as GpuContext;
}

describe('attention-decode: the key loop', () => {
  it.each([['f32', 2], ['f16', 4]] as const)('%s tensors take the lane loop: clusters of 8 lanes, %i keys a step, loads a step ahead, 256 workgroups aimed for', (dtype, KB) => {
    const plan = planned(decodePlan(sdpaProblem(LLAMA3_DECODE), H100_LIKE, false, dtype));
    expect(plan.loop).toBe('lanes');
    expect(plan.constants).toMatchObject({ R: 4, CL: 8, KB, BK: 16 * KB, WG: 128, PREFETCH: 1, SCATTER: 1 });
    expect(plan.targetWorkgroups).toBe(256);
    expect(decodeKernelSource(plan).code).toMatch(/^enable subgroups;\n/);
    expect(decodeKernelSource(plan).code).toContain('fn lanes(');
  });
  it('f16 tensors take 4 keys a step only where the step\'s scores are summed by halves (an even number of rows)', () => {
    const keys = (dims: Partial<SdpaDims>): number | undefined => planned(decodePlan(sdpaProblem({ ...LLAMA3_DECODE, ...dims }), H100_LIKE, false, 'f16')).constants.KB;
    expect(keys({ Hq: 16 })).toBe(4);   // 2 rows per KV head: 8 scores a step
    expect(keys({ Hq: 8 })).toBe(2);    // 1 row: 4 keys would be 4 scores, fewer than the cluster's 8 lanes
    expect(keys({ Hq: 24 })).toBe(2);   // 3 rows: 12 scores
  });
  it('tuning chooses the tile loop, the keys a step and loads at their own step', () => {
    const tiles = planned(decodePlan(sdpaProblem(LLAMA3_DECODE), H100_LIKE, false, 'f16', { decodeLoop: 2 }));
    expect(tiles.loop).toBe('main');
    expect(tiles.targetWorkgroups).toBe(512);
    expect(decodeKernelSource(tiles).code).not.toContain('fn lanes(');
    expect(planned(decodePlan(sdpaProblem(LLAMA3_DECODE), H100_LIKE, false, 'f16', { laneKeys: 1 })).constants).toMatchObject({ CL: 8, KB: 1, BK: 16 });
    expect(planned(decodePlan(sdpaProblem(LLAMA3_DECODE), H100_LIKE, false, 'f32', { lanePrefetch: 2 })).constants).toMatchObject({ PREFETCH: 0 });
  });
  it('the tile loop takes what the lane loop cannot hold', () => {
    const loop = (dims: Partial<SdpaDims>, gpu = H100_LIKE): string => planned(decodePlan(sdpaProblem({ ...LLAMA3_DECODE, ...dims }), gpu, false, 'f32')).loop;
    expect(loop({ Lq: 4 })).toBe('main');                 // 16 rows of d = 128: 64 vec4s of O per lane, past 16
    expect(loop({ Lq: 4, d: 32 })).toBe('lanes');         // 16 rows of d = 32: one vec4 per row
    expect(loop({ d: 80 })).toBe('main');                 // not a multiple of 4 · 8
    expect(loop({ d: 256 })).toBe('main');                // 4 rows of 8 vec4s
    expect(loop({ Hq: 16, d: 256 })).toBe('lanes');       // 2 rows of 8 vec4s
    expect(loop({ dv: 64 })).toBe('main');                // V's head size of its own
    expect(loop({}, withSubgroups(['subgroups'], 4))).toBe('main');
    expect(loop({}, withSubgroups([], 32))).toBe('main');
    expect(loop({}, withSubgroups(['subgroups'], 8))).toBe('lanes');
  });
  it('declines tuning it cannot take, in one line', () => {
    expect(decodePlan(sdpaProblem(LLAMA3_DECODE), H100_LIKE, false, 'f32', { decodeLoop: 3 })).toBe('tuning.decodeLoop is 3; give 1 (the lane loop) or 2 (the tile loop)');
    expect(decodePlan(sdpaProblem(LLAMA3_DECODE), H100_LIKE, false, 'f32', { laneKeys: 5 })).toBe('tuning.laneKeys is 5; give 1 to 4');
    expect(decodePlan(sdpaProblem(LLAMA3_DECODE), H100_LIKE, false, 'f32', { lanePrefetch: 3 })).toBe('tuning.lanePrefetch is 3; give 1 (a step ahead) or 2 (at the step)');
  });
});
