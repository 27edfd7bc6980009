/**
 * Finding NaN and ±Inf in float32 data without touching the floats: an IEEE-754 single is non-finite exactly when
 * its 8 exponent bits are all ones, an integer test that runs at memory speed.
 */
import type { ValuePosition } from './errors.js';
import { MATRICES, matrixFloats, type Shape } from './shape.js';

const EXPONENT_MASK = 0x7f800000;

/** Index of the first non-finite value in `data`, or -1. */
export function firstNonFinite(data: Float32Array): number {
  const bits = new Uint32Array(data.buffer, data.byteOffset, data.length);
  for (let i = 0; i < bits.length; i++) {
    if (((bits[i] as number) & EXPONENT_MASK) === EXPONENT_MASK) return i;
  }
  return -1;
}

/** Number of non-finite values in `data`. */
export function countNonFinite(data: Float32Array): number {
  const bits = new Uint32Array(data.buffer, data.byteOffset, data.length);
  let count = 0;
  for (let i = 0; i < bits.length; i++) {
    if (((bits[i] as number) & EXPONENT_MASK) === EXPONENT_MASK) count++;
  }
  return count;
}

/** Where the float at `index` of a batch-chunk of input (Q, K, V per batch) sits, `firstBatch` being the chunk's first. */
export function inputPosition(shape: Shape, firstBatch: number, index: number): ValuePosition {
  const perMatrix = matrixFloats(shape);
  const matrixIndex = Math.floor(index / perMatrix);
  const within = index - matrixIndex * perMatrix;
  return {
    batch: firstBatch + Math.floor(matrixIndex / 3),
    matrix: MATRICES[matrixIndex % 3] ?? 'Q',
    row: Math.floor(within / shape.d),
    col: within % shape.d,
  };
}

export function formatPosition(p: ValuePosition): string {
  return `batch ${p.batch}, ${p.matrix}, row ${p.row}, column ${p.col}`;
}
