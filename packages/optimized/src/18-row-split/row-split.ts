/**
 * Rung 18, row-split: each pair of query rows is owned by H invocations that split d between them
 * (row-split.wgsl); Q_i, S, P̃ and O stay in registers and workgroup memory holds only K_j and V_j. Row scores are
 * summed with subgroup shuffles, so the rung needs `subgroups`.
 */
import { formatBytes, type Shape } from '@fa/io';
import { gpuHeadSizeSupport, singlePassRung, type GpuContext, type SinglePassPlan } from '@fa/core';
import code from './row-split.wgsl';

export const ROW_SPLIT_KERNEL = { label: 'row-split.wgsl', code };

/** The tiles of row-split.wgsl: H invocations per pair of rows, Bc keys per tile, WG invocations. */
export interface RowSplitTiles {
  H: number;
  BC: number;
  WG: number;
  /** Whether tile j + 1 is loaded into registers while tile j computes. */
  prefetch: boolean;
}

/**
 * What the row-group kernels (row-split and the rungs built on it) fix in their WGSL: query rows per row group, and the
 * bounds of their register arrays (C_MAX vec4 columns of a row per invocation, LD_MAX vec4s of a prefetched tile) and
 * the most keys one step of the inner loop scores (Bc must be a multiple of it).
 */
export interface RowGroupLayout {
  rows: number;
  C_MAX: number;
  LD_MAX: number;
  keysPerStep: number;
}

/** row-split.wgsl: two rows per group, up to 8 vec4 columns of each per invocation. */
export const ROW_SPLIT_LAYOUT: RowGroupLayout = { rows: 2, C_MAX: 8, LD_MAX: 8, keysPerStep: 8 };

/** Vec4 columns of a row per invocation: d/4 over H, rounded up (the kernel pads rows of K_j, V_j to H of them). */
const columnsPerInvocation = (d: number, H: number): number => Math.ceil(d / 4 / H);

/** Workgroup bytes: K_j and V_j, Bc rows of d floats each, padded to H·C vec4s. */
export function rowSplitBytes(d: number, { H, BC }: RowSplitTiles): number {
  return 2 * BC * H * columnsPerInvocation(d, H) * 16;
}

/** Why `tiles` cannot run head size d with subgroups of `subgroupSize`, or undefined when they can. */
export function rowSplitProblem(
  d: number,
  tiles: RowSplitTiles,
  subgroupSize: number,
  { C_MAX, LD_MAX, keysPerStep }: RowGroupLayout = ROW_SPLIT_LAYOUT,
): string | undefined {
  const { H, BC, WG } = tiles;
  if (H > subgroupSize) return `H = ${H} invocations per row do not fit a subgroup of ${subgroupSize}`;
  const columns = columnsPerInvocation(d, H);
  if (columns > C_MAX) return `each invocation would hold ${columns} vec4s of a row, more than the kernel's ${C_MAX}`;
  if (BC % keysPerStep !== 0) return `Bc = ${BC} is not a multiple of ${keysPerStep}`;
  if (WG % H !== 0) return `${WG} invocations do not make whole row groups of H = ${H}`;
  if (tiles.prefetch && Math.ceil((BC * d) / 4 / WG) > LD_MAX) {
    return `a tile of ${BC} keys needs more than ${LD_MAX} vec4 loads per invocation`;
  }
  return undefined;
}

/**
 * The tiles for head size d, measured on an H100 (docs/rungs/18-row-split.md): H the fewest invocations per row pair
 * whose share of a row fits the registers (⌈d/(4H)⌉ ≤ 8 vec4s; the kernel pads a d/4 that H does not divide);
 * with H = 1 (d ≤ 32) 16-key tiles in workgroups of
 * 64 with the next tile prefetched; with H = 2 (d ≤ 64) 32-key tiles in workgroups of 128, no prefetch (its
 * registers cost more than it hides); with H = 4 (d ≤ 128), 16-key tiles in workgroups of 128, prefetched.
 */
export function rowSplitTilesFor(shape: Shape, gpu: GpuContext): RowSplitTiles | string {
  return rowGroupTilesFor(shape, gpu, ROW_SPLIT_LAYOUT, rowSplitTiles);
}

/** The tiles `tilesFor(H)` for head size d in a kernel of `layout`, or why it cannot run d on this GPU. */
export function rowGroupTilesFor(
  shape: Shape,
  gpu: GpuContext,
  layout: RowGroupLayout,
  tilesFor: (H: number) => RowSplitTiles,
): RowSplitTiles | string {
  const subgroupSize = gpu.report.subgroupMinSize ?? 4;
  const H = rowShareCount(shape.d, subgroupSize, layout.C_MAX);
  if (H === undefined) {
    return `d = ${shape.d} does not split into at most ${subgroupSize} parts of at most ${layout.C_MAX} vec4s each`;
  }
  const tiles = tilesFor(H);
  const problem = rowSplitProblem(shape.d, tiles, subgroupSize, layout);
  if (problem !== undefined) return problem;
  const bytes = rowSplitBytes(shape.d, tiles);
  const limit = gpu.report.limits.maxComputeWorkgroupStorageSize;
  if (bytes > limit) return `tiles of ${tiles.BC} keys need ${formatBytes(bytes)} of workgroup memory, over this GPU's ${formatBytes(limit)}`;
  return tiles;
}

/** The fewest invocations H (a power of two up to the subgroup size) whose shares of d/4 fit `C_MAX` vec4s each. */
function rowShareCount(d: number, subgroupSize: number, C_MAX: number): number | undefined {
  for (let H = 1; H <= subgroupSize; H *= 2) {
    if (columnsPerInvocation(d, H) <= C_MAX) return H;
  }
  return undefined;
}

/** The measured tiles for each H (see above). */
export function rowSplitTiles(H: number): RowSplitTiles {
  if (H === 1) return { H, BC: 16, WG: 64, prefetch: true };
  if (H === 2) return { H, BC: 32, WG: 128, prefetch: false };
  return { H, BC: 16, WG: 128, prefetch: true };
}

export function rowSplitPlan({ N, d }: Shape, tiles: RowSplitTiles, layout: RowGroupLayout = ROW_SPLIT_LAYOUT): SinglePassPlan {
  const { H, BC, WG, prefetch } = tiles;
  const BR = (WG / H) * layout.rows; // query rows per workgroup (the kernel's BR)
  return {
    constants: { D: d, H, BC, WG, PREFETCH: prefetch ? 1 : 0 },
    workgroupBytes: rowSplitBytes(d, tiles),
    workgroups: (batches) => batches * Math.ceil(N / BR),
    uniforms: (batches) => ({ N, batches, scaleLog2: Math.LOG2E / Math.sqrt(d) }),
    summary: `H = ${H}, Bc = ${BC}, ${WG} invocations${prefetch ? ', prefetch' : ''}`,
  };
}

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
