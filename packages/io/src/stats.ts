/**
 * What a run needs to know about a batch of input beyond its values, computed in one pass while reading: the
 * largest row norms of Q and K and the largest |V| (they bound the scores, hence the float32 rounding error and
 * overflow), and where NaN or ±Inf sit (they decide which rows of O are NaN when non-finite input is allowed).
 */
import { matrixFloats, type Shape } from './shape.js';

export interface BatchStats {
  /** Largest Euclidean norm of a finite row of Q. */
  readonly maxQNorm: number;
  /** Largest Euclidean norm of a finite row of K. */
  readonly maxKNorm: number;
  /** Largest |v| over the finite values of V. */
  readonly maxAbsV: number;
  /** Rows of Q that hold NaN or ±Inf: those rows of O are NaN. */
  readonly nonFiniteQRows: readonly number[];
  /** K or V holds NaN or ±Inf: every row of O depends on them, so the whole batch of O is NaN. */
  readonly nonFiniteKV: boolean;
}

/** Statistics of each batch of a chunk (batches·3·N·d floats: Q, K, V per batch). */
export function chunkStats(data: Float32Array, batches: number, shape: Shape): BatchStats[] {
  const size = matrixFloats(shape);
  const stats: BatchStats[] = [];
  for (let b = 0; b < batches; b++) {
    const base = 3 * b * size;
    const q = rowNorms(data, base, shape);
    const k = rowNorms(data, base + size, shape);
    const v = maxAbs(data, base + 2 * size, size);
    stats.push({ maxQNorm: q.max, maxKNorm: k.max, maxAbsV: v.max, nonFiniteQRows: q.bad, nonFiniteKV: k.bad.length > 0 || !v.finite });
  }
  return stats;
}

export function hasNonFinite(stats: readonly BatchStats[]): boolean {
  return stats.some((s) => s.nonFiniteKV || s.nonFiniteQRows.length > 0);
}

/** The largest finite row norm (float64 sums: a row's sum of squares is non-finite exactly when the row is), and the non-finite rows. */
function rowNorms(data: Float32Array, start: number, { N, d }: Shape): { max: number; bad: number[] } {
  let max = 0;
  const bad: number[] = [];
  for (let row = 0; row < N; row++) {
    let sum = 0;
    const from = start + row * d;
    for (let i = from; i < from + d; i++) {
      const x = data[i] as number;
      sum += x * x;
    }
    if (!Number.isFinite(sum)) bad.push(row);
    else if (sum > max) max = sum;
  }
  return { max: Math.sqrt(max), bad };
}

function maxAbs(data: Float32Array, start: number, length: number): { max: number; finite: boolean } {
  let max = 0;
  let check = 0;
  for (let i = start; i < start + length; i++) {
    const x = data[i] as number;
    check += x - x;
    const a = Math.abs(x);
    if (a > max && a !== Number.POSITIVE_INFINITY) max = a;
  }
  return { max, finite: check === 0 };
}

/** Replaces NaN and ±Inf by 0 in place, so a rung computes with finite numbers; maskNonFiniteOutput then marks the affected rows. */
export function zeroNonFinite(data: Float32Array): void {
  for (let i = 0; i < data.length; i++) if (!Number.isFinite(data[i])) data[i] = 0;
}

/**
 * Sets to NaN the rows of O whose exact value depends on a non-finite input: a row of Q with NaN/Inf gives a NaN
 * row; NaN/Inf anywhere in K or V gives a NaN batch. `output` holds the chunk's O (batches·N·d floats).
 */
export function maskNonFiniteOutput(output: Float32Array | Float64Array, stats: readonly BatchStats[], shape: Shape): void {
  const size = matrixFloats(shape);
  stats.forEach((s, b) => {
    if (s.nonFiniteKV) output.fill(Number.NaN, b * size, (b + 1) * size);
    else for (const row of s.nonFiniteQRows) output.fill(Number.NaN, b * size + row * shape.d, b * size + (row + 1) * shape.d);
  });
}
