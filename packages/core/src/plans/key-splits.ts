/**
 * The key ranges of rungs 19-22 (split-keys and the rungs built on it) and of @fa/sdpa's tiled kernels: each row block's keys split over S workgroups
 * where the grid is short of workgroups, and a `combine` dispatch that merges the S partial results.
 */
import type { Shape } from '@fa/io';
import type { SinglePassPlan } from '../gpu/single-pass.js';
import { ROW_SPLIT_LAYOUT, rowSplitPlan, type RowGroupLayout, type RowSplitTiles } from './row-group.js';

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
 * MAX_SPLITS (or `most`), and no more than `tiles`, so that every range has at least one K/V tile.
 */
export function keySplits(rowBlocks: number, tiles: number, most = MAX_SPLITS): number {
  return Math.max(1, Math.min(Math.ceil(TARGET_WORKGROUPS / rowBlocks), most, tiles));
}

/**
 * The plan: row-split's, with S = keySplits(…) times the workgroups and a `combine` dispatch when S > 1. The kernels
 * are copies of row-split's, so row-split's tiles (and their register bounds, C_MAX and LD_MAX) hold for them too.
 * S goes to the kernel as the uniform `splits`, not as a constant: the same compiled pipelines serve every S.
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
