/**
 * Rung 10, coalesced: rung 9's kernel with K_j stored transposed on chip (coalesced.wgsl, a copy of restructure.wgsl),
 * so that neighbouring invocations of the S loop read neighbouring addresses. Same tiles and workgroup memory as
 * rungs 7-9.
 */
import { singlePassRung } from '@fa/core';
import { splitQPlan } from '@fa/fused';
import code from './coalesced.wgsl';

const COALESCED_KERNEL = { label: 'coalesced.wgsl', code };

export const coalesced = singlePassRung({
  id: 'coalesced',
  parent: 'restructure',
  title: 'GPU, restructure with K_j transposed on chip: neighbouring invocations read neighbouring addresses',
  delta: 'Stores K_j transposed in workgroup memory, so the S loop’s neighbouring invocations (neighbouring keys) read consecutive vec4s.',
  kernel: COALESCED_KERNEL,
  plan: splitQPlan(COALESCED_KERNEL),
});
