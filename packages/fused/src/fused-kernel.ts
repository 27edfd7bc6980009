/**
 * The kernel of rungs 5 and 6 (05-fused/fused.wgsl) and its plan: one workgroup per batch, ℓ and m in GPU memory
 * between tiles. Rung 5 runs it with fixed 16 × 16 tiles, rung 6 with the largest tiles the adapter holds.
 */
import type { SinglePassPlan } from '@fa/core';
import type { Shape } from '@fa/io';
import { FUSED_WG, type Tiles } from './tiles.js';
import code from './05-fused/fused.wgsl';

export const FUSED_KERNEL = { label: 'fused.wgsl', code };

/** The plan of fused.wgsl with `tiles`. */
export function fusedPlan({ N, d }: Shape, tiles: Tiles): SinglePassPlan {
  return {
    constants: { D: d, BR: tiles.BR, BC: tiles.BC, WG: FUSED_WG },
    workgroups: (batches) => batches,
    uniforms: (batches) => ({ N, batches, scale: 1 / Math.sqrt(d) }),
    scratchBytesPerBatch: { l: 4 * N, m: 4 * N },
    summary: `Br = ${tiles.BR}, Bc = ${tiles.BC}`,
  };
}
