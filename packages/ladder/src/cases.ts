/**
 * The awkward cases every rung must pass against the float64 oracle: N = 1, N that is a multiple of no tile size,
 * B > 1, every head size, and every kind of generated data.
 */
import type { DataKind, Shape } from '@fa/io';

export interface ConformanceCase {
  name: string;
  shape: Shape;
  kind: DataKind;
  seed: number;
}

function shapeCase(B: number, N: number, d: number, kind: DataKind = 'uniform'): ConformanceCase {
  return { name: `${kind} B=${B} N=${N} d=${d}`, shape: { B, N, d }, kind, seed: B * 1_000_003 + N * 101 + d };
}

/**
 * Shapes small enough for the single-threaded float32 rungs and the software GPU. A GPU rung compiles a pipeline for
 * each set of override constants its plan gives (its plan class: d, and for the rungs whose tiles are balanced over N,
 * N too), and the software GPU takes seconds to minutes per pipeline (docs/ci.md): so each head size has at most two
 * values of N, N = 1 and one other (d = 32: 77, and 513 for many key tiles per key range), and the kinds of data reuse
 * those shapes. The conformance suite holds the rungs to that (MAX_PLAN_CLASSES_PER_HEAD_SIZE).
 */
export const CONFORMANCE_CASES: readonly ConformanceCase[] = [
  shapeCase(1, 1, 16),
  shapeCase(2, 77, 16),
  shapeCase(2, 77, 32),
  shapeCase(2, 77, 32, 'negative-scores'),
  shapeCase(1, 513, 32),
  shapeCase(3, 1, 64),
  shapeCase(5, 97, 64),
  shapeCase(2, 97, 64, 'dominant-key'),
  shapeCase(2, 97, 64, 'constant-rows'),
  shapeCase(2, 97, 64, 'large'),
  shapeCase(1, 77, 80),
  shapeCase(2, 65, 128),
];
