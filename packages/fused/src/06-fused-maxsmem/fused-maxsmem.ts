/**
 * Rung 6, fused-maxsmem: the kernel of rung 5 (05-fused/fused.wgsl, unchanged) with the largest square tiles the
 * adapter's workgroup memory holds instead of 16 × 16.
 */
import type { Shape } from '@fa/io';
import { gpuHeadSizeSupport, singlePassRung, type GpuContext } from '@fa/core';
import { FUSED_KERNEL, fusedPlan } from '../fused-kernel.js';
import { largestTilesFor } from '../tiles.js';

export const fusedMaxsmem = singlePassRung({
  id: 'fused-maxsmem',
  parent: 'fused',
  title: "GPU, the fused kernel with the largest tiles the adapter's workgroup memory holds",
  delta: 'Sizes Br = Bc from maxComputeWorkgroupStorageSize instead of 16, so O, ℓ, m make fewer round trips to memory.',
  kernel: FUSED_KERNEL,
  plan: (shape: Shape, gpu: GpuContext) => {
    const head = gpuHeadSizeSupport(shape);
    if (head !== true) return head;
    const tiles = largestTilesFor(FUSED_KERNEL, shape, gpu);
    return typeof tiles === 'string' ? tiles : fusedPlan(shape, tiles);
  },
});
