/**
 * Rung 9, restructure: rung 8's kernel with the invariant work hoisted out of its loops (restructure.wgsl, a copy of
 * vec4.wgsl): 1/√d folded into Q_i, each invocation's place in the tile computed once, no division in any loop.
 * Same tiles and workgroup memory as rungs 7-8.
 */
import { singlePassRung } from '@fa/core';
import { splitQPlan } from '@fa/fused';
import code from './restructure.wgsl';

const RESTRUCTURE_KERNEL = { label: 'restructure.wgsl', code };

export const restructure = singlePassRung({
  id: 'restructure',
  parent: 'vec4',
  title: 'GPU, vec4 with invariant work hoisted: scale folded into Q_i, no division in any loop',
  delta: 'Folds 1/√d into Q_i at load and computes each invocation’s row, column and bases once instead of per element.',
  kernel: RESTRUCTURE_KERNEL,
  plan: splitQPlan(RESTRUCTURE_KERNEL),
});
