/**
 * Rung 7, fused-split-q: one workgroup per (batch, query tile), loops swapped (fused-split-q.wgsl, a copy of
 * fused.wgsl): O_i, ℓ_i and m_i stay in workgroup memory, so the plan binds no ℓ and m buffers.
 */
import { singlePassRung } from '@fa/core';
import { splitQPlan, splitQTileStudy } from '../tiles.js';
import code from './fused-split-q.wgsl';

const FUSED_SPLIT_Q_KERNEL = { label: 'fused-split-q.wgsl', code };

export const fusedSplitQ = singlePassRung({
  id: 'fused-split-q',
  parent: 'fused',
  title: 'GPU, one workgroup per (batch, Q tile), loops swapped: O, ℓ, m stay on chip',
  delta: 'Launches B·Tr workgroups instead of B and keeps O_i, ℓ_i, m_i in workgroup memory, written once at the end.',
  kernel: FUSED_SPLIT_Q_KERNEL,
  plan: splitQPlan(FUSED_SPLIT_Q_KERNEL),
  tiles: splitQTileStudy(),
});
