/**
 * Rung 17, compensated-matrix: rung 16 with every operand split into high and low f16 parts
 * (compensated-matrix.wgsl), three products where rung 16 has one, and O summed in f32 registers tile by tile:
 * fp32-grade accuracy on the matrix units.
 */
import { matrixRung } from '../matrix-rung.js';
import code from './compensated-matrix.wgsl';

export const COMPENSATED_MATRIX_KERNEL = { label: 'compensated-matrix.wgsl', code };

export const compensatedMatrix = matrixRung({
  id: 'compensated-matrix',
  parent: 'f16-matrix',
  title: 'GPU, tensor cores with error compensation: high and low f16 parts, S = QhKhᵀ + QhKlᵀ + QlKhᵀ, O += P̃hVh + P̃hVl + P̃lVh',
  delta: 'Splits Q, K, V and P̃ into two f16 parts each and adds the three largest partial products (about 22 significant bits instead of 11), and sums O in f32 registers instead of the matrix accumulators.',
  kernel: COMPENSATED_MATRIX_KERNEL,
  parts: 2,
});
