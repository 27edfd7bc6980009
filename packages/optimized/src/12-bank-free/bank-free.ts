/**
 * Rung 12, bank-free: rung 11's kernel with conflict-free workgroup-memory layouts (bank-free.wgsl, a copy of
 * lm-registers.wgsl): rows of Q_i, O_i and K_jᵀ padded to an odd number of vec4s, S stored transposed. The tiles are
 * sized with the padding counted.
 */
import { formatBytes, type Shape } from '@fa/io';
import { gpuHeadSizeSupport, singlePassRung, type GpuContext } from '@fa/core';
import { largestTiles, type Tiles } from '@fa/fused';
import { workgroupBytes } from '../11-lm-registers/lm-registers.js';
import code from './bank-free.wgsl';

/** Rows of n vec4s padded to an odd number of vec4s (the kernel's `n | 1`). */
const odd = (n: number): number => n | 1;

/** bank-free.wgsl: K_jᵀ (d/4 rows of Bc|1 vec4s), V_j (Bc × d), Q_i and O_i (Br rows of d/4|1 vec4s), S (Bc × Br). */
export function bankFreeStorageBytes(d: number, { BR, BC }: Tiles): number {
  const D4 = d / 4;
  return workgroupBytes(4 * D4 * odd(BC), BC * d, 4 * BR * odd(D4), BC * BR, 4 * BR * odd(D4));
}

export const bankFree = singlePassRung({
  id: 'bank-free',
  title: 'GPU, lm-registers with bank-conflict-free layouts: padded rows, S transposed',
  delta: 'Pads the rows of Q_i, O_i and K_jᵀ to an odd number of vec4s and stores S transposed, so no warp access shares a bank.',
  kernel: { label: 'bank-free.wgsl', code },
  plan: (shape: Shape, gpu: GpuContext) => {
    const head = gpuHeadSizeSupport(shape);
    if (head !== true) return head;
    const { N, d } = shape;
    const limit = gpu.report.limits.maxComputeWorkgroupStorageSize;
    const tiles = largestTiles(limit, d, N, bankFreeStorageBytes);
    if (!tiles) return `tiles for d = ${d} need ${formatBytes(bankFreeStorageBytes(d, { BR: 1, BC: 1 }))} of workgroup memory, over this GPU's ${formatBytes(limit)}`;
    const Tr = Math.ceil(N / tiles.BR);
    const WG = Math.max(tiles.BR, d / 4);
    return {
      constants: { D: d, BR: tiles.BR, BC: tiles.BC, WG },
      workgroupBytes: bankFreeStorageBytes(d, tiles),
      workgroups: (batches) => batches * Tr,
      uniforms: (batches) => ({ N, batches, scale: 1 / Math.sqrt(d) }),
      summary: `Br = ${tiles.BR}, Bc = ${tiles.BC}, ${WG} invocations`,
    };
  },
});
