/**
 * Rung 5, fused: Algorithm 1 in one kernel (fused.wgsl), fixed 16 × 16 tiles, one workgroup per batch, O, ℓ and m in
 * GPU memory between tiles.
 */
import { gpuHeadSizeSupport, singlePassRung, type SinglePassPlan } from '@fa/core';
import type { Shape } from '@fa/io';
import { FIXED_TILES, FUSED_WG, fusedStorageBytes, type Tiles } from '../tiles.js';
import code from './fused.wgsl';

export const FUSED_KERNEL = { label: 'fused.wgsl', code };

/** The plan of fused.wgsl with `tiles`: one workgroup per batch, ℓ and m in GPU memory. */
export function fusedPlan({ N, d }: Shape, tiles: Tiles): SinglePassPlan {
  return {
    constants: { D: d, BR: tiles.BR, BC: tiles.BC, WG: FUSED_WG },
    workgroupBytes: fusedStorageBytes(d, tiles),
    workgroups: (batches) => batches,
    uniforms: (batches) => ({ N, batches, scale: 1 / Math.sqrt(d) }),
    scratchBytesPerBatch: { l: 4 * N, m: 4 * N },
    summary: `Br = ${tiles.BR}, Bc = ${tiles.BC}`,
  };
}

export const fused = singlePassRung({
  id: 'fused',
  parent: 'naive',
  title: 'GPU, Algorithm 1 fused into one kernel: K/V tile outer, Q tile inner, one workgroup per batch',
  delta: 'Fuses the six steps into one kernel with tiles in workgroup memory; S and P never touch GPU memory.',
  kernel: FUSED_KERNEL,
  plan: (shape: Shape) => {
    const head = gpuHeadSizeSupport(shape);
    return head === true ? fusedPlan(shape, FIXED_TILES) : head;
  },
});
