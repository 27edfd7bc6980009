/**
 * Rung 12, bank-free: rung 11's kernel with conflict-free workgroup-memory layouts (bank-free.wgsl, a copy of
 * lm-registers.wgsl): rows of Q_i, O_i and K_jᵀ padded to an odd number of vec4s, S stored transposed. The tiles are
 * sized with the padding counted (the kernel's declarations).
 */
import { singlePassRung } from '@fa/core';
import { largestTilesPlan } from '@fa/fused';
import { rowPerInvocation } from '../plans/row-per-invocation.js';
import code from './bank-free.wgsl';

const BANK_FREE_KERNEL = { label: 'bank-free.wgsl', code };

export const bankFree = singlePassRung({
  id: 'bank-free',
  parent: 'lm-registers',
  title: 'GPU, lm-registers with bank-conflict-free layouts: padded rows, S transposed',
  delta: 'Pads the rows of Q_i, O_i and K_jᵀ to an odd number of vec4s and stores S transposed, so no warp access shares a bank.',
  kernel: BANK_FREE_KERNEL,
  plan: largestTilesPlan(BANK_FREE_KERNEL, rowPerInvocation),
});
