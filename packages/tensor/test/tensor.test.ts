/**
 * The tensor-core rungs (16 `f16-matrix`, 17 `compensated-matrix`, 23 `staged-matrix`, 24 `resident-o`). Where the GPU has f16
 * subgroup matrices: each against the float64 oracle on awkward shapes. Where it has not (lavapipe): they decline with a reason naming the
 * missing feature. Everywhere: their plans, and the reasons they give on pretend adapters. (That the automatic choice never
 * picks them is the ladder's test, packages/ladder/test/tensor-choice.test.ts.)
 */
import { afterAll, describe, expect, it } from 'vitest';
import { canRun, kernelWorkgroupBytes, runAll, SUBGROUP_MATRIX_FEATURE, subgroupPlan, type RungDefinition, type RunEnv } from '@fa/core';
import { compareOutputs, generateInput, type Shape } from '@fa/io';
import { attentionOracle } from '@fa/reference';
import { plainF16Attention } from '../../ladder/src/conformance.js';
import { conformanceEnv } from '../../ladder/test/gpu-env.js';
import { pretendEnv as pretendGpu, type PretendReport } from '../../ladder/test/pretend-gpu.js';
import { TENSOR_SHAPES } from '../../ladder/test/tensor-shapes.js';
import { F16_MATRIX_KERNEL } from '../src/16-f16-matrix/f16-matrix.js';
import { COMPENSATED_MATRIX_KERNEL } from '../src/17-compensated-matrix/compensated-matrix.js';
import { STAGED_MATRIX_KERNEL } from '../src/23-staged-matrix/staged-matrix.js';
import { RESIDENT_O_KERNEL, residentOPlan } from '../src/24-resident-o/resident-o.js';
import { compensatedMatrix as compensated, f16Matrix, residentO as resident, stagedMatrix as staged } from '../src/index.js';
import { matrixPlan } from '../src/matrix-rung.js';

const { env, release } = await conformanceEnv();
afterAll(() => {
  release();
});

const stagedPlan = subgroupPlan(STAGED_MATRIX_KERNEL);
const residentPlan = residentOPlan;
/** Workgroup memory of `main` with NSG subgroups at head size d. */
const stagedBytes = (NSG: number, D: number) => kernelWorkgroupBytes(STAGED_MATRIX_KERNEL.code, { D, NSG });
const residentBytes = (NSG: number, D: number) => kernelWorkgroupBytes(RESIDENT_O_KERNEL.code, { D, NSG, OW: D });

/** Why the tensor rungs cannot run here (a small ordinary shape), or undefined where they can. */
const probe = canRun(compensated, { B: 1, N: 64, d: 64 }, env);
const missing = probe === true ? undefined : probe;
if (missing !== undefined) console.warn(`tensor-core rungs against the oracle skipped: ${missing}`);

const name = ({ B, N, d }: Shape): string => `B=${B} N=${N} d=${d}`;

async function errorOf(rung: RungDefinition, shape: Shape) {
  const input = generateInput({ shape, seed: shape.B * 1_000_003 + shape.N * 101 + shape.d });
  const runner = await rung.prepare(env, shape);
  try {
    const { output } = await runAll(runner, input, shape);
    const oracle = attentionOracle(input, shape);
    return { rung: compareOutputs(output, oracle, shape), plainF16: compareOutputs(plainF16Attention(input, shape), oracle, shape) };
  } finally {
    await runner.dispose();
  }
}

describe.skipIf(missing !== undefined)(`the tensor-core rungs on uniform ±3 data${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it.each(TENSOR_SHAPES.map((shape) => ({ shape, label: name(shape) })))('compensated-matrix is within 1e-4 of the oracle, $label', async ({ shape }) => {
    const { rung } = await errorOf(compensated, shape);
    expect(rung.maxAbsError, `max ${rung.maxAbsError}, mean ${rung.meanAbsError}`).toBeLessThanOrEqual(1e-4);
  });

  it.each(TENSOR_SHAPES.map((shape) => ({ shape, label: name(shape) })))('staged-matrix is within 1e-4 of the oracle, $label', async ({ shape }) => {
    const { rung } = await errorOf(staged, shape);
    expect(rung.maxAbsError, `max ${rung.maxAbsError}, mean ${rung.meanAbsError}`).toBeLessThanOrEqual(1e-4);
  });

  it.each(TENSOR_SHAPES.map((shape) => ({ shape, label: name(shape) })))('resident-o is within 1e-4 of the oracle, $label', async ({ shape }) => {
    const { rung } = await errorOf(resident, shape);
    expect(rung.maxAbsError, `max ${rung.maxAbsError}, mean ${rung.meanAbsError}`).toBeLessThanOrEqual(1e-4);
  });

  it.each(TENSOR_SHAPES.map((shape) => ({ shape, label: name(shape) })))('f16-matrix is within 2× a plain f16 computation, $label', async ({ shape }) => {
    const { rung, plainF16 } = await errorOf(f16Matrix, shape);
    expect(rung.maxAbsError, `max ${rung.maxAbsError}; plain f16 ${plainF16.maxAbsError}`).toBeLessThanOrEqual(Math.max(2 * plainF16.maxAbsError, 1e-6));
  });
});

describe('where the GPU has no subgroup matrices', () => {
  const noMatrices = env.gpu === undefined || env.gpu.device.features.has(SUBGROUP_MATRIX_FEATURE);
  it.skipIf(noMatrices)(`every tensor-core rung declines every shape with a one-line reason naming the missing feature${noMatrices ? ' (skipped: this GPU has subgroup matrices, so they do not decline)' : ''}`, () => {
    for (const rung of [f16Matrix, compensated, staged, resident]) {
      for (const shape of TENSOR_SHAPES) {
        const reason = canRun(rung, shape, env);
        expect(reason).toEqual(expect.stringContaining(SUBGROUP_MATRIX_FEATURE));
        expect(reason).not.toContain('\n');
      }
    }
  });
});

describe('the reasons a GPU with subgroup matrices gives', () => {
  const shape = { B: 1, N: 64, d: 64 };
  it('names a subgroup size other than 32, a missing f16 configuration, and head sizes the fragments cannot take', () => {
    expect(canRun(compensated, shape, pretendEnv({ subgroupMinSize: 8, subgroupMaxSize: 32 }))).toMatch(/subgroups of exactly 32 invocations \(this GPU: 8 to 32\)/);
    expect(canRun(compensated, shape, pretendEnv({}, []))).toMatch(/no f16 → f32 16×16×16 configuration/);
    expect(canRun(compensated, { B: 1, N: 64, d: 24 }, pretendEnv({}))).toMatch(/d = 24 is not a multiple of 16/);
    expect(canRun(f16Matrix, { B: 1, N: 64, d: 256 }, pretendEnv({}))).toMatch(/d = 256 is above this rung's maximum head size 128/);
  });

  it('uses fewer query fragments where workgroup memory is small, and declines only when one fragment does not fit', () => {
    expect(canRun(compensated, { B: 1, N: 64, d: 32 }, pretendEnv({ limits: { maxComputeWorkgroupStorageSize: 32768 } }))).toBe(true);
    expect(canRun(compensated, { B: 1, N: 64, d: 128 }, pretendEnv({ limits: { maxComputeWorkgroupStorageSize: 8192 } }))).toMatch(/needs .* of workgroup memory, over this GPU's 8\.00 KiB/);
  });
});

describe('the plan of staged-matrix', () => {
  it('shares each key tile among four subgroups where 48 KiB allows, fewer at large head sizes', () => {
    const nsg = (d: number, limit = 49152) => stagedPlan({ B: 1, N: 77, d }, limit).overrides.NSG;
    expect([16, 32, 48, 64, 80, 96, 112, 128].map((d) => nsg(d))).toEqual([4, 4, 4, 4, 2, 2, 1, 1]);
    expect(stagedPlan({ B: 1, N: 77, d: 64 }, 49152)).toEqual({ overrides: { NSG: 4 }, rowsPerWorkgroup: 64, NP: 128 });
    expect(stagedBytes(4, 64)).toBe(46080);
    expect(nsg(64, 32768)).toBe(2);
  });

  it('declines with the bytes it needs where even one subgroup does not fit', () => {
    expect(canRun(staged, { B: 1, N: 64, d: 128 }, pretendEnv({ limits: { maxComputeWorkgroupStorageSize: 32768 } }))).toMatch(/d = 128 needs 44\.8 KiB of workgroup memory, over this GPU's 32/);
  });
});

describe('the plan of resident-o', () => {
  it("keeps staged-matrix's S tiles d columns wide (plus its flag's 16 bytes) unless BC-wide tiles fit more subgroups", () => {
    const plan = (d: number) => residentPlan({ B: 1, N: 77, d }, 49152).overrides;
    expect([16, 32, 48, 64, 80, 96, 112, 128].map((d) => plan(d).NSG)).toEqual([4, 4, 4, 4, 4, 4, 4, 4]);
    expect([16, 32, 48, 64, 80, 96, 112, 128].map((d) => plan(d).OW)).toEqual([16, 32, 48, 64, undefined, undefined, undefined, undefined]);
    expect(residentBytes(4, 64)).toBe(stagedBytes(4, 64) + 16);
    expect(residentPlan({ B: 1, N: 77, d: 64 }, 49152)).toEqual({ overrides: { NSG: 4, OW: 64 }, rowsPerWorkgroup: 64, NP: 128 });
  });

  it('takes 16-key tiles where 32-key tiles fit fewer than four subgroups (d = 112, 128), or none', () => {
    const plan = (d: number, limit = 49152) => residentPlan({ B: 1, N: 77, d }, limit).overrides;
    expect([16, 32, 48, 64, 80, 96, 112, 128].map((d) => plan(d).BC)).toEqual([undefined, undefined, undefined, undefined, undefined, undefined, 16, 16]);
    const bytes = (overrides: Record<string, number>) => kernelWorkgroupBytes(RESIDENT_O_KERNEL.code, { D: 128, ...overrides });
    expect(bytes({ NSG: 4, BC: 16 })).toBe(28688);
    expect(bytes({ NSG: 2 })).toBe(44560);
    expect(plan(128, 32768)).toEqual({ NSG: 4, BC: 16 });
    expect(plan(128, 20480)).toEqual({ NSG: 1, BC: 16 });
  });

  it('declines with the bytes it needs where even one subgroup does not fit', () => {
    expect(canRun(resident, { B: 1, N: 64, d: 128 }, pretendEnv({ limits: { maxComputeWorkgroupStorageSize: 16384 } }))).toMatch(/d = 128 needs 19\.8 KiB of workgroup memory, over this GPU's 16/);
  });
});

describe('the plan', () => {
  it('takes one query fragment per subgroup on long key loops over a large grid, at most two otherwise', () => {
    expect(matrixPlan({ B: 500, N: 2048, d: 64 }, F16_MATRIX_KERNEL).RQ).toBe(1);
    expect(matrixPlan({ B: 26, N: 32768, d: 64 }, COMPENSATED_MATRIX_KERNEL).RQ).toBe(1);
    expect(matrixPlan({ B: 10, N: 2048, d: 64 }, F16_MATRIX_KERNEL).RQ).toBe(2);
    expect(matrixPlan({ B: 13600, N: 128, d: 32 }, COMPENSATED_MATRIX_KERNEL).RQ).toBe(2);
    expect(matrixPlan({ B: 13600, N: 128, d: 16 }, F16_MATRIX_KERNEL).RQ).toBe(2);
    expect(matrixPlan({ B: 1, N: 77, d: 128 }, COMPENSATED_MATRIX_KERNEL).RQ).toBe(1);
  });
});

const F16_CONFIG = { componentType: 'f16', resultComponentType: 'f32', M: 16, N: 16, K: 16 };

/** A pretend H100 (every feature the tensor rungs need), with `report` fields replaced and its matrix configurations. */
function pretendEnv(report: PretendReport, configs: readonly object[] = [F16_CONFIG]): RunEnv {
  return pretendGpu({ vendor: 'nvidia', device: 'nvidia-h100-80gb-hbm3', features: ['shader-f16', 'subgroups', 'timestamp-query', SUBGROUP_MATRIX_FEATURE], ...report }, configs);
}
