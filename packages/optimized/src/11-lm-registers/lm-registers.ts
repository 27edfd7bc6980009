/**
 * Rung 11, lm-registers: rung 10's kernel with one invocation per query row from start to end (lm-registers.wgsl, a
 * copy of coalesced.wgsl): m and ℓ in registers, no single-invocation statistics phase, two barriers per tile.
 * Tiles are sized for its workgroup memory (no m_i, ℓ_i or weight arrays) and the workgroup has max(Br, d/4)
 * invocations: Br own rows, and the load grid needs at least one row of d/4 lanes.
 */
import { formatBytes, type Shape } from '@fa/io';
import { gpuHeadSizeSupport, singlePassRung, type GpuContext } from '@fa/core';
import { largestTiles, type Tiles } from '@fa/fused';
import code from './lm-registers.wgsl';

/** Workgroup bytes of arrays of these many 4-byte elements: Dawn pads each variable to a multiple of 16 bytes. */
export function workgroupBytes(...floats: number[]): number {
  return floats.reduce((sum, n) => sum + Math.ceil((4 * n) / 16) * 16, 0);
}

/** lm-registers.wgsl: K_jᵀ, V_j (Bc × d each), Q_i and O_i (Br × d each), S (Br × Bc). */
export function lmRegistersStorageBytes(d: number, { BR, BC }: Tiles): number {
  return workgroupBytes(BC * d, BC * d, BR * d, BR * BC, BR * d);
}

export const lmRegisters = singlePassRung({
  id: 'lm-registers',
  title: 'GPU, coalesced with one invocation per query row: m and ℓ in registers, two barriers per tile',
  delta: 'Each invocation owns one query row: its scores, row maximum and sum, m, ℓ (in registers) and O row; no single-thread statistics phase.',
  kernel: { label: 'lm-registers.wgsl', code },
  plan: (shape: Shape, gpu: GpuContext) => {
    const head = gpuHeadSizeSupport(shape);
    if (head !== true) return head;
    const { N, d } = shape;
    const limit = gpu.report.limits.maxComputeWorkgroupStorageSize;
    const tiles = largestTiles(limit, d, N, lmRegistersStorageBytes);
    if (!tiles) return `tiles for d = ${d} need ${formatBytes(lmRegistersStorageBytes(d, { BR: 1, BC: 1 }))} of workgroup memory, over this GPU's ${formatBytes(limit)}`;
    const Tr = Math.ceil(N / tiles.BR);
    const WG = Math.max(tiles.BR, d / 4);
    return {
      constants: { D: d, BR: tiles.BR, BC: tiles.BC, WG },
      workgroupBytes: lmRegistersStorageBytes(d, tiles),
      workgroups: (batches) => batches * Tr,
      uniforms: (batches) => ({ N, batches, scale: 1 / Math.sqrt(d) }),
      summary: `Br = ${tiles.BR}, Bc = ${tiles.BC}, ${WG} invocations`,
    };
  },
});
