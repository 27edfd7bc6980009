/**
 * Rung 7, fused-split-q: one workgroup per (batch, query tile), loops swapped (fused-split-q.wgsl, a copy of
 * fused.wgsl): O_i, ℓ_i and m_i stay in workgroup memory, so the plan binds no ℓ and m buffers.
 */
import { formatBytes, type Shape } from '@fa/io';
import { gpuHeadSizeSupport, singlePassRung, type GpuContext, type SinglePassPlan } from '@fa/core';
import { FUSED_WG, largestTiles, splitQStorageBytes, type Tiles } from '../tiles.js';
import code from './fused-split-q.wgsl';

/**
 * The plan of a kernel that runs one workgroup per (batch, query tile) with the largest square tiles (balanced over N)
 * whose workgroup memory `bytesOf` fits the adapter, and `invocations` invocations per workgroup.
 */
export function largestTilesPlan(bytesOf: (d: number, tiles: Tiles) => number, invocations: (tiles: Tiles, d: number) => number) {
  return (shape: Shape, gpu: GpuContext): SinglePassPlan | string => {
    const head = gpuHeadSizeSupport(shape);
    if (head !== true) return head;
    const { N, d } = shape;
    const limit = gpu.report.limits.maxComputeWorkgroupStorageSize;
    const tiles = largestTiles(limit, d, N, bytesOf);
    if (!tiles) return `tiles for d = ${d} need ${formatBytes(bytesOf(d, { BR: 1, BC: 1 }))} of workgroup memory, over this GPU's ${formatBytes(limit)}`;
    const Tr = Math.ceil(N / tiles.BR);
    const WG = invocations(tiles, d);
    return {
      constants: { D: d, BR: tiles.BR, BC: tiles.BC, WG },
      workgroupBytes: bytesOf(d, tiles),
      workgroups: (batches) => batches * Tr,
      uniforms: (batches) => ({ N, batches, scale: 1 / Math.sqrt(d) }),
      summary: `Br = ${tiles.BR}, Bc = ${tiles.BC}, ${WG} invocations`,
    };
  };
}

/**
 * The plan of fused-split-q.wgsl, and of the kernels copied from it that keep its tiles and workgroup memory (rungs
 * 8-10: vec4 arrays of Bc·d/4 elements take the bytes of f32 arrays of Bc·d).
 */
export const splitQPlan = largestTilesPlan(splitQStorageBytes, () => FUSED_WG);

export const fusedSplitQ = singlePassRung({
  id: 'fused-split-q',
  parent: 'fused',
  title: 'GPU, one workgroup per (batch, Q tile), loops swapped: O, ℓ, m stay on chip',
  delta: 'Launches B·Tr workgroups instead of B and keeps O_i, ℓ_i, m_i in workgroup memory, written once at the end.',
  kernel: { label: 'fused-split-q.wgsl', code },
  plan: splitQPlan,
});
