/**
 * Rung 18's plan: how many invocations share a row pair for each head size, and the reasons it declines. Rung 19
 * (split-keys): how many key ranges for a grid. Rungs 20-21 (lean-loop, four-rows): keys per step and rows per group.
 * Their outputs on padded rows and with one key range, against the float64 oracle on the GPU, are
 * row-split.conformance.test.ts (`npm run test:conformance`); every rung runs once in `npm test`
 * (packages/ladder/test/conformance-smoke.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { canRun, keySplits, rowSplitTilesFor, type GpuContext } from '@fa/core';
import { pretendEnv } from '../../ladder/test/pretend-gpu.js';
import { fourRowsTilesFor } from '../src/21-four-rows/four-rows.js';
import { fourRows, rowSplit } from '../src/index.js';
import { keysPerStep } from '../src/plans/lean-loop.js';

const gpuOf = (subgroupMinSize: number, workgroupBytes = 49152): GpuContext =>
  pretendEnv({ subgroupMinSize, limits: { maxComputeWorkgroupStorageSize: workgroupBytes } }).gpu as GpuContext;

describe('row-split', () => {
  it('splits a row over the fewest invocations whose share fits 8 vec4 registers', () => {
    const H = (d: number) => {
      const tiles = rowSplitTilesFor({ B: 1, N: 4096, d }, gpuOf(32));
      return typeof tiles === 'string' ? tiles : tiles.H;
    };
    expect([4, 16, 32, 36, 44, 64, 80, 96, 100, 128].map(H)).toEqual([1, 1, 1, 2, 2, 2, 4, 4, 4, 4]);
    expect(rowSplitTilesFor({ B: 1, N: 4096, d: 64 }, gpuOf(32))).toEqual({ H: 2, BC: 32, WG: 128, prefetch: false });
    expect(rowSplitTilesFor({ B: 1, N: 128, d: 32 }, gpuOf(32))).toEqual({ H: 1, BC: 16, WG: 64, prefetch: true });
  });

  it('declines with the reason: subgroups too small for the split, too little workgroup memory, no subgroups', () => {
    expect(rowSplitTilesFor({ B: 1, N: 64, d: 128 }, gpuOf(2))).toMatch(/d = 128 does not split into at most 2 parts/);
    expect(rowSplitTilesFor({ B: 1, N: 64, d: 64 }, gpuOf(32, 8192))).toMatch(/16\.0 KiB of workgroup memory, over this GPU's 8\.00 KiB/);
    expect(canRun(rowSplit, { B: 1, N: 64, d: 36 }, pretendEnv({}))).toBe(true);
    expect(canRun(rowSplit, { B: 1, N: 64, d: 64 }, pretendEnv({ features: [] }))).toMatch(/subgroups/);
  });
});

describe('split-keys', () => {
  it('splits the keys only while the grid is short of 640 workgroups, into at most 8 ranges of at least one tile', () => {
    expect(keySplits(160, 64)).toBe(4); // 10×2048×64 on an H100: 160 row blocks
    expect(keySplits(512, 1024)).toBe(2);
    expect(keySplits(640, 1024)).toBe(1);
    expect(keySplits(13600, 8)).toBe(1);
    expect(keySplits(1, 1000)).toBe(8);
    expect(keySplits(1, 3)).toBe(3);
  });
});

describe('lean-loop and four-rows', () => {
  it('lean-loop steps over 16 keys only where a row group is one invocation (no shuffles)', () => {
    expect([1, 2, 4].map(keysPerStep)).toEqual([16, 8, 8]);
  });

  it('four-rows splits a row over the fewest invocations whose share fits 4 vec4 registers, and declines past the subgroup', () => {
    const H = (d: number) => {
      const tiles = fourRowsTilesFor({ B: 1, N: 4096, d }, gpuOf(32));
      return typeof tiles === 'string' ? tiles : tiles.H;
    };
    expect([4, 16, 20, 32, 36, 64, 68, 100, 128].map(H)).toEqual([1, 1, 2, 2, 4, 4, 8, 8, 8]);
    expect(fourRowsTilesFor({ B: 1, N: 64, d: 128 }, gpuOf(4))).toMatch(/d = 128 does not split into at most 4 parts of at most 4 vec4s/);
    expect(canRun(fourRows, { B: 1, N: 64, d: 64 }, pretendEnv({ features: [] }))).toMatch(/subgroups/);
  });
});
