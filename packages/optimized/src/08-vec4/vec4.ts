/**
 * Rung 8, vec4: rung 7's kernel with Q, K, V and O as vec4<f32> (vec4.wgsl, a copy of fused-split-q.wgsl): the same
 * tiles and the same workgroup memory, a quarter of the load instructions and dot() of vec4s in the S loop.
 */
import { singlePassRung } from '@fa/core';
import { splitQPlan } from '@fa/fused';
import code from './vec4.wgsl';

const VEC4_KERNEL = { label: 'vec4.wgsl', code };

export const vec4 = singlePassRung({
  id: 'vec4',
  parent: 'fused-split-q',
  title: 'GPU, fused-split-q with vec4 loads, stores and dot products',
  delta: 'Q, K, V and O move as vec4<f32> in storage and workgroup memory, and S_ij is a sum of vec4 dot()s.',
  kernel: VEC4_KERNEL,
  plan: splitQPlan(VEC4_KERNEL),
});
