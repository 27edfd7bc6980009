/**
 * Every experiment's variants are a kernel and values of its override constants: each constant a variant sets is
 * declared `override` in the kernel it runs, and the rungs' kernels are taken as the packages export them.
 */
import type { GpuContext } from '@fa/core';
import { describe, expect, it } from 'vitest';
import { FP32_TILE_RUNGS, fp32Kernel, fp32Plan, fp32TilesVariant } from '../src/fp32-tiles-sweep.js';
import { READ_LOOPS, readsKernel, SHUFFLE_LOOPS } from '../src/lds-pattern-kernels.js';
import { MATRIX_RUNGS, matrixVariantConstants } from '../src/matrix-variants.js';
import { MICROTILE_LAYOUTS, MICROTILE_VARIANTS, MICROTILES_KERNEL, microtileConstants, microtileWorkgroupBytes } from '../src/microtiles-variants.js';
import { declaredOverrides, undeclaredOverrides } from '../src/overrides.js';
import { subgroupMatrixRuns } from '../src/subgroup-matrix-kernels.js';

/** What the plans read of a GPU: an H100's subgroups and workgroup memory. */
const H100 = { report: { subgroupMinSize: 32, subgroupMaxSize: 32, limits: { maxComputeWorkgroupStorageSize: 49152 } } } as unknown as GpuContext;
const KIB48 = 49152;

describe('override reflection', () => {
  it('finds declarations with and without values, and not in comments', () => {
    const code = 'override D: u32;\noverride WG: u32 = 64u;  // override X: u32\n/* override Y: u32; */ override FLAG: bool = true;';
    expect(declaredOverrides(code)).toEqual(['D', 'WG', 'FLAG']);
    expect(undeclaredOverrides(code, { D: 1, Z: 2 })).toEqual(['Z']);
  });
});

describe('fp32-tiles-sweep', () => {
  for (const rung of Object.keys(FP32_TILE_RUNGS)) {
    it(`${rung}: the plan's constants with other tiles, all overrides of the kernel`, () => {
      const plan = fp32Plan({ B: 500, N: 2048, d: 64 }, H100);
      for (const tiles of [{ WG: 128, BC: 32, PREFETCH: 0 }, { WG: 256, BC: 16, PREFETCH: 1 }, { WG: 64, BC: 64, PREFETCH: 0 }]) {
        const constants = fp32TilesVariant(plan, tiles);
        expect(undeclaredOverrides(fp32Kernel(rung), constants)).toEqual([]);
        expect(constants).toMatchObject({ ...tiles, D: 64 });
      }
    });
  }
});

describe('matrix-variants', () => {
  for (const [rung, { code, variants }] of Object.entries(MATRIX_RUNGS)) {
    for (const variant of Object.keys(variants)) {
      it(`${rung} ${variant}: the plan's overrides and the variant's are the kernel's`, () => {
        const { constants, plan } = matrixVariantConstants({ rung, variant, shape: { B: 100, N: 2048, d: 64 } }, KIB48);
        expect(undeclaredOverrides(code, constants)).toEqual([]);
        const NSG = variants[variant]?.NSG ?? 4;
        expect(constants.NSG).toBe(NSG);
        expect(plan.rowsPerWorkgroup).toBe(16 * NSG);
      });
    }
  }
  it('a variant that sets the subgroups sets the rows per workgroup', () => {
    const { constants, plan } = matrixVariantConstants({ rung: 'f16-resident', variant: 'nsg-8', shape: { B: 2, N: 4096, d: 64 } }, KIB48);
    expect(constants).toEqual({ D: 64, NSG: 8 });
    expect(plan.rowsPerWorkgroup).toBe(128);
  });
  it('the text edits of f16-resident apply to its kernel', () => {
    for (const rung of ['f16-resident-in-place', 'f16-resident-direct', 'f16-resident-o-global', 'f16-resident-lean-softmax', 'f16-resident-unstaged']) {
      expect(MATRIX_RUNGS[rung]?.code).toMatch(/fn main/);
    }
    expect(MATRIX_RUNGS['f16-resident-direct']?.code).not.toMatch(/subgroupMatrixLoad<R, [a-z_]+>\(&KV/);
    expect(MATRIX_RUNGS['f16-resident-in-place']?.code).not.toMatch(/oRow\[8u \* n0/);
    expect(MATRIX_RUNGS['f16-resident-o-global']?.code).not.toMatch(/oRow\[8u \* n0/);
  });
  it('P̃ in K\'s place: no P̃ tile of its own, V after it, K_j copied at the top of the tile', () => {
    const code = MATRIX_RUNGS['f16-resident-p-in-k']?.code ?? '';
    expect(code).not.toMatch(/\bPt\b/);
    expect(code).not.toMatch(/\* KT \+/);
    expect(code).toMatch(/subgroupMatrixLoad<R, row_major>\(&KV, VO \+/);
    expect(code).not.toMatch(/K_\(j\+1\) into KV/);
    expect(code.split('workgroupBarrier();  // K_j and V_j are in KV').length).toBe(2);
    expect(code).not.toMatch(/K_j is in KV; every subgroup/);
  });
  it('the padding is a workgroup array the kernel touches, and the one-key edit restores the scalar softmax', () => {
    expect(MATRIX_RUNGS['f16-resident-padded']?.code).toMatch(/var<workgroup> padding: array<f32, PAD>;[^]*padding\[t % PAD\]/);
    expect(MATRIX_RUNGS['f16-resident-padded']?.variants['pad-4k']).toEqual({ PAD: 1024 });
    const oneKey = MATRIX_RUNGS['resident-o-one-key']?.code ?? '';
    expect(oneKey).toMatch(/var sv: array<f32, 16>;/);
    expect(oneKey).not.toMatch(/array<vec4<f32>, BC \/ 8u>/);
  });
  it('flush variants set FLUSH only', () => {
    const { constants } = matrixVariantConstants({ rung: 'resident-o', variant: 'flush-2', shape: { B: 1, N: 100, d: 32 } }, KIB48);
    expect(constants).toEqual({ D: 32, NSG: 4, OW: 32, FLUSH: 2 });
  });
});

describe('microtiles-variants', () => {
  for (const variant of Object.keys(MICROTILE_VARIANTS)) {
    it(`${variant}: overrides of the experiment kernel`, () => {
      for (const d of [32, 64]) {
        const constants = microtileConstants({ variant, shape: { B: 1, N: 64, d } }, KIB48);
        expect(undeclaredOverrides(MICROTILES_KERNEL, constants)).toEqual([]);
      }
    });
  }
  it('takes the first layout that fits the workgroup memory', () => {
    expect(microtileConstants({ variant: 'kernel', shape: { B: 1, N: 64, d: 64 } }, KIB48)).toMatchObject({ BR: 64, KS4: 12 });
    const small = microtileWorkgroupBytes(64, MICROTILE_LAYOUTS[2]!);
    expect(microtileConstants({ variant: 'kernel', shape: { B: 1, N: 64, d: 64 } }, small)).toMatchObject({ BR: 32, KS4: 12 });
    expect(microtileConstants({ variant: 'ks9', shape: { B: 1, N: 64, d: 64 } }, KIB48)).toMatchObject({ BR: 64, KS4: 9 });
  });
});

describe('microbenchmarks', () => {
  it('subgroup-matrix-bench: resident, 4 runs per stride, 12 of i8', () => {
    const runs = subgroupMatrixRuns([64, 72]);
    expect(runs).toHaveLength(1 + 2 * 4 + 12);
    expect(new Set(runs.map((r) => r.label)).size).toBe(runs.length);
    for (const { code } of runs) expect(code).toContain('fn main(');
  });
  it('lds-pattern-bench: MASK is the read loops\' only override', () => {
    for (const [ROWS, qFromMemory] of READ_LOOPS) expect(declaredOverrides(readsKernel(ROWS, qFromMemory))).toEqual(['MASK']);
    for (const [ROWS, SHUFFLES] of SHUFFLE_LOOPS) expect(declaredOverrides(readsKernel(ROWS, false, SHUFFLES))).toEqual(['MASK']);
  });
});
