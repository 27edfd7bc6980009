/** Exit codes of hw4-cli, documented in --help and the README (a test walks through every one). */
export const EXIT = {
  ok: 0,
  /** A failure while computing: a GPU error, a rung whose output overflowed, an internal error. */
  failure: 1,
  /**
   * Bad command line: unknown flag or rung, bad --shape/--kind/--shapes, a rung that cannot run this shape or cannot
   * meet the tolerance on this input.
   */
  usage: 2,
  /** The input is not valid hw4 data (header, size, NaN/Inf). */
  invalidInput: 3,
  /** A file system problem: missing input, input or output that is a folder, missing output folder, output same as input, failed write. */
  fileSystem: 4,
  /** `check` found elements beyond the tolerance. */
  mismatch: 5,
  /** Hung up: SIGHUP (128 + 1). */
  hangup: 129,
  /** Interrupted: SIGINT, Ctrl-C (128 + 2). */
  interrupted: 130,
  /** Terminated: SIGTERM (128 + 15). */
  terminated: 143,
} as const;

/** The signals hw4-cli handles (removing its temporary files), with their exit codes. */
export const SIGNAL_EXITS = [
  ['SIGHUP', EXIT.hangup],
  ['SIGINT', EXIT.interrupted],
  ['SIGTERM', EXIT.terminated],
] as const;

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
