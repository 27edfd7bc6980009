/**
 * The tile plan of the row-group rungs 18-22: each row group (two query rows, four in rung 21) is owned by H
 * invocations that split d between them; workgroup memory holds only K_j and V_j. What a kernel of the family fixes
 * in its WGSL (rows per group, register bounds, keys per step) is its `RowGroupLayout`.
 */
import { formatBytes, type Shape } from '@fa/io';
import type { GpuContext } from '../gpu-context.js';
import type { SinglePassPlan } from '../gpu/single-pass.js';

/** The tiles of a row-group kernel: H invocations per row group, Bc keys per tile, WG invocations. */
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

/**
 * Workgroup bytes of every row-group kernel (and of @fa/sdpa's, which copies lean-loop's): K_j and V_j, Bc rows of d
 * floats each, padded to H·C vec4s. The family's one formula: @fa/sdpa chooses its tiles here too, with no rung's
 * kernel at hand (the single-pass host checks each rung's plan against its kernel's declarations as well).
 */
export function rowSplitBytes(d: number, { H, BC }: RowSplitTiles): number {
  return 2 * BC * H * columnsPerInvocation(d, H) * 16;
}

/** Why `tiles` cannot run head size d with subgroups of `subgroupSize`, or undefined when they can. */
function rowSplitProblem(
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

/** The plan of row-split.wgsl and of the kernels copied from it: one workgroup per BR query rows. */
export function rowSplitPlan({ N, d }: Shape, tiles: RowSplitTiles, layout: RowGroupLayout = ROW_SPLIT_LAYOUT): SinglePassPlan {
  const { H, BC, WG, prefetch } = tiles;
  const BR = (WG / H) * layout.rows; // query rows per workgroup (the kernel's BR)
  return {
    constants: { D: d, H, BC, WG, PREFETCH: prefetch ? 1 : 0 },
    workgroups: (batches) => batches * Math.ceil(N / BR),
    uniforms: (batches) => ({ N, batches, scaleLog2: Math.LOG2E / Math.sqrt(d) }),
    summary: `H = ${H}, Bc = ${BC}, ${WG} invocations${prefetch ? ', prefetch' : ''}`,
  };
}
