/**
 * Rung 11, lm-registers: rung 10's kernel with one invocation per query row from start to end (lm-registers.wgsl, a
 * copy of coalesced.wgsl): m and ℓ in registers, no single-invocation statistics phase, two barriers per tile.
 * Tiles are sized for its workgroup memory (no m_i, ℓ_i or weight arrays) and the workgroup has max(Br, d/4)
 * invocations: Br own rows, and the load grid needs at least one row of d/4 lanes.
 */
import { singlePassRung } from '@fa/core';
import { largestTilesPlan, workgroupBytes, type Tiles } from '@fa/fused';
import code from './lm-registers.wgsl';

/** Invocations of a workgroup that gives each query row its own: Br, and at least one row of d/4 lanes for loads. */
export const rowPerInvocation = ({ BR }: Tiles, d: number): number => Math.max(BR, d / 4);

/** lm-registers.wgsl: K_jᵀ, V_j (Bc × d each), Q_i and O_i (Br × d each), S (Br × Bc). */
export function lmRegistersStorageBytes(d: number, { BR, BC }: Tiles): number {
  return workgroupBytes(BC * d, BC * d, BR * d, BR * BC, BR * d);
}

export const lmRegisters = singlePassRung({
  id: 'lm-registers',
  parent: 'coalesced',
  title: 'GPU, coalesced with one invocation per query row: m and ℓ in registers, two barriers per tile',
  delta: 'Each invocation owns one query row: its scores, row maximum and sum, m, ℓ (in registers) and O row; no single-thread statistics phase.',
  kernel: { label: 'lm-registers.wgsl', code },
  plan: largestTilesPlan(lmRegistersStorageBytes, rowPerInvocation),
});
