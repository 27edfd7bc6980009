/**
 * The head-size designs of the subgroup-matrix microbenchmark through Dawn's shader compiler (null backend: the
 * software GPU has no subgroup matrices, so only a GPU that has them runs these kernels). Every design must compile,
 * declare the workgroup memory the runner reports, and a broken one must not compile, so that the check can fail.
 */
import { describe, expect, it } from 'vitest';
import { nullBackendDevice, shaderCompileErrors as compileErrors } from '@fa/core/node';
import { headDesignBytes, headDesignKernel, headDesignProblem, headDesigns, type HeadDesign } from '../src/subgroup-matrix-heads.js';

const acquired = await nullBackendDevice();

/** The bytes of the `var<workgroup>` arrays a kernel declares. */
function declaredBytes(code: string): number {
  let bytes = 0;
  for (const [, type, count] of code.matchAll(/var<workgroup> \w+: array<(f16|f32), (\d+)>/g)) bytes += (type === 'f16' ? 2 : 4) * Number(count);
  return bytes;
}

describe('subgroup-matrix-bench heads', () => {
  const designs = headDesigns();
  it('has distinct labels, and the product\'s loop at d = 128 first, in 23,040 bytes', () => {
    expect(new Set(designs.map((d) => d.label)).size).toBe(designs.length);
    expect(designs[0]).toMatchObject({ D: 128, BC: 32, NSG: 4, kvTiles: 1, stage: true });
    expect(headDesignBytes(designs[0]!)).toBe(23_040);
  });
  it('declares the workgroup memory it reports, for every design', () => {
    for (const design of designs) expect(declaredBytes(headDesignKernel(design)), design.label).toBe(headDesignBytes(design));
  });
  it('refuses designs it cannot generate', () => {
    const base: HeadDesign = { label: 'x', D: 128, BC: 32, NSG: 4, kvTiles: 1, stage: true, softmax: 'exp4', barrier: 'workgroup' };
    expect(headDesignProblem(base)).toBeUndefined();
    expect(headDesignProblem({ ...base, D: 72 })).toMatch(/multiple of 16/);
    expect(headDesignProblem({ ...base, pipeline: true })).toMatch(/side by side/);
    expect(headDesignProblem({ ...base, oShared: 8 })).toMatch(/fewer than/);
    expect(() => headDesignKernel({ ...base, BC: 48 })).toThrow(/BC = 48/);
  });
  for (const design of designs) {
    it(`compiles: ${design.label}`, async (context) => {
      if (!acquired.device) return context.skip(`no null backend: ${acquired.reason}`);
      expect(await compileErrors(acquired.device, headDesignKernel(design))).toEqual([]);
    });
  }
  it('reports an error in a design with one broken line', async (context) => {
    if (!acquired.device) return context.skip(`no null backend: ${acquired.reason}`);
    const code = headDesignKernel(designs[0]!);
    const broken = code.replace('subgroupMatrixLoad<L, row_major>(&P,', 'subgroupMatrixLoad<A, row_major>(&P,');
    expect(broken).not.toBe(code);
    expect((await compileErrors(acquired.device, broken)).length).toBeGreaterThan(0);
  });
});
