/**
 * Errors of the hw4 format. Each message is one line that names the problem and, where there is one, the fix.
 */

/** The file does not follow the hw4 format (header, size, values). */
export class Hw4FormatError extends Error {
  override readonly name = 'Hw4FormatError';
}

/**
 * A text argument in hw4 terms is malformed: a shape such as "4,1024,64", a data kind, a value range. Callers that
 * take these from a command line treat it as a usage mistake, not as a bad file.
 */
export class Hw4ArgumentError extends Hw4FormatError {}

/** The input holds NaN or ±Inf where finite values are required. */
export class Hw4NonFiniteError extends Hw4FormatError {
  constructor(
    message: string,
    readonly count: number,
    readonly first: ValuePosition,
  ) {
    super(message);
  }
}

/** A file system problem: a missing input, a missing output folder, a failed write. */
export class Hw4IoError extends Error {
  override readonly name = 'Hw4IoError';
}

/** Where one value sits in an input file. */
export interface ValuePosition {
  batch: number;
  matrix: 'Q' | 'K' | 'V';
  row: number;
  col: number;
}
