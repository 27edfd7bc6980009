import { describe, expect, it } from 'vitest';
import { canRun, SUBGROUP_MATRIX_FEATURE } from '@fa/core';
import { chooseRung, findRung, IMPLEMENTATIONS, LADDER, type AdapterChoices } from '../src/index.js';
import { pretendEnv } from './pretend-gpu.js';

const F16_CONFIG = { componentType: 'f16', resultComponentType: 'f32', M: 16, N: 16, K: 16 };
const H100 = pretendEnv({ vendor: 'nvidia', device: 'nvidia-h100-80gb-hbm3', features: ['shader-f16', 'subgroups', 'timestamp-query', SUBGROUP_MATRIX_FEATURE] }, [F16_CONFIG]);
const TABLE: AdapterChoices[] = [
  {
    vendor: 'nvidia',
    device: 'nvidia-h100-80gb-hbm3',
    source: 'test table',
    classes: [],
    overall: { shapeClass: 'every measured shape', ranking: ['resident-o', 'staged-matrix', 'split-softmax'], evidence: 'test' },
  },
];

describe('the automatic choice and the proven error bound', () => {
  it('passes over a faster rung that declares no rounding model', () => {
    const shape = { B: 2, N: 2048, d: 64 };
    const residentO = findRung('resident-o');
    expect(residentO && canRun(residentO, shape, H100)).toBe(true);
    expect(residentO?.rounding?.(shape, H100)).toBeUndefined();
    expect(chooseRung(shape, H100, LADDER, TABLE).rung.id).toBe('split-softmax');
  });

  it('finds a rounding model for every float32 rung that can run here', () => {
    const shape = { B: 1, N: 300, d: 64 };
    const missing = IMPLEMENTATIONS.filter((r) => r.id !== 'cpu' && r.reducedRange === undefined && canRun(r, shape, H100) === true && r.rounding?.(shape, H100) === undefined);
    expect(missing.map((r) => r.id)).toEqual([]);
  });

  it("runs the product's kernel by default on the H100 at every bench shape", () => {
    // docs/bench/nvidia-nvidia-h100-80gb-hbm3.json (2026-11-28) through the committed choice table: since its key
    // ranges are laid out for the last wave (key-ranges.ts), the product is first among the proven at 10×2048×64 too.
    const expected: Record<string, string> = {
      '13600,128,32': 'attention-fp32',
      '4,32768,32': 'attention-fp32',
      '2,32768,64': 'attention-fp32',
      '26,32768,64': 'attention-fp32',
      '4,8192,128': 'attention-fp32',
      '10,2048,64': 'attention-fp32',
      '500,2048,64': 'attention-fp32',
    };
    const chosen = Object.fromEntries(
      Object.keys(expected).map((key) => {
        const [B, N, d] = key.split(',').map(Number) as [number, number, number];
        return [key, chooseRung({ B, N, d }, H100, IMPLEMENTATIONS).rung.id];
      }),
    );
    expect(chosen).toEqual(expected);
    const product = findRung('attention-fp32');
    for (const d of [32, 64, 128]) expect(product?.rounding?.({ B: 1, N: 4096, d }, H100)).toBeDefined();
  });
});
