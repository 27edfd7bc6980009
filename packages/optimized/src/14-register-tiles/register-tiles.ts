/**
 * Rung 14, register-tiles: FlashAttention-2's register tiling (register-tiles.wgsl). Each invocation owns a 4-row
 * block of S and of O; row statistics are combined with subgroup shuffles, so the rung needs `subgroups`.
 */
import { singlePassRung } from '@fa/core';
import { registerTilesPlanFor } from '../plans/register-tiles.js';
import code from './register-tiles.wgsl';

const REGISTER_TILES_KERNEL = { label: 'register-tiles.wgsl', code };

export const registerTiles = singlePassRung({
  id: 'register-tiles',
  parent: 'q-registers',
  title: 'GPU, FlashAttention-2 register tiling: 4 rows × Bc/G keys of S and 4 rows × d/G columns of O per invocation',
  delta: 'Each value read from workgroup memory feeds 16 multiply-adds instead of 4; row statistics through subgroup shuffles; exp2 with the scale folded into Q.',
  requires: ['subgroups'],
  kernel: REGISTER_TILES_KERNEL,
  // register-tiles.wgsl's register bounds (OC_MAX).
  plan: registerTilesPlanFor(REGISTER_TILES_KERNEL, { ocMax: 8 }),
});
