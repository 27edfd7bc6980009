/**
 * Rung 20, lean-loop: split-keys' algorithm and host plan, its inner loop written for the compiler (lean-loop.wgsl):
 * scores as chains of multiply-adds, the shuffle levels written out, 16 keys per step where no shuffles are needed.
 */
import type { Shape } from '@fa/io';
import { blockedModel, gpuHeadSizeSupport, keyRanges, lazyRescaleLag, singlePassRung, type GpuContext, type RoundingModel, type SinglePassPlan } from '@fa/core';
import { ROW_SPLIT_LAYOUT, rowGroupTilesFor, rowSplitTiles, type RowGroupLayout, type RowSplitTiles } from '../18-row-split/row-split.js';
import { splitKeysPlan } from '../19-split-keys/split-keys.js';
import code from './lean-loop.wgsl';

export const LEAN_LOOP_KERNEL = { label: 'lean-loop.wgsl', code };

/** lean-loop.wgsl: row-split's rows and register bounds; a step scores up to 16 keys, so Bc must be a multiple of 16. */
const LEAN_LOOP_LAYOUT: RowGroupLayout = { ...ROW_SPLIT_LAYOUT, keysPerStep: 16 };

/** Keys per step of the inner loop (the kernel's KEYS): 16 where a row group is one invocation (no shuffles), else 8. */
export function keysPerStep(H: number): number {
  return H === 1 ? 16 : 8;
}

/** split-keys' plan (row-split's tiles, the key ranges, `combine`) with the kernel's KEYS. */
function leanLoopPlan(shape: Shape, tiles: RowSplitTiles): SinglePassPlan {
  const keys = keysPerStep(tiles.H);
  const plan = splitKeysPlan(shape, tiles, LEAN_LOOP_LAYOUT);
  return { ...plan, constants: { ...plan.constants, KEYS: keys }, summary: `${plan.summary}, ${keys} keys per step` };
}

/** The plan of lean-loop.wgsl and of the kernels copied from it with the same layout (rung 22), or why d cannot run. */
export function leanLoopPlanFor(shape: Shape, gpu: GpuContext): SinglePassPlan | string {
  const head = gpuHeadSizeSupport(shape);
  if (head !== true) return head;
  const tiles = rowGroupTilesFor(shape, gpu, LEAN_LOOP_LAYOUT, rowSplitTiles);
  return typeof tiles === 'string' ? tiles : leanLoopPlan(shape, tiles);
}

/**
 * How lean-loop.wgsl (and rung 22, which keeps its loop) rounds: each step sums its KEYS products P̃·V apart before
 * adding them to O, ℓ gains at most two sums per 16 keys (so at most N/8 additions), SPLITS key ranges are merged, and
 * O and ℓ are rescaled lazily (TAU).
 */
export function leanLoopRounding(shape: Shape, plan: SinglePassPlan): RoundingModel {
  return blockedModel(shape.d, plan.constants.KEYS ?? 16, Math.ceil(shape.N / 8), keyRanges(plan), lazyRescaleLag(LEAN_LOOP_KERNEL));
}

export const leanLoop = singlePassRung({
  id: 'lean-loop',
  parent: 'split-keys',
  title: 'GPU, split-keys with its inner loop written for the compiler: multiply-add chains, shuffles written out',
  delta:
    'Scores accumulated as chains of multiply-adds instead of dot products added afterwards (no extra adds), the ' +
    'shuffle levels written out instead of a loop the compiler keeps, and 16 keys per step where no shuffles are needed.',
  requires: ['subgroups'],
  kernel: LEAN_LOOP_KERNEL,
  plan: leanLoopPlanFor,
  rounding: leanLoopRounding,
});
