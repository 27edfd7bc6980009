/**
 * Rung 5, fused: Algorithm 1 in one kernel (fused.wgsl), fixed 16 × 16 tiles, one workgroup per batch, O, ℓ and m in
 * GPU memory between tiles.
 */
import { gpuHeadSizeSupport, singlePassRung } from '@fa/core';
import type { Shape } from '@fa/io';
import { FUSED_KERNEL, fusedPlan } from '../fused-kernel.js';

export const fused = singlePassRung({
  id: 'fused',
  parent: 'naive',
  title: 'GPU, Algorithm 1 fused into one kernel: K/V tile outer, Q tile inner, one workgroup per batch',
  delta: 'Fuses the six steps into one kernel with tiles in workgroup memory; S and P never touch GPU memory.',
  kernel: FUSED_KERNEL,
  plan: (shape: Shape) => {
    const head = gpuHeadSizeSupport(shape);
    return head === true ? fusedPlan(shape, { BR: 16, BC: 16 }) : head;
  },
});
