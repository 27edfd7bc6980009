/**
 * Rung 9, restructure: rung 8's kernel with the invariant work hoisted out of its loops (restructure.wgsl, a copy of
 * vec4.wgsl): 1/√d folded into Q_i, each invocation's place in the tile computed once, no division in any loop.
 * Same tiles and workgroup memory as rungs 7-8.
 */
import { formatBytes, type Shape } from '@fa/io';
import { gpuHeadSizeSupport, singlePassRung, type GpuContext } from '@fa/core';
import { FUSED_WG, largestTiles, splitQStorageBytes } from '@fa/fused';
import code from './restructure.wgsl';

export const restructure = singlePassRung({
  id: 'restructure',
  title: 'GPU, vec4 with invariant work hoisted: scale folded into Q_i, no division in any loop',
  delta: 'Folds 1/√d into Q_i at load and computes each invocation’s row, column and bases once instead of per element.',
  kernel: { label: 'restructure.wgsl', code },
  plan: (shape: Shape, gpu: GpuContext) => {
    const head = gpuHeadSizeSupport(shape);
    if (head !== true) return head;
    const { N, d } = shape;
    const limit = gpu.report.limits.maxComputeWorkgroupStorageSize;
    // Tiles are at most FUSED_WG rows, so the S loop's grid (Bc lanes per row) fits the workgroup.
    const tiles = largestTiles(limit, d, N, splitQStorageBytes);
    if (!tiles) return `tiles for d = ${d} need ${formatBytes(splitQStorageBytes(d, { BR: 1, BC: 1 }))} of workgroup memory, over this GPU's ${formatBytes(limit)}`;
    const Tr = Math.ceil(N / tiles.BR);
    return {
      constants: { D: d, BR: tiles.BR, BC: tiles.BC, WG: FUSED_WG },
      workgroupBytes: splitQStorageBytes(d, tiles),
      workgroups: (batches) => batches * Tr,
      uniforms: (batches) => ({ N, batches, scale: 1 / Math.sqrt(d) }),
      summary: `Br = ${tiles.BR}, Bc = ${tiles.BC}`,
    };
  },
});
