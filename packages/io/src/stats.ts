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
  return batchStatsRange(data, 0, batches, shape.N, shape.d);
}

/** Computes the statistics of `batches` batches from `firstBatch` of a chunk: on this thread, or in a worker. */
export type StatsFunction = (data: Float32Array, batches: number, shape: Shape) => BatchStats[] | Promise<BatchStats[]>;

export function hasNonFinite(stats: readonly BatchStats[]): boolean {
  return stats.some((s) => s.nonFiniteKV || s.nonFiniteQRows.length > 0);
}

/**
 * Statistics of batches firstBatch … firstBatch + batches − 1 of a chunk. Self-contained (it refers to nothing outside
 * its own body), so a worker thread can run it from its source text. Four independent accumulators per loop let the
 * additions and maxima run in parallel instead of in one dependency chain (about 1.3× faster).
 */
export function batchStatsRange(data: Float32Array, firstBatch: number, batches: number, N: number, d: number): BatchStats[] {
  /** The largest finite row norm (float64 sums: a row's sum of squares is non-finite exactly when the row is), and the non-finite rows. */
  const rowNorms = (start: number): { max: number; bad: number[] } => {
    let max = 0;
    const bad: number[] = [];
    for (let row = 0; row < N; row++) {
      const from = start + row * d;
      const to = from + d;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      let i = from;
      for (; i + 3 < to; i += 4) {
        const a = data[i] as number;
        const b = data[i + 1] as number;
        const c = data[i + 2] as number;
        const e = data[i + 3] as number;
        s0 += a * a;
        s1 += b * b;
        s2 += c * c;
        s3 += e * e;
      }
      for (; i < to; i++) {
        const a = data[i] as number;
        s0 += a * a;
      }
      const sum = s0 + s1 + (s2 + s3);
      if (!Number.isFinite(sum)) bad.push(row);
      else if (sum > max) max = sum;
    }
    return { max: Math.sqrt(max), bad };
  };
  /** The largest finite |v|, and whether every value is finite (x − x is 0 for finite x, NaN otherwise). */
  const maxAbs = (start: number, length: number): { max: number; finite: boolean } => {
    let m0 = 0;
    let m1 = 0;
    let c0 = 0;
    let c1 = 0;
    const to = start + length;
    let i = start;
    for (; i + 1 < to; i += 2) {
      const a = data[i] as number;
      const b = data[i + 1] as number;
      c0 += a - a;
      c1 += b - b;
      const aa = Math.abs(a);
      const ab = Math.abs(b);
      if (aa > m0 && aa !== Number.POSITIVE_INFINITY) m0 = aa;
      if (ab > m1 && ab !== Number.POSITIVE_INFINITY) m1 = ab;
    }
    for (; i < to; i++) {
      const a = data[i] as number;
      c0 += a - a;
      const aa = Math.abs(a);
      if (aa > m0 && aa !== Number.POSITIVE_INFINITY) m0 = aa;
    }
    return { max: Math.max(m0, m1), finite: c0 + c1 === 0 };
  };
  const size = N * d;
  const stats: BatchStats[] = [];
  for (let b = firstBatch; b < firstBatch + batches; b++) {
    const base = 3 * b * size;
    const q = rowNorms(base);
    const k = rowNorms(base + size);
    const v = maxAbs(base + 2 * size, size);
    stats.push({ maxQNorm: q.max, maxKNorm: k.max, maxAbsV: v.max, nonFiniteQRows: q.bad, nonFiniteKV: k.bad.length > 0 || !v.finite });
  }
  return stats;
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
