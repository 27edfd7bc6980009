/**
 * Rung 12, bank-free: rung 11's kernel with conflict-free workgroup-memory layouts (bank-free.wgsl, a copy of
 * lm-registers.wgsl): rows of Q_i, O_i and K_jᵀ padded to an odd number of vec4s, S stored transposed. The tiles are
 * sized with the padding counted.
 */
import { singlePassRung } from '@fa/core';
import { largestTilesPlan, workgroupBytes, type Tiles } from '@fa/fused';
import { rowPerInvocation } from '../11-lm-registers/lm-registers.js';
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
  parent: 'lm-registers',
  title: 'GPU, lm-registers with bank-conflict-free layouts: padded rows, S transposed',
  delta: 'Pads the rows of Q_i, O_i and K_jᵀ to an odd number of vec4s and stores S transposed, so no warp access shares a bank.',
  kernel: { label: 'bank-free.wgsl', code },
  plan: largestTilesPlan(bankFreeStorageBytes, rowPerInvocation),
});
