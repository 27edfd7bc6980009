/**
 * Rung 20, lean-loop: split-keys' algorithm and host plan, its inner loop written for the compiler (lean-loop.wgsl):
 * scores as chains of multiply-adds, the shuffle levels written out, 16 keys per step where no shuffles are needed.
 */
import type { Shape } from '@fa/io';
import { gpuHeadSizeSupport, singlePassRung, type GpuContext, type SinglePassPlan } from '@fa/core';
import { rowSplitTilesFor, type RowSplitTiles } from '../18-row-split/row-split.js';
import { splitKeysPlan } from '../19-split-keys/split-keys.js';
import code from './lean-loop.wgsl';

export const LEAN_LOOP_KERNEL = { label: 'lean-loop.wgsl', code };

/** Keys per step of the inner loop (the kernel's KEYS): 16 where a row group is one invocation (no shuffles), else 8. */
export function keysPerStep(H: number): number {
  return H === 1 ? 16 : 8;
}

/** split-keys' plan (row-split's tiles, the key ranges, `combine`) with the kernel's KEYS. */
export function leanLoopPlan(shape: Shape, tiles: RowSplitTiles): SinglePassPlan | string {
  const keys = keysPerStep(tiles.H);
  if (tiles.BC % keys !== 0) return `Bc = ${tiles.BC} is not a multiple of ${keys} keys per step`;
  const plan = splitKeysPlan(shape, tiles);
  return { ...plan, constants: { ...plan.constants, KEYS: keys }, summary: `${plan.summary}, ${keys} keys per step` };
}

export const leanLoop = singlePassRung({
  id: 'lean-loop',
  title: 'GPU, split-keys with its inner loop written for the compiler: multiply-add chains, shuffles written out',
  delta:
    'Scores accumulated as chains of multiply-adds instead of dot products added afterwards (no extra adds), the ' +
    'shuffle levels written out instead of a loop the compiler keeps, and 16 keys per step where no shuffles are needed.',
  builtOn: 'split-keys',
  requires: ['subgroups'],
  kernel: LEAN_LOOP_KERNEL,
  plan: (shape: Shape, gpu: GpuContext) => {
    const head = gpuHeadSizeSupport(shape);
    if (head !== true) return head;
    const tiles = rowSplitTilesFor(shape, gpu);
    return typeof tiles === 'string' ? tiles : leanLoopPlan(shape, tiles);
  },
});
