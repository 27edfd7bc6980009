/**
 * Rung 17, compensated-matrix: rung 16 with every operand split into high and low f16 parts
 * (compensated-matrix.wgsl), three products where rung 16 has one, for an error within 1e-4 on the matrix units (fp32-grade at small N).
 */
import { matrixRung } from '../matrix-rung.js';
import code from './compensated-matrix.wgsl';

export const COMPENSATED_MATRIX_KERNEL = { label: 'compensated-matrix.wgsl', code };

export const compensatedMatrix = matrixRung({
  id: 'compensated-matrix',
  title: 'GPU, tensor cores with error compensation: high and low f16 parts, S = QhKhᵀ + QhKlᵀ + QlKhᵀ, O += P̃hVh + P̃hVl + P̃lVh',
  delta: 'Splits Q, K, V and P̃ into two f16 parts each and adds the three largest partial products, so the matrix units reach about 22 significant bits instead of 11.',
  kernel: COMPENSATED_MATRIX_KERNEL,
  parts: 2,
});
