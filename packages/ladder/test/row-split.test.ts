/**
 * Rung 18's plan: how many invocations share a row pair for each head size, and the reasons it declines. (Its output
 * is checked against the oracle by the conformance suite, and by the encoded-runner test.)
 */
import { describe, expect, it } from 'vitest';
import { canRun, type GpuContext } from '@fa/core';
import { rowSplitTilesFor } from '@fa/optimized';
import { findRung } from '../src/index.js';
import { pretendEnv } from './pretend-gpu.js';

const gpuOf = (subgroupMinSize: number, workgroupBytes = 49152): GpuContext =>
  pretendEnv({ subgroupMinSize, limits: { maxComputeWorkgroupStorageSize: workgroupBytes } }).gpu as GpuContext;

describe('row-split', () => {
  it('splits a row over the fewest invocations whose share fits 8 vec4 registers', () => {
    const H = (d: number) => {
      const tiles = rowSplitTilesFor({ B: 1, N: 4096, d }, gpuOf(32));
      return typeof tiles === 'string' ? tiles : tiles.H;
    };
    expect([4, 16, 32, 64, 80, 96, 128].map(H)).toEqual([1, 1, 1, 2, 4, 4, 4]);
    expect(rowSplitTilesFor({ B: 1, N: 4096, d: 64 }, gpuOf(32))).toEqual({ H: 2, BC: 32, WG: 128, prefetch: false });
    expect(rowSplitTilesFor({ B: 1, N: 128, d: 32 }, gpuOf(32))).toEqual({ H: 1, BC: 16, WG: 64, prefetch: true });
  });

  it('declines with the reason: a d/4 that does not split, subgroups too small, too little workgroup memory', () => {
    expect(rowSplitTilesFor({ B: 1, N: 64, d: 36 }, gpuOf(32))).toMatch(/d = 36 does not split/);
    expect(rowSplitTilesFor({ B: 1, N: 64, d: 128 }, gpuOf(2))).toMatch(/at most 2 parts/);
    expect(rowSplitTilesFor({ B: 1, N: 64, d: 64 }, gpuOf(32, 8192))).toMatch(/16\.0 KiB of workgroup memory, over this GPU's 8\.00 KiB/);
    const rung = findRung('row-split');
    expect(rung).toBeDefined();
    expect(canRun(rung!, { B: 1, N: 64, d: 36 }, pretendEnv({}))).toMatch(/row-split|d = 36/);
    expect(canRun(rung!, { B: 1, N: 64, d: 64 }, pretendEnv({ features: [] }))).toMatch(/subgroups/);
  });
});
