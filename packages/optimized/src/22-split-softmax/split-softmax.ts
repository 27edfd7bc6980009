/**
 * Rung 22, split-softmax: lean-loop with the online softmax of a row group's two rows split between the invocations
 * that share them (split-softmax.wgsl): one shuffle level sums and splits the scores, each invocation exponentiates
 * one row, and a second shuffle returns the other row's P̃. Same tiles, key ranges and plan as lean-loop.
 */
import type { Shape } from '@fa/io';
import { gpuHeadSizeSupport, singlePassRung, type GpuContext } from '@fa/core';
import { rowGroupTilesFor, rowSplitTiles } from '../18-row-split/row-split.js';
import { LEAN_LOOP_LAYOUT, leanLoopPlan } from '../20-lean-loop/lean-loop.js';
import code from './split-softmax.wgsl';

export const SPLIT_SOFTMAX_KERNEL = { label: 'split-softmax.wgsl', code };

export const splitSoftmax = singlePassRung({
  id: 'split-softmax',
  title: 'GPU, lean-loop with each row\'s softmax computed once per row group instead of by every invocation of it',
  delta:
    'The two invocations of a pair hold their rows in opposite order, so one shuffle both sums the scores and leaves ' +
    'each with one whole row: half the exponentials and softmax arithmetic, P̃ of the other row by a second shuffle.',
  builtOn: 'lean-loop',
  requires: ['subgroups'],
  kernel: SPLIT_SOFTMAX_KERNEL,
  plan: (shape: Shape, gpu: GpuContext) => {
    const head = gpuHeadSizeSupport(shape);
    if (head !== true) return head;
    const tiles = rowGroupTilesFor(shape, gpu, LEAN_LOOP_LAYOUT, rowSplitTiles);
    return typeof tiles === 'string' ? tiles : leanLoopPlan(shape, tiles);
  },
});
