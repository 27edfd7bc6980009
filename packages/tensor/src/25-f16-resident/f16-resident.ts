/**
 * Rung 25, f16-resident: rung 24 `resident-o`'s loop in plain f16 (f16-resident.wgsl): one f16 copy of Q, K, V, one
 * product per multiply, and a softmax that reads S four neighbouring keys at a time. Q, K, V and P̃ are rounded to f16,
 * as in rung 16, so the rung may miss the 5e-3 contract: the automatic choice never picks it. Same subgroups per
 * workgroup as rungs 23-24, as many as fit.
 */
import { subgroupPlan } from '@fa/core';
import { matrixRung } from '../matrix-rung.js';
import code from './f16-resident.wgsl';

export const F16_RESIDENT_KERNEL = { label: 'f16-resident.wgsl', code };

export const f16Resident = matrixRung({
  id: 'f16-resident',
  parent: 'resident-o',
  title: 'GPU, tensor cores in plain f16: resident-o’s loop with one product per multiply and a four-key softmax',
  delta:
    'Rounds Q, K, V and P̃ to f16 once, as rung 16 does, instead of splitting them into high and low parts: one ' +
    'multiply-accumulate per pair of fragments instead of three and K/V tiles of half the size; the softmax reads S ' +
    'and writes P̃ four neighbouring keys at a time.',
  kernel: F16_RESIDENT_KERNEL,
  parts: 1,
  reducedPrecision: 'f16',
  plan: subgroupPlan(F16_RESIDENT_KERNEL),
  mainReads: 'qkv16v',
});
