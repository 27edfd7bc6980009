/**
 * Rung 6, fused-maxsmem: the kernel of rung 5 (05-fused/fused.wgsl, unchanged) with the largest square tiles the
 * adapter's workgroup memory holds instead of 16 × 16.
 */
import { formatBytes, type Shape } from '@fa/io';
import { gpuHeadSizeSupport, singlePassRung, type GpuContext } from '@fa/core';
import { FUSED_KERNEL, fusedPlan } from '../05-fused/fused.js';
import { fusedStorageBytes, largestTiles } from '../tiles.js';

export const fusedMaxsmem = singlePassRung({
  id: 'fused-maxsmem',
  parent: 'fused',
  title: "GPU, the fused kernel with the largest tiles the adapter's workgroup memory holds",
  delta: 'Sizes Br = Bc from maxComputeWorkgroupStorageSize instead of 16, so O, ℓ, m make fewer round trips to memory.',
  kernel: FUSED_KERNEL,
  plan: (shape: Shape, gpu: GpuContext) => {
    const head = gpuHeadSizeSupport(shape);
    if (head !== true) return head;
    const limit = gpu.report.limits.maxComputeWorkgroupStorageSize;
    const tiles = largestTiles(limit, shape.d, shape.N, fusedStorageBytes);
    if (!tiles) return `tiles for d = ${shape.d} need ${formatBytes(fusedStorageBytes(shape.d, { BR: 1, BC: 1 }))} of workgroup memory, over this GPU's ${formatBytes(limit)}`;
    return fusedPlan(shape, tiles);
  },
});
