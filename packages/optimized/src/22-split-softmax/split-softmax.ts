/**
 * Rung 22, split-softmax: lean-loop with the online softmax of a row group's two rows split between the invocations
 * that share them (split-softmax.wgsl): one shuffle level sums and splits the scores, each invocation exponentiates
 * one row, and a second shuffle returns the other row's P̃. Same tiles, key ranges and plan as lean-loop.
 */
import { singlePassRung } from '@fa/core';
import { leanLoopPlanFor, leanLoopRounding } from '../plans/lean-loop.js';
import code from './split-softmax.wgsl';

const SPLIT_SOFTMAX_KERNEL = { label: 'split-softmax.wgsl', code };

export const splitSoftmax = singlePassRung({
  id: 'split-softmax',
  parent: 'lean-loop',
  title: 'GPU, lean-loop with each row\'s softmax computed once per row group instead of by every invocation of it',
  delta:
    'The two invocations of a pair hold their rows in opposite order, so one shuffle both sums the scores and leaves ' +
    'each with one whole row: half the exponentials and softmax arithmetic, P̃ of the other row by a second shuffle.',
  requires: ['subgroups'],
  kernel: SPLIT_SOFTMAX_KERNEL,
  plan: leanLoopPlanFor,
  rounding: leanLoopRounding(SPLIT_SOFTMAX_KERNEL),
});
