/**
 * Rung 16, f16-matrix: FlashAttention on the matrix units through f16 subgroup matrices (f16-matrix.wgsl). Q, K, V
 * and P̃ are rounded to f16, so the rung may miss the 5e-3 contract: the automatic choice never picks it.
 */
import { matrixRung } from '../matrix-rung.js';
import code from './f16-matrix.wgsl';

export const F16_MATRIX_KERNEL = { label: 'f16-matrix.wgsl', code };

export const f16Matrix = matrixRung({
  id: 'f16-matrix',
  parent: 'prefetch',
  title: 'GPU, tensor cores: S = Q Kᵀ and P̃V as f16 16×16×16 subgroup-matrix multiply-accumulates, f32 softmax',
  delta: 'Moves both products to the matrix units (f16 operands, f32 accumulation), with Q and O fragments resident and each K/V fragment reused by every query fragment of the subgroup.',
  kernel: F16_MATRIX_KERNEL,
  parts: 1,
  reducedPrecision: 'f16',
});
