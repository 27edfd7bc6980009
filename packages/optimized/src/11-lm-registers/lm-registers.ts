/**
 * Rung 11, lm-registers: rung 10's kernel with one invocation per query row from start to end (lm-registers.wgsl, a
 * copy of coalesced.wgsl): m and ℓ in registers, no single-invocation statistics phase, two barriers per tile.
 * Tiles are sized for its workgroup memory (no m_i, ℓ_i or weight arrays) and the workgroup has max(Br, d/4)
 * invocations: Br own rows, and the load grid needs at least one row of d/4 lanes.
 */
import { singlePassRung } from '@fa/core';
import { largestTilesPlan } from '@fa/fused';
import { rowPerInvocation } from '../plans/row-per-invocation.js';
import code from './lm-registers.wgsl';

const LM_REGISTERS_KERNEL = { label: 'lm-registers.wgsl', code };

export const lmRegisters = singlePassRung({
  id: 'lm-registers',
  parent: 'coalesced',
  title: 'GPU, coalesced with one invocation per query row: m and ℓ in registers, two barriers per tile',
  delta: 'Each invocation owns one query row: its scores, row maximum and sum, m, ℓ (in registers) and O row; no single-thread statistics phase.',
  kernel: LM_REGISTERS_KERNEL,
  plan: largestTilesPlan(LM_REGISTERS_KERNEL, rowPerInvocation),
});
