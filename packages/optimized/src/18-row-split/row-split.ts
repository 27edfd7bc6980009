/**
 * Rung 18, row-split: each pair of query rows is owned by H invocations that split d between them
 * (row-split.wgsl); Q_i, S, P̃ and O stay in registers and workgroup memory holds only K_j and V_j. Row scores are
 * summed with subgroup shuffles, so the rung needs `subgroups`.
 */
import { gpuHeadSizeSupport, rowSplitPlan, rowSplitTilesFor, singlePassRung } from '@fa/core';
import code from './row-split.wgsl';

const ROW_SPLIT_KERNEL = { label: 'row-split.wgsl', code };

export const rowSplit = singlePassRung({
  id: 'row-split',
  parent: 'prefetch',
  title: 'GPU, each pair of query rows split over H invocations: Q, S, P̃ and O in registers, only K_j and V_j in workgroup memory',
  delta:
    'Each row pair owned by H invocations that sum their shares of the scores with subgroup shuffles: P̃ never goes ' +
    'through workgroup memory, Q stays in registers, a workgroup needs 4-16 KiB instead of about 43 (more warps per SM); ' +
    'O rescaled lazily.',
  requires: ['subgroups'],
  kernel: ROW_SPLIT_KERNEL,
  plan: (shape, gpu) => {
    const head = gpuHeadSizeSupport(shape);
    if (head !== true) return head;
    const tiles = rowSplitTilesFor(shape, gpu);
    return typeof tiles === 'string' ? tiles : rowSplitPlan(shape, tiles);
  },
});
