/**
 * Rung 8, vec4: rung 7's kernel with Q, K, V and O as vec4<f32> (vec4.wgsl, a copy of fused-split-q.wgsl): the same
 * tiles and the same workgroup memory, a quarter of the load instructions and dot() of vec4s in the S loop.
 */
import { formatBytes, type Shape } from '@fa/io';
import { gpuHeadSizeSupport, singlePassRung, type GpuContext } from '@fa/core';
import { FUSED_WG, largestTiles, splitQStorageBytes } from '@fa/fused';
import code from './vec4.wgsl';

export const vec4 = singlePassRung({
  id: 'vec4',
  title: 'GPU, fused-split-q with vec4 loads, stores and dot products',
  delta: 'Q, K, V and O move as vec4<f32> in storage and workgroup memory, and S_ij is a sum of vec4 dot()s.',
  kernel: { label: 'vec4.wgsl', code },
  plan: (shape: Shape, gpu: GpuContext) => {
    const head = gpuHeadSizeSupport(shape);
    if (head !== true) return head;
    const { N, d } = shape;
    const limit = gpu.report.limits.maxComputeWorkgroupStorageSize;
    // vec4 arrays of Bc·d/4 elements take exactly the bytes of f32 arrays of Bc·d: the tiles of rung 7.
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
