/**
 * Rung 15, prefetch: rung 14's kernel with the next K/V tile loaded into registers while the current one computes
 * (prefetch.wgsl). Same tiles and plan as rung 14.
 */
import { singlePassRung } from '@fa/core';
import { registerTilesPlanFor } from '../plans/register-tiles.js';
import code from './prefetch.wgsl';

const PREFETCH_KERNEL = { label: 'prefetch.wgsl', code };

export const prefetch = singlePassRung({
  id: 'prefetch',
  parent: 'register-tiles',
  title: 'GPU, register tiling with the next K/V tile prefetched into registers during the current tile',
  delta: 'Issues the global loads of tile j + 1 before computing tile j, so their latency hides behind the S and P̃V loops.',
  requires: ['subgroups'],
  kernel: PREFETCH_KERNEL,
  // prefetch.wgsl's register bounds (OC_MAX, LD_MAX).
  plan: registerTilesPlanFor(PREFETCH_KERNEL, { ocMax: 8, ldMax: 16 }),
});
