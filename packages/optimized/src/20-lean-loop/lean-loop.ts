/**
 * Rung 20, lean-loop: split-keys' algorithm and host plan, its inner loop written for the compiler (lean-loop.wgsl):
 * scores as chains of multiply-adds, the shuffle levels written out, 16 keys per step where no shuffles are needed.
 */
import { singlePassRung } from '@fa/core';
import { leanLoopPlanFor, leanLoopRounding, leanLoopTileStudy } from '../plans/lean-loop.js';
import code from './lean-loop.wgsl';

const LEAN_LOOP_KERNEL = { label: 'lean-loop.wgsl', code };

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
  rounding: leanLoopRounding(LEAN_LOOP_KERNEL),
  tiles: leanLoopTileStudy,
});
