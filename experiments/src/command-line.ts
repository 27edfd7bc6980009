/**
 * The command line of the experiments, without the process: `<name> [arguments]` runs one experiment, `--help` (or
 * nothing) lists them, `<name> --help` shows one's usage. Returns the exit status: 0, 1 on a failure, 2 on a wrong
 * command line or a GPU that lacks what the experiment needs.
 */
import { UsageError } from './args.js';
import type { Experiment } from './experiment.js';
import { NotHereError } from './harness.js';

export interface Output {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** The command that runs the experiments, as the help shows it. */
export const PROGRAM = 'experiments';

const HELP_FLAGS = new Set(['--help', '-h', 'help']);

export function usageOf(experiment: Experiment): string[] {
  return [
    `usage: ${PROGRAM} ${experiment.name}${experiment.usage ? ` ${experiment.usage}` : ''}`,
    `  ${experiment.summary}`,
    ...(experiment.details ?? []).map((line) => `  ${line}`),
    `  numbers recorded in ${experiment.page}`,
  ];
}

export function listing(experiments: readonly Experiment[]): string[] {
  return [
    `usage: ${PROGRAM} <experiment> [arguments]   (${PROGRAM} <experiment> --help for its arguments)`,
    ...experiments.flatMap((e) => ['', `  ${e.name}${e.usage ? ` ${e.usage}` : ''}`, `      ${e.summary} (${e.page})`]),
  ];
}

export async function runCommandLine(argv: readonly string[], experiments: readonly Experiment[], output: Output): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || HELP_FLAGS.has(name)) {
    listing(experiments).forEach(output.out);
    return name === undefined ? 2 : 0;
  }
  const experiment = experiments.find((e) => e.name === name);
  if (!experiment) {
    output.err(`${PROGRAM}: no experiment ${name}; one of ${experiments.map((e) => e.name).join(', ')}`);
    return 2;
  }
  if (args.some((arg) => HELP_FLAGS.has(arg))) {
    usageOf(experiment).forEach(output.out);
    return 0;
  }
  try {
    await experiment.run(args, output.out);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      output.err(`${experiment.name}: ${error.message}`);
      usageOf(experiment).forEach(output.err);
      return 2;
    }
    if (error instanceof NotHereError) {
      output.err(`${experiment.name}: ${error.message}`);
      return 2;
    }
    output.err(`${experiment.name}: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
