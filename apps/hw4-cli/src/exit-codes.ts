/** Exit codes of hw4-cli, documented in --help and the README. */
export const EXIT = {
  ok: 0,
  /** A failure while computing: a GPU error, a rung that produced non-finite output, an internal error. */
  failure: 1,
  /** Bad command line: unknown flag or rung, a rung that cannot run this shape. */
  usage: 2,
  /** The input file is not valid hw4 data (header, size, NaN/Inf). */
  invalidInput: 3,
  /** A file system problem: missing input, missing output folder, output same as input, failed write. */
  fileSystem: 4,
  /** `check` found elements beyond the tolerance. */
  mismatch: 5,
  /** Interrupted by SIGINT (SIGTERM gives 143). */
  interrupted: 130,
} as const;

/** A command-line mistake (exit 2). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** An error that carries its own exit code. */
export class ExitError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}
