/**
 * The tile plans of the fused family: rung 5's fixed 16 × 16 tiles, and the largest square tiles (Br = Bc) whose
 * workgroup memory fits the adapter's maxComputeWorkgroupStorageSize (49152 bytes on an H100, 32 KiB on Mesa's
 * lavapipe, 16 KiB as WebGPU's default), for rungs 6-7 and the optimized rungs 8-12 copied from rung 7. The
 * workgroup memory of a tile size is the kernel's own declarations, evaluated for it (`kernelWorkgroupBytes`).
 */
import { formatBytes, type Shape } from '@fa/io';
import { gpuHeadSizeSupport, kernelWorkgroupBytes, type GpuContext, type KernelSource, type SinglePassPlan, type TileStudy } from '@fa/core';

export interface Tiles {
  /** Query rows per tile. */
  BR: number;
  /** Key/value rows per tile. */
  BC: number;
}

/** Threads per workgroup of every fused kernel; one thread per row computes the row statistics, so Br ≤ WG. */
export const FUSED_WG = 128;

/** Bytes of workgroup memory `kernel` declares at head size d with `tiles`. */
export function tileBytes(kernel: KernelSource, d: number, { BR, BC }: Tiles): number {
  return kernelWorkgroupBytes(kernel.code, { D: d, BR, BC });
}

/**
 * The largest square tiles (up to FUSED_WG rows) whose workgroup memory in `kernel` fits `limit`, balanced over N:
 * with at most T rows per tile N needs ⌈N/T⌉ tiles, and ⌈N/⌈N/T⌉⌉ rows per tile gives the same count with no
 * near-empty last tile (N = 128 with T = 63 would run three tiles of 63, the last holding 2 rows; balanced, three of 43).
 */
function largestTiles(kernel: KernelSource, limit: number, d: number, N: number): Tiles | undefined {
  for (let T = FUSED_WG; T >= 1; T--) {
    if (tileBytes(kernel, d, { BR: T, BC: T }) <= limit) {
      const balanced = Math.ceil(N / Math.ceil(N / T));
      return { BR: balanced, BC: balanced };
    }
  }
  return undefined;
}

/** The largest tiles for `shape` in `kernel` on this adapter, or why not even 1 × 1 tiles fit. */
export function largestTilesFor(kernel: KernelSource, { N, d }: Shape, gpu: GpuContext): Tiles | string {
  const limit = gpu.report.limits.maxComputeWorkgroupStorageSize;
  const tiles = largestTiles(kernel, limit, d, N);
  return tiles ?? `tiles for d = ${d} need ${formatBytes(tileBytes(kernel, d, { BR: 1, BC: 1 }))} of workgroup memory, over this GPU's ${formatBytes(limit)}`;
}

/**
 * The plan of a kernel that runs one workgroup per (batch, query tile) with the largest square tiles (balanced over N)
 * whose workgroup memory fits the adapter, and `invocations` invocations per workgroup.
 */
export function largestTilesPlan(kernel: KernelSource, invocations: (tiles: Tiles, d: number) => number) {
  return (shape: Shape, gpu: GpuContext): SinglePassPlan | string => {
    const head = gpuHeadSizeSupport(shape);
    if (head !== true) return head;
    const tiles = largestTilesFor(kernel, shape, gpu);
    if (typeof tiles === 'string') return tiles;
    return tilesPlan(shape, tiles, invocations(tiles, shape.d));
  };
}

/** The plan of a kernel of the family with given tiles and invocations: one workgroup per (batch, query tile). */
export function tilesPlan({ N, d }: Shape, tiles: Tiles, WG: number): SinglePassPlan {
  const Tr = Math.ceil(N / tiles.BR);
  return {
    constants: { D: d, BR: tiles.BR, BC: tiles.BC, WG },
    workgroups: (batches) => batches * Tr,
    uniforms: (batches) => ({ N, batches, scale: 1 / Math.sqrt(d) }),
    summary: `Br = ${tiles.BR}, Bc = ${tiles.BC}, ${WG} invocations`,
  };
}

/**
 * The tile study of rung 7's kernel (`hw4-cli sweep --over tiles`): any Br up to its FUSED_WG invocations (one row
 * statistic each) and any Bc, where the workgroup memory fits (the single-pass host checks it).
 */
export function splitQTileStudy(): TileStudy {
  return {
    axes: [
      { name: 'BR', meaning: 'query rows per workgroup (Br)', values: [8, 16, 32, 64, 128] },
      { name: 'BC', meaning: 'keys per tile (Bc)', values: [8, 16, 32, 64, 128] },
    ],
    plan: (shape, _gpu, { BR = 0, BC = 0 }) => {
      const head = gpuHeadSizeSupport(shape);
      if (head !== true) return head;
      if (BR < 1 || BR > FUSED_WG) return `Br = ${BR}: one of the kernel's ${FUSED_WG} invocations computes each row's statistics, so 1 ≤ Br ≤ ${FUSED_WG}`;
      if (BC < 1) return `Bc = ${BC}: at least one key per tile`;
      return tilesPlan(shape, { BR, BC }, FUSED_WG);
    },
  };
}

/**
 * The plan of fused-split-q.wgsl (rung 7), and of the kernels copied from it that keep its tiles and workgroup memory
 * (rungs 8-10): FUSED_WG invocations per workgroup.
 */
export function splitQPlan(kernel: KernelSource) {
  return largestTilesPlan(kernel, () => FUSED_WG);
}
