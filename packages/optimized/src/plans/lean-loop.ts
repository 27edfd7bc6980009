/**
 * The plan and rounding of the kernels whose inner loop is lean-loop's (rungs 20 and 22): split-keys' plan (row-split's
 * tiles, the key ranges, `combine`) with KEYS keys per step, 16 where a row group is one invocation.
 */
import type { Shape } from '@fa/io';
import {
  blockedModel,
  gpuHeadSizeSupport,
  keyRanges,
  lazyRescaleLag,
  rowGroupTilesFor,
  rowSplitTiles,
  ROW_SPLIT_LAYOUT,
  splitKeysPlan,
  type GpuContext,
  type KernelSource,
  type RoundingModel,
  type RowGroupLayout,
  type RowSplitTiles,
  type SinglePassPlan,
  type TileStudy,
} from '@fa/core';

/** Row-split's rows and register bounds; a step scores up to 16 keys, so Bc must be a multiple of 16. */
const LEAN_LOOP_LAYOUT: RowGroupLayout = { ...ROW_SPLIT_LAYOUT, keysPerStep: 16 };

/** Keys per step of the inner loop (the kernel's KEYS): 16 where a row group is one invocation (no shuffles), else 8. */
export function keysPerStep(H: number): number {
  return H === 1 ? 16 : 8;
}

/** split-keys' plan with the kernel's KEYS. */
function leanLoopPlan(shape: Shape, tiles: RowSplitTiles): SinglePassPlan {
  const keys = keysPerStep(tiles.H);
  const plan = splitKeysPlan(shape, tiles, LEAN_LOOP_LAYOUT);
  return { ...plan, constants: { ...plan.constants, KEYS: keys }, summary: `${plan.summary}, ${keys} keys per step` };
}

/** The plan of a kernel with lean-loop's loop and layout, or why d cannot run. */
export function leanLoopPlanFor(shape: Shape, gpu: GpuContext): SinglePassPlan | string {
  const head = gpuHeadSizeSupport(shape);
  if (head !== true) return head;
  const tiles = rowGroupTilesFor(shape, gpu, LEAN_LOOP_LAYOUT, rowSplitTiles);
  return typeof tiles === 'string' ? tiles : leanLoopPlan(shape, tiles);
}

/**
 * The tile study of a kernel with lean-loop's loop (`hw4-cli sweep --over tiles`): invocations per workgroup (so
 * Br = WG/H·2 query rows) and keys per tile, with the plan's H, prefetch and key ranges; the layout's register bounds
 * and the workgroup memory are checked as for the plan's own tiles.
 */
export const leanLoopTileStudy: TileStudy = {
  axes: [
    { name: 'WG', meaning: 'invocations per workgroup (Br = WG/H·2 query rows)', values: [32, 64, 128, 256] },
    { name: 'BC', meaning: 'keys per tile (Bc, a multiple of 16)', values: [16, 32, 64, 128] },
  ],
  plan: (shape, gpu, { WG = 0, BC = 0 }) => {
    const head = gpuHeadSizeSupport(shape);
    if (head !== true) return head;
    if (WG < 1 || BC < 1) return `WG = ${WG}, Bc = ${BC}: both at least 1`;
    const tiles = rowGroupTilesFor(shape, gpu, LEAN_LOOP_LAYOUT, (H) => ({ ...rowSplitTiles(H), WG, BC }));
    return typeof tiles === 'string' ? tiles : leanLoopPlan(shape, tiles);
  },
};

/**
 * How a kernel with lean-loop's loop rounds: each step sums its KEYS products P̃·V apart before adding them to O, ℓ
 * gains at most two sums per 16 keys (so at most N/8 additions), SPLITS key ranges are merged, and O and ℓ are
 * rescaled lazily (the kernel's TAU).
 */
export function leanLoopRounding(kernel: KernelSource) {
  const lag = lazyRescaleLag(kernel);
  return (shape: Shape, plan: SinglePassPlan): RoundingModel => blockedModel(shape.d, plan.constants.KEYS ?? 16, Math.ceil(shape.N / 8), keyRanges(plan), lag);
}
