/**
 * attention-matrix's modules through Dawn's shader compiler, without a GPU. The software GPU has no subgroup matrices,
 * so no other test here runs the matrix kernel (`hw4-cli sdpa --conformance` does, on a GPU that has them); Dawn's null
 * backend compiles a module in full. Each variant the host makes must compile without an error: f16 tensors up to
 * d = 128 (O's rescale moved below the tile loop), above it (teams of two subgroups where 32 divides d, else the
 * wide-head variant: each made by replacing parts of the file), and f32 tensors' two parts; Q_i's rows read ahead of
 * their rounds (the file as written) or round by round (d ≤ 64 without score terms on a full grid, the wide heads,
 * f32 tensors). A
 * module with one broken line must not, so that the check can fail.
 */
import { describe, expect, it } from 'vitest';
import { sdpaProblem, type SdpaDims, type SdpaOptions } from '@fa/core';
import { nullBackendDevice, shaderCompileErrors as compileErrors } from '@fa/core/node';
import type { DecodeTuning } from '../src/decode/attention-decode.js';
import type { TensorType } from '../src/kernel-support.js';
import { matrixPlan } from '../src/matrix/attention-matrix.js';
import { H100_LIKE } from './h100-like.js';

const acquired = await nullBackendDevice();

/** A causal prefill of 8/2 heads × 1024 rows, or `dims` instead: the BERT batch's 3072 row blocks need no key splits. */
function problemFor(d: number, options: SdpaOptions = {}, dims: Partial<SdpaDims> = {}): ReturnType<typeof sdpaProblem> {
  return sdpaProblem({ B: 1, Hq: 8, Hkv: 2, Lq: 1024, Lk: 1024, d, ...dims }, { causal: true, ...options });
}
const FULL_GRID: Partial<SdpaDims> = { B: 32, Hq: 12, Hkv: 12, Lq: 512, Lk: 512 };

/** The module the host hands Dawn for a causal prefill of head size d. */
function moduleFor(d: number, dtype: TensorType, options: SdpaOptions = {}, tuning?: DecodeTuning, dims: Partial<SdpaDims> = {}): string {
  const plan = matrixPlan(problemFor(d, options, dims), H100_LIKE, true, dtype, tuning);
  if (typeof plan === 'string') throw new Error(`the plan declined d = ${d}, ${dtype}: ${plan}`);
  return plan.kernel.code;
}

describe('attention-matrix on Dawn\'s shader compiler (null backend)', () => {
  const SINKS: SdpaOptions = { sinks: new Float32Array(8) };
  /** The read-ahead's register array: only a module that reads Q_i ahead declares it. */
  const ahead = 'var qIn: array<Packed, O4_MAX>;';
  const variants: [string, number, TensorType, SdpaOptions?, Partial<SdpaDims>?][] = [
    ['f16 tensors, d = 128 (O rescaled apart from the tile loop)', 128, 'f16'],
    ['f16 tensors, d = 64, the BERT batch (the same variant, Q_i read round by round)', 64, 'f16', {}, FULL_GRID],
    ['f16 tensors, d = 64 with sinks (Q_i read ahead)', 64, 'f16', SINKS],
    ['f16 tensors, d = 256 (teams of two subgroups per 16 rows)', 256, 'f16'],
    ['f16 tensors, d = 144 (the wide-head variant: one subgroup holds all of d)', 144, 'f16'],
    ['f32 tensors (two parts)', 64, 'f32'],
  ];
  for (const [name, d, dtype, options, dims] of variants) {
    it(`compiles: ${name}`, async (context) => {
      if (!acquired.device) return context.skip(`no null backend: ${acquired.reason}`);
      expect(await compileErrors(acquired.device, moduleFor(d, dtype, options, undefined, dims))).toEqual([]);
    });
  }
  it('reads Q_i ahead of its rounds except at d ≤ 64 without score terms where the keys are not split, above d = 128 without teams, and with f32 tensors', () => {
    for (const [d, options] of [[128, {}], [256, {}], [64, SINKS], [64, { softcap: 30 }], [64, {}]] as const) expect(moduleFor(d, 'f16', options)).toContain(ahead);
    expect(moduleFor(64, 'f16', { softcap: 30 }, undefined, FULL_GRID)).toContain(ahead);
    for (const [d, dtype, dims] of [[64, 'f16', FULL_GRID], [144, 'f16', {}], [64, 'f32', {}], [128, 'f32', {}]] as const) {
      const code = moduleFor(d, dtype, {}, undefined, dims);
      expect(code).not.toContain(ahead);
      expect(code).toContain('for (var e = t; e < QR * D4V; e += WG) {');
    }
  });
  it('reads Q_i as tuning.matrixQAhead says where O is rescaled apart (f16 tensors, d ≤ 128), and elsewhere takes only the fixed choice', () => {
    expect(moduleFor(64, 'f16', {}, { matrixQAhead: 1 }, FULL_GRID)).toContain(ahead);
    expect(moduleFor(64, 'f16', {}, { matrixQAhead: 0 })).not.toContain(ahead);
    expect(moduleFor(64, 'f16', SINKS, { matrixQAhead: 0 })).not.toContain(ahead);
    expect(moduleFor(128, 'f16', {}, { matrixQAhead: 0 })).not.toContain(ahead);
    expect(moduleFor(128, 'f16', {}, { matrixQAhead: 1 })).toBe(moduleFor(128, 'f16'));
    expect(matrixPlan(problemFor(64), H100_LIKE, true, 'f16', { matrixQAhead: 2 })).toBe('tuning.matrixQAhead is 2; give 0 or 1');
    // Where the staging is fixed, the value that matches it is taken (the plan's kernel), the other refused.
    const fixed = (q: number, how: string): string => `tuning.matrixQAhead is ${q}; this plan's kernel reads Q_i ${how} only (the choice is made with f16 tensors, d ≤ 128 and one subgroup per 16 rows)`;
    expect(matrixPlan(problemFor(64), H100_LIKE, true, 'f32', { matrixQAhead: 1 })).toBe(fixed(1, 'round by round'));
    expect(moduleFor(64, 'f32', {}, { matrixQAhead: 0 })).toBe(moduleFor(64, 'f32'));
    expect(matrixPlan(problemFor(256), H100_LIKE, true, 'f16', { matrixQAhead: 0 })).toBe(fixed(0, 'ahead'));
    expect(moduleFor(256, 'f16', {}, { matrixQAhead: 1 })).toBe(moduleFor(256, 'f16'));
  });
  it('rescales O apart from the tile loop with f16 tensors up to d = 128 only', () => {
    for (const d of [64, 128]) {
      const code = moduleFor(d, 'f16');
      expect(code).toContain('if (moved || flush) { break; }');
      expect(code.match(/if \(moved \|\| flush\) \{\n/g)).toBeNull();
      // The tile's P̃ V_j written twice: in the loop, and below it after the rescale.
      expect(code.match(/\/\/ o \+= P̃ V_j/g)).toHaveLength(2);
    }
    for (const [d, dtype] of [[256, 'f16'], [64, 'f32']] as const) expect(moduleFor(d, dtype)).not.toContain('if (moved || flush) { break; }');
  });
  it('reports an error in a module with one broken line', async (context) => {
    if (!acquired.device) return context.skip(`no null backend: ${acquired.reason}`);
    const broken = moduleFor(256, 'f16').replace('fn getQ(f: ptr<function, QFragments>, n: u32) -> L', 'fn getQ(f: ptr<function, QFragments>, n: u32) -> A');
    expect(broken).not.toBe(moduleFor(256, 'f16'));
    expect((await compileErrors(acquired.device, broken)).length).toBeGreaterThan(0);
  });
});
