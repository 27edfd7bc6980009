/**
 * attention-fp32's key ranges (key-ranges.ts): the layout the schedule model picks where the grid is short of
 * workgroups, never more ranges than keySplits gives, and the conformance case that runs a range-by-range layout.
 */
import { describe, expect, it } from 'vitest';
import { keySplits } from '@fa/core';
import { GROUPS } from '../src/conformance.js';
import { scheduledKeyRanges, scheduleMakespan } from '../src/key-ranges.js';
import { planAttention } from '../src/index.js';
import { H100_LIKE } from './h100-like.js';

describe('the schedule model', () => {
  it('runs a workgroup alone on a unit at the unit’s rate, two at half each', () => {
    expect(scheduleMakespan(Array(132).fill(10), false)).toBeCloseTo(11); // 10 tiles and the overhead of 1
    expect(scheduleMakespan(Array(264).fill(10), false)).toBeCloseTo(22);
    // 112 more: placed two to a unit they take a wave's time; one to a unit, half of it.
    expect(scheduleMakespan(Array(376).fill(10), false)).toBeCloseTo(44);
    expect(scheduleMakespan(Array(376).fill(10), true)).toBeCloseTo(33);
  });
});

describe('scheduledKeyRanges', () => {
  it('cuts 10×2048×64 (160 row blocks of 64 tiles) into ranges of 20, 20, 20 and 4 tiles, range by range', () => {
    expect(scheduledKeyRanges(160, 64, 4)).toEqual({ splits: 4, perSplit: 20, rangeMajor: 1 });
  });

  it('keeps even ranges where a last wave does not cost (12×2048×64), and one range where keySplits gives one', () => {
    expect(scheduledKeyRanges(192, 64, 4)).toEqual({ splits: 4, perSplit: 0, rangeMajor: 0 });
    expect(scheduledKeyRanges(700, 64, 1)).toEqual({ splits: 1, perSplit: 0, rangeMajor: 0 });
  });

  it('gives keySplits’ number of ranges, each of at least one tile, covering every tile', () => {
    for (const tiles of [2, 3, 5, 8, 13, 32, 64]) {
      for (const rowBlocks of [1, 7, 40, 96, 160, 229, 320, 639]) {
        const most = Math.min(tiles, keySplits(rowBlocks, tiles));
        const { splits, perSplit, rangeMajor } = scheduledKeyRanges(rowBlocks, tiles, most);
        expect(splits).toBe(most);
        if (perSplit === 0) {
          expect(rangeMajor).toBe(0);
        } else {
          expect(rangeMajor).toBe(1);
          expect((splits - 1) * perSplit).toBeLessThan(tiles);
          expect(splits * perSplit).toBeGreaterThan(tiles);
        }
      }
    }
  });

  it('runs range by range on the conformance case that says so (so the suite checks that order on every GPU)', () => {
    const c = GROUPS.flatMap((g) => g.cases).find((x) => x.name.includes('range by range'));
    if (!c) throw new Error('the conformance case of key ranges range by range is missing');
    const plan = planAttention(H100_LIKE, c.dims, { kernel: 'attention-fp32' });
    if (typeof plan === 'string') throw new Error(plan);
    const { BR, BC } = plan.kernelPlan as { BR: number; BC: number };
    const rowBlocks = c.dims.B * c.dims.Hq * Math.ceil(c.dims.Lq / BR);
    const tiles = Math.ceil(c.dims.Lk / BC);
    expect(scheduledKeyRanges(rowBlocks, tiles, Math.min(tiles, keySplits(rowBlocks, tiles)))).toEqual({ splits: 2, perSplit: 2, rangeMajor: 1 });
  });
});
