/**
 * Comparing an output against an expected one: max and mean absolute error, how many elements exceed the
 * tolerance, and the first mismatches as (batch, row, column). Feed it chunk by chunk for files of any size.
 */
import { nonNegativeInteger, nonNegativeNumber } from './options.js';
import { formatShape, matrixFloats, validateShape, type Shape } from './shape.js';

/** The format's contract: absolute error per element. */
export const DEFAULT_TOLERANCE = 5e-3;

export interface Mismatch {
  batch: number;
  row: number;
  col: number;
  actual: number;
  expected: number;
  error: number;
}

export interface Comparison {
  tolerance: number;
  /** Elements compared. */
  count: number;
  maxAbsError: number;
  meanAbsError: number;
  /** Elements whose error exceeds the tolerance (non-finite values always do). */
  countAboveTolerance: number;
  /** Where the largest error is. */
  worst: Mismatch | undefined;
  /** The first elements above tolerance, in file order. */
  firstMismatches: Mismatch[];
  pass: boolean;
}

export interface CompareOptions {
  tolerance?: number;
  /** How many first mismatches to keep. Default 10. */
  maxMismatches?: number;
  /** Count NaN against NaN (and an infinity against the same infinity) as equal, for inputs allowed to hold NaN/Inf. Default false. */
  nonFiniteMatches?: boolean;
}

/** Accumulates a comparison over consecutive output chunks of one shape. */
export class Comparator {
  private readonly tolerance: number;
  private readonly maxMismatches: number;
  private readonly nonFiniteMatches: boolean;
  private count = 0;
  private sum = 0;
  private max = 0;
  private above = 0;
  private worst: Mismatch | undefined;
  private readonly mismatches: Mismatch[] = [];

  constructor(
    private readonly shape: Shape,
    options: CompareOptions = {},
  ) {
    validateShape(shape);
    this.tolerance = nonNegativeNumber('compare: tolerance', options.tolerance ?? DEFAULT_TOLERANCE);
    this.maxMismatches = nonNegativeInteger('compare: maxMismatches', options.maxMismatches ?? 10);
    this.nonFiniteMatches = options.nonFiniteMatches ?? false;
  }

  /** Compares the next chunk; both hold whole rows, continuing where the previous chunk ended. */
  add(actual: ArrayLike<number>, expected: ArrayLike<number>): void {
    if (actual.length !== expected.length) {
      throw new RangeError(`compare: chunk lengths differ (${actual.length} actual, ${expected.length} expected)`);
    }
    const { N, d } = this.shape;
    const base = this.count;
    for (let i = 0; i < actual.length; i++) {
      const index = base + i;
      const batch = Math.floor(index / (N * d));
      const within = index - batch * N * d;
      this.element(batch, Math.floor(within / d), within % d, actual[i] as number, expected[i] as number);
    }
  }

  /** Compares one row (d values) of one batch, for checks that sample rows instead of reading everything. */
  addRow(batch: number, row: number, actual: ArrayLike<number>, expected: ArrayLike<number>): void {
    for (let col = 0; col < this.shape.d; col++) this.element(batch, row, col, actual[col] as number, expected[col] as number);
  }

  result(): Comparison {
    return {
      tolerance: this.tolerance,
      count: this.count,
      maxAbsError: this.max,
      meanAbsError: this.count === 0 ? 0 : this.sum / this.count,
      countAboveTolerance: this.above,
      worst: this.worst,
      firstMismatches: [...this.mismatches],
      pass: this.above === 0,
    };
  }

  private element(batch: number, row: number, col: number, actual: number, expected: number): void {
    const same = this.nonFiniteMatches && !Number.isFinite(expected) && (Object.is(actual, expected) || (Number.isNaN(actual) && Number.isNaN(expected)));
    const diff = same ? 0 : Math.abs(actual - expected);
    const error = Number.isNaN(diff) ? Number.POSITIVE_INFINITY : diff;
    this.count++;
    this.sum += error;
    if (error > this.max || this.worst === undefined) {
      this.max = error;
      this.worst = { batch, row, col, actual, expected, error };
    }
    if (error > this.tolerance) {
      this.above++;
      if (this.mismatches.length < this.maxMismatches) this.mismatches.push({ batch, row, col, actual, expected, error });
    }
  }
}

/** Compares two whole outputs; each must hold exactly B·N·d values of `shape`. */
export function compareOutputs(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  shape: Shape,
  options: CompareOptions = {},
): Comparison {
  const comparator = new Comparator(shape, options);
  const values = shape.B * matrixFloats(shape);
  for (const [which, output] of [['actual', actual], ['expected', expected]] as const) {
    if (output.length !== values) {
      throw new RangeError(`compare: the ${which} output holds ${output.length} values but ${formatShape(shape)} needs B·N·d = ${values}; pass the outputs' own shape`);
    }
  }
  comparator.add(actual, expected);
  return comparator.result();
}

/** A few lines a person can read: verdict, errors, first mismatches. */
export function formatComparison(c: Comparison): string {
  const verdict = c.pass ? 'PASS' : 'FAIL';
  const lines = [
    `${verdict}: max abs error ${c.maxAbsError.toExponential(3)}, mean ${c.meanAbsError.toExponential(3)}, ` +
      `${c.countAboveTolerance} of ${c.count} above tolerance ${c.tolerance}`,
  ];
  if (c.worst && !c.pass) lines.push(`  worst at ${formatMismatch(c.worst)}`);
  for (const m of c.firstMismatches) lines.push(`  mismatch at ${formatMismatch(m)}`);
  return lines.join('\n');
}

function formatMismatch(m: Mismatch): string {
  return `(batch ${m.batch}, row ${m.row}, col ${m.col}): got ${m.actual}, expected ${m.expected}, error ${m.error.toExponential(3)}`;
}
