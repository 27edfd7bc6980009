/** Where messages go: stderr for people, stdout for --json and data. */
export interface Reporter {
  readonly quiet: boolean;
  readonly json: boolean;
  /** A line for people on stderr, unless --quiet. */
  info: (line: string) => void;
  /** The machine-readable result on stdout. */
  result: (value: unknown) => void;
}

export function reporter(quiet: boolean, json: boolean): Reporter {
  return {
    quiet,
    json,
    info: (line) => {
      if (!quiet) process.stderr.write(`${line}\n`);
    },
    result: (value) => {
      process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    },
  };
}
