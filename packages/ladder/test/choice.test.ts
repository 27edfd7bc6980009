import { describe, expect, it } from 'vitest';
import { canRun, type RunEnv } from '@fa/core';
import { chooseRung, IMPLEMENTATIONS, LADDER, PRODUCT, shapeClass, type AdapterChoices } from '../src/index.js';
import { pretendEnv } from './pretend-gpu.js';

const TABLE: AdapterChoices[] = [
  {
    vendor: 'acme',
    device: 'gpu-1',
    source: 'test table',
    classes: [{ shapeClass: 'N ≤ 4096, d ≤ 64', ranking: ['q-registers', 'prefetch'], evidence: '2×2048×64: q-registers 1 ms' }],
    overall: { shapeClass: 'every measured shape', ranking: ['register-tiles', 'prefetch'], evidence: 'all: register-tiles' },
  },
];
const pick = (shape: { B: number; N: number; d: number }, env: RunEnv) => chooseRung(shape, env, LADDER, TABLE);

describe('the automatic choice', () => {
  it('classes shapes by N and d', () => {
    expect(shapeClass({ B: 9, N: 128, d: 32 })).toBe('N ≤ 256, d ≤ 32');
    expect(shapeClass({ B: 1, N: 2048, d: 64 })).toBe('N ≤ 4096, d ≤ 64');
    expect(shapeClass({ B: 1, N: 32768, d: 80 })).toBe('N > 4096, d ≤ 128');
    expect(shapeClass({ B: 1, N: 7, d: 256 })).toBe('N ≤ 256, d > 128');
  });

  it("takes the table's fastest rung for the shape's class, not the highest rung", () => {
    const choice = pick({ B: 2, N: 2048, d: 64 }, pretendEnv({}));
    expect(choice.rung.id).toBe('q-registers');
    expect(choice.reason).toContain('for N ≤ 4096, d ≤ 64');
  });

  it('falls back to the ranking over every measured shape for an unmeasured class', () => {
    const choice = pick({ B: 1, N: 32768, d: 32 }, pretendEnv({}));
    expect(choice.rung.id).toBe('register-tiles');
    expect(choice.reason).toContain('none measured for N > 4096, d ≤ 32');
  });

  it('skips a ranked rung that cannot run here', () => {
    const choice = pick({ B: 1, N: 32768, d: 32 }, pretendEnv({ features: ['timestamp-query'] }));
    expect(choice.rung.kind).toBe('gpu');
    expect(choice.rung.requires ?? []).not.toContain('subgroups');
  });

  it('uses the highest runnable rung on an adapter without a table, and CPU rungs on a software adapter', () => {
    const other = pretendEnv({ vendor: 'other' });
    const highest = [...LADDER].reverse().find((r) => canRun(r, { B: 1, N: 64, d: 64 }, other) === true);
    expect(highest?.id).toBe('split-softmax');
    expect(pick({ B: 1, N: 64, d: 64 }, other).rung.id).toBe(highest?.id);
    const software = pick({ B: 1, N: 64, d: 64 }, pretendEnv({ isFallbackAdapter: true }));
    expect(software.rung.id).toBe('cpu');
    expect(software.reason).toContain('software adapter');
  });

  it("takes the product's kernel on an adapter without a table, and where the table ranks it first", () => {
    const shape = { B: 1, N: 64, d: 64 };
    const other = pretendEnv({ vendor: 'other' });
    expect(PRODUCT.map((r) => r.id)).toEqual(['attention-fp32']);
    const untabled = chooseRung(shape, other, IMPLEMENTATIONS, TABLE);
    expect(untabled.rung.id).toBe('attention-fp32');
    expect(untabled.reason).toContain("product's kernel");
    const ranked: AdapterChoices[] = [{ ...(TABLE[0] as AdapterChoices), classes: [{ shapeClass: 'N ≤ 256, d ≤ 64', ranking: ['attention-fp32', 'lean-loop'], evidence: 'x' }] }];
    expect(chooseRung(shape, pretendEnv({}), IMPLEMENTATIONS, ranked).rung.id).toBe('attention-fp32');
    // Where the bench ranked a rung first, the rung runs: the product is chosen on measurements, not by decree.
    const behind: AdapterChoices[] = [{ ...(TABLE[0] as AdapterChoices), classes: [{ shapeClass: 'N ≤ 256, d ≤ 64', ranking: ['lean-loop', 'attention-fp32'], evidence: 'x' }] }];
    expect(chooseRung(shape, pretendEnv({}), IMPLEMENTATIONS, behind).rung.id).toBe('lean-loop');
  });
});
