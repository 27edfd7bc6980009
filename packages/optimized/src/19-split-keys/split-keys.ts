/**
 * Rung 19, split-keys: row-split's kernel with each row block's keys split over S workgroups, and a second entry
 * point that merges the S partial results (split-keys.wgsl). More workgroups for shapes with few rows.
 */
import type { Shape } from '@fa/io';
import { gpuHeadSizeSupport, rowSplitTilesFor, singlePassRung, splitKeysPlan, type GpuContext } from '@fa/core';
import code from './split-keys.wgsl';

const SPLIT_KEYS_KERNEL = { label: 'split-keys.wgsl', code };

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
