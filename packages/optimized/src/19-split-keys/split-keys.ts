/**
 * Rung 19, split-keys: row-split's kernel with each row block's keys split over S workgroups, and a second entry
 * point that merges the S partial results (split-keys.wgsl). More workgroups for shapes with few rows.
 */
import type { Shape } from '@fa/io';
import { gpuHeadSizeSupport, singlePassRung, type GpuContext, type SinglePassPlan } from '@fa/core';
import { ROW_SPLIT_LAYOUT, rowSplitPlan, rowSplitTilesFor, type RowGroupLayout, type RowSplitTiles } from '../18-row-split/row-split.js';
import code from './split-keys.wgsl';

export const SPLIT_KEYS_KERNEL = { label: 'split-keys.wgsl', code };

/**
 * Workgroups the grid should reach before the keys are split. Measured on an H100 at 10×2048×64 (160 row blocks):
 * S = 2, 4, 8 took 0.509, 0.427, 0.432 ms against 0.616 ms unsplit; at 2×32768×64 (512 row blocks) S = 2 saved 0.5%.
 */
const TARGET_WORKGROUPS = 640;
/** Most key ranges per row block. */
const MAX_SPLITS = 8;
/** Invocations per workgroup of the `combine` entry point (its override CW). */
const COMBINE_WORKGROUP = 64;

/**
 * Key ranges per row block: 1 when `rowBlocks` workgroups reach TARGET_WORKGROUPS, else enough to reach it, at most
 * MAX_SPLITS, and no more than `tiles`, so that every range has at least one K/V tile.
 */
export function keySplits(rowBlocks: number, tiles: number): number {
  return Math.max(1, Math.min(Math.ceil(TARGET_WORKGROUPS / rowBlocks), MAX_SPLITS, tiles));
}

/**
 * The plan: row-split's, with S = keySplits(…) times the workgroups and a `combine` dispatch when S > 1. The kernel is
 * a copy of row-split's, so row-split's tiles (and their register bounds, C_MAX and LD_MAX) hold for it too. S goes to
 * the kernel as the uniform `splits`, not as a constant: the same compiled pipelines serve every S.
 */
export function splitKeysPlan(shape: Shape, tiles: RowSplitTiles, layout: RowGroupLayout = ROW_SPLIT_LAYOUT): SinglePassPlan {
  const { N, d } = shape;
  const rows = rowSplitPlan(shape, tiles, layout);
  const S = keySplits(rows.workgroups(shape.B), Math.ceil(N / tiles.BC));
  const D4 = d / 4;
  if (S === 1) {
    // The kernel writes O itself; the scratch bindings still need a buffer (16 bytes a batch, never touched).
    return {
      ...rows,
      constants: { ...rows.constants, CW: COMBINE_WORKGROUP },
      uniforms: (batches) => ({ ...rows.uniforms(batches), splits: 1 }),
      scratchBytesPerBatch: { Opart: 16, ML: 16 },
      summary: `${rows.summary}, keys not split`,
    };
  }
  return {
    ...rows,
    constants: { ...rows.constants, CW: COMBINE_WORKGROUP },
    uniforms: (batches) => ({ ...rows.uniforms(batches), splits: S }),
    workgroups: (batches) => rows.workgroups(batches) * S,
    scratchBytesPerBatch: { Opart: S * N * d * 4, ML: S * N * 8 },
    followedBy: [{ entryPoint: 'combine', workgroups: (batches) => Math.ceil((batches * N * D4) / COMBINE_WORKGROUP) }],
    summary: `${rows.summary}, keys split ${S} ways`,
  };
}

export const splitKeys = singlePassRung({
  id: 'split-keys',
  parent: 'row-split',
  title: 'GPU, row-split with the keys of each row block split over S workgroups, then a pass that merges the parts',
  delta:
    'S workgroups share a row block, each over a range of K/V tiles, writing unnormalized O, m and ℓ; a second ' +
    'dispatch merges them. S times the workgroups for shapes with few rows, for the cost of one more pass.',
  requires: ['subgroups'],
  kernel: SPLIT_KEYS_KERNEL,
  plan: (shape: Shape, gpu: GpuContext) => {
    const head = gpuHeadSizeSupport(shape);
    if (head !== true) return head;
    const tiles = rowSplitTilesFor(shape, gpu);
    return typeof tiles === 'string' ? tiles : splitKeysPlan(shape, tiles);
  },
});
