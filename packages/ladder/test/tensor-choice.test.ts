/**
 * The tensor-core rungs (16 `f16-matrix`, 17 `compensated-matrix`, 23 `staged-matrix`, 24 `resident-o`) and the automatic
 * choice: it never picks them, on this machine and on pretend adapters that have everything (none has a proven error
 * bound). Their plans, declines and outputs are @fa/tensor's tests.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { canRun, SUBGROUP_MATRIX_FEATURE, type Rung, type RunEnv } from '@fa/core';
import { CHOICE_TABLE, chooseRung, findRung, LADDER } from '../src/index.js';
import { conformanceEnv } from './gpu-env.js';
import { pretendEnv as pretendGpu } from './pretend-gpu.js';
import { TENSOR_SHAPES } from './tensor-shapes.js';

const { env, release } = await conformanceEnv();
afterAll(() => {
  release();
});

const f16Matrix = findRung('f16-matrix') as Rung;
const compensated = findRung('compensated-matrix') as Rung;
const staged = findRung('staged-matrix') as Rung;
const resident = findRung('resident-o') as Rung;
const TENSOR_IDS = ['f16-matrix', 'compensated-matrix', 'staged-matrix', 'resident-o'];

describe('the automatic choice', () => {
  const shapes = [...TENSOR_SHAPES, { B: 13600, N: 128, d: 32 }, { B: 10, N: 2048, d: 64 }, { B: 2, N: 32768, d: 64 }];

  it('never picks a tensor-core rung on this machine', () => {
    for (const shape of shapes) expect(TENSOR_IDS).not.toContain(chooseRung(shape, env, LADDER).rung.id);
  });

  it('on a pretend H100 with every feature: no matrix-unit rung (none has a proven error bound), the fp32 rung the table ranks next', () => {
    const h100 = pretendEnv();
    expect(canRun(compensated, { B: 1, N: 64, d: 64 }, h100)).toBe(true);
    expect(canRun(f16Matrix, { B: 1, N: 64, d: 64 }, h100)).toBe(true);
    expect(canRun(staged, { B: 1, N: 64, d: 64 }, h100)).toBe(true);
    expect(canRun(resident, { B: 1, N: 64, d: 64 }, h100)).toBe(true);
    // The table ranks resident-o first at d = 64; without a rounding model it is passed over (docs/error-bound.md).
    expect(chooseRung({ B: 2, N: 32768, d: 64 }, h100, LADDER).rung.id).toBe('lean-loop');
    // At d = 32 the table's two fastest fp32 rungs are 0.6% apart (split-softmax 0.952, lean-loop 0.958 ms).
    expect(['split-softmax', 'lean-loop']).toContain(chooseRung({ B: 13600, N: 128, d: 32 }, h100, LADDER).rung.id);
    for (const shape of shapes) {
      expect(TENSOR_IDS).not.toContain(chooseRung(shape, h100, LADDER).rung.id);
      expect(TENSOR_IDS).not.toContain(chooseRung(shape, h100, LADDER, undefined, { fullRange: true }).rung.id);
      expect(TENSOR_IDS).not.toContain(chooseRung(shape, h100, LADDER, []).rung.id);
    }
    expect(chooseRung({ B: 1, N: 64, d: 64 }, h100, LADDER, []).rung.id).toBe('split-softmax');
    expect(CHOICE_TABLE.some((a) => a.device === 'nvidia-h100-80gb-hbm3')).toBe(true);
  });
});

const F16_CONFIG = { componentType: 'f16', resultComponentType: 'f32', M: 16, N: 16, K: 16 };

/** A pretend H100 with every feature the tensor rungs need. */
function pretendEnv(): RunEnv {
  return pretendGpu({ vendor: 'nvidia', device: 'nvidia-h100-80gb-hbm3', features: ['shader-f16', 'subgroups', 'timestamp-query', SUBGROUP_MATRIX_FEATURE] }, [F16_CONFIG]);
}
