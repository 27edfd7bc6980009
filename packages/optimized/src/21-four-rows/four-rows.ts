/**
 * Rung 21, four-rows: lean-loop with four query rows per row group (four-rows.wgsl), so that every vec4 read from
 * K_j or V_j feeds 16 multiply-adds instead of 8. The key ranges, `combine` and the host plan are split-keys'.
 */
import type { Shape } from '@fa/io';
import { gpuHeadSizeSupport, rowGroupTilesFor, singlePassRung, splitKeysPlan, type GpuContext, type RowGroupLayout, type RowSplitTiles } from '@fa/core';
import code from './four-rows.wgsl';

const FOUR_ROWS_KERNEL = { label: 'four-rows.wgsl', code };

/** four-rows.wgsl: four rows per group, up to 4 vec4 columns of each per invocation, 8 keys per step. */
const FOUR_ROWS_LAYOUT: RowGroupLayout = { rows: 4, C_MAX: 4, LD_MAX: 8, keysPerStep: 8 };

/**
 * The tiles for each H (2 at d ≤ 32, 4 at d ≤ 64, 8 at d ≤ 128): 16-key tiles in workgroups of 128, the next tile
 * prefetched; measured on an H100 against 32-key tiles, workgroups of 64 and 256, with and without prefetch
 * (docs/rungs/21-four-rows.md).
 */
function tilesFor(H: number): RowSplitTiles {
  return { H, BC: 16, WG: 128, prefetch: true };
}

export function fourRowsTilesFor(shape: Shape, gpu: GpuContext): RowSplitTiles | string {
  return rowGroupTilesFor(shape, gpu, FOUR_ROWS_LAYOUT, tilesFor);
}

export const fourRows = singlePassRung({
  id: 'four-rows',
  parent: 'lean-loop',
  title: 'GPU, lean-loop with four query rows per row group: each vector read from workgroup memory feeds 16 multiply-adds',
  delta:
    'A row group owns four rows instead of two and H doubles so that Q and O still fit the registers: half the ' +
    'workgroup-memory reads per multiply-add, for one more level of shuffles. Pays only at d = 128.',
  requires: ['subgroups'],
  kernel: FOUR_ROWS_KERNEL,
  plan: (shape: Shape, gpu: GpuContext) => {
    const head = gpuHeadSizeSupport(shape);
    if (head !== true) return head;
    const tiles = fourRowsTilesFor(shape, gpu);
    return typeof tiles === 'string' ? tiles : splitKeysPlan(shape, tiles, FOUR_ROWS_LAYOUT);
  },
});
