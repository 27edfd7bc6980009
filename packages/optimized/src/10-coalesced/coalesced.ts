/**
 * Rung 10, coalesced: rung 9's kernel with K_j stored transposed on chip (coalesced.wgsl, a copy of coalesced.wgsl),
 * so that neighbouring invocations of the S loop read neighbouring addresses. Same tiles and workgroup memory as
 * rungs 7-9.
 */
import { formatBytes, type Shape } from '@fa/io';
import { gpuHeadSizeSupport, singlePassRung, type GpuContext } from '@fa/core';
import { FUSED_WG, largestTiles, splitQStorageBytes } from '@fa/fused';
import code from './coalesced.wgsl';

export const coalesced = singlePassRung({
  id: 'coalesced',
  title: 'GPU, restructure with K_j transposed on chip: neighbouring invocations read neighbouring addresses',
  delta: 'Stores K_j transposed in workgroup memory, so the S loop’s neighbouring invocations (neighbouring keys) read consecutive vec4s.',
  kernel: { label: 'coalesced.wgsl', code },
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
