/**
 * The float64 oracle the tests compare every rung against. Not a rung: it is the plain algorithm in double
 * precision, with the row maximum subtracted before exp, so its own error is far below any float32 rung's.
 */
import { Comparator, matrixFloats, type Comparison, type Shape } from '@fa/io';

/**
 * O = softmax(Q Kᵀ / √d) V in float64 for `batches` consecutive batches of `input` (Q, K, V per batch).
 * Returns batches·N·d doubles.
 */
export function attentionOracle(input: Float32Array, shape: Shape, batches = shape.B): Float64Array {
  const size = matrixFloats(shape);
  const O = new Float64Array(batches * size);
  const S = new Float64Array(shape.N);
  for (let batch = 0; batch < batches; batch++) {
    for (let row = 0; row < shape.N; row++) oracleRow(input, shape, batch, row, S, O.subarray(batch * size + row * shape.d));
  }
  return O;
}

/** A (batch, query row) position. */
export interface RowRef {
  batch: number;
  row: number;
}

/**
 * The float64 oracle for a few rows only (4·N·d flops each), for checking outputs too large to check whole.
 * `input` holds all batches of `shape`. Returns one d-vector per requested row.
 */
export function attentionOracleRows(input: Float32Array, shape: Shape, rows: readonly RowRef[]): Float64Array[] {
  const S = new Float64Array(shape.N);
  return rows.map(({ batch, row }) => oracleRow(input, shape, batch, row, S, new Float64Array(shape.d)));
}

/** One row of O: the scores of query `row` against every key, max-subtracted softmax, times V. Writes `O[0..d)`. */
function oracleRow(input: Float32Array, { N, d }: Shape, batch: number, row: number, S: Float64Array, O: Float64Array): Float64Array {
  const size = N * d;
  const q = batch * 3 * size + row * d;
  const k = batch * 3 * size + size;
  const v = k + size;
  const scale = 1 / Math.sqrt(d);
  let m = Number.NEGATIVE_INFINITY;
  for (let j = 0; j < N; j++) {
    let s = 0;
    for (let x = 0; x < d; x++) s += (input[q + x] as number) * (input[k + j * d + x] as number);
    S[j] = s * scale;
    if ((S[j] as number) > m) m = S[j] as number;
  }
  let l = 0;
  for (let j = 0; j < N; j++) {
    S[j] = Math.exp((S[j] as number) - m);
    l += S[j] as number;
  }
  for (let x = 0; x < d; x++) O[x] = 0;
  for (let j = 0; j < N; j++) {
    const p = (S[j] as number) / l;
    for (let x = 0; x < d; x++) O[x] = (O[x] as number) + p * (input[v + j * d + x] as number);
  }
  return O;
}

/** `count` rows spread over every batch and over the sequence, always including the first and last row. */
export function sampleRows(shape: Shape, count: number): RowRef[] {
  const rows: RowRef[] = [];
  for (let s = 0; s < count; s++) {
    const batch = Math.floor((s * shape.B) / count);
    const row = s === count - 1 ? shape.N - 1 : Math.floor(((s * 7919) % count) * (shape.N / count));
    rows.push({ batch: Math.min(batch, shape.B - 1), row: Math.min(row, shape.N - 1) });
  }
  return rows;
}

/** The rows `rows` of a whole output O (batches × N × d), as views, in the order of `rows`. */
export function outputRows<Values extends Float32Array | Float64Array>(output: Values, shape: Shape, rows: readonly RowRef[]): Values[] {
  return rows.map(({ batch, row }) => {
    const at = (batch * shape.N + row) * shape.d;
    return output.subarray(at, at + shape.d) as Values;
  });
}

/**
 * Sampled rows of an output (`actual[k]` for `rows[k]`; a missing row counts as NaN) compared with the oracle's values
 * for the same rows (`expected[k]`, as `attentionOracleRows` returns them).
 */
export function compareRows(shape: Shape, rows: readonly RowRef[], actual: readonly (ArrayLike<number> | undefined)[], expected: readonly ArrayLike<number>[]): Comparison {
  const comparator = new Comparator(shape);
  rows.forEach(({ batch, row }, k) => {
    comparator.addRow(batch, row, actual[k] ?? new Float64Array(shape.d).fill(Number.NaN), expected[k] ?? []);
  });
  return comparator.result();
}
