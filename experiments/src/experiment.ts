/** What the command line knows of an experiment. */
export interface Experiment {
  /** The command-line name. */
  readonly name: string;
  /** One line: what it measures. */
  readonly summary: string;
  /** Its arguments, e.g. `VARIANT [B,N,d]`. */
  readonly usage: string;
  /** The docs page that records its numbers, from the repository root. */
  readonly page: string;
  /** More lines of help: variants, defaults. */
  readonly details?: readonly string[];
  /** Checks the arguments (throwing a UsageError) before any GPU work, then measures, printing lines with `print`. */
  run(args: readonly string[], print: (line: string) => void): Promise<void>;
}
