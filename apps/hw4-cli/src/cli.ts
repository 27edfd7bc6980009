/**
 * hw4-cli main (started by launch.ts): dispatches the command, maps errors to one-line messages and exit codes, and
 * exits explicitly (Dawn keeps a thread alive after a device is created, so the process would otherwise never end).
 */
import { GpuError, UnsupportedShapeError } from '@fa/core';
import { Hw4ArgumentError, Hw4FormatError, Hw4IoError, removeTemporaryFilesSync } from '@fa/io/node';
import { benchCommand } from './commands/bench.js';
import { checkCommand } from './commands/check.js';
import { conformanceCommand } from './commands/conformance.js';
import { genCommand } from './commands/gen.js';
import { ladderCommand } from './commands/ladder.js';
import { listCommand } from './commands/list.js';
import { runCommand } from './commands/run.js';
import { releaseAll } from './env.js';
import { ExitError, EXIT, SIGNAL_EXITS, UsageError } from './exit-codes.js';
import { commandHelp, COMMANDS, HELP } from './help.js';

function version(): string {
  return typeof __HW4_CLI_VERSION__ === 'string' ? __HW4_CLI_VERSION__ : 'development';
}

const COMMAND_RUNNERS: Record<string, (args: string[]) => Promise<number>> = {
  gen: genCommand,
  check: checkCommand,
  ladder: ladderCommand,
  bench: benchCommand,
  conformance: conformanceCommand,
  run: runCommand,
  list: listCommand,
};

async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (argv.length === 0) {
    process.stderr.write(`${HELP.split('\n\n')[1] ?? ''}\n\nrun hw4-cli --help for options and examples\n`);
    return EXIT.usage;
  }
  const command = first !== undefined && first in COMMANDS ? first : argv.includes('--list') ? 'list' : undefined;
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(command === undefined ? HELP : commandHelp(command));
    return EXIT.ok;
  }
  if (argv.includes('--version') || argv.includes('-V')) {
    process.stdout.write(`${version()}\n`);
    return EXIT.ok;
  }
  if (first !== undefined && first in COMMAND_RUNNERS) return COMMAND_RUNNERS[first]!(rest);
  if (argv.includes('--list')) return listCommand(argv.filter((a) => a !== '--list'));
  return runCommand(argv);
}

function exitCodeOf(error: unknown): number {
  if (error instanceof ExitError) return error.exitCode;
  if (error instanceof UsageError || error instanceof UnsupportedShapeError || error instanceof Hw4ArgumentError) return EXIT.usage;
  if (error instanceof Hw4FormatError) return EXIT.invalidInput;
  if (error instanceof Hw4IoError) return EXIT.fileSystem;
  if (error instanceof GpuError) return EXIT.failure;
  return EXIT.failure;
}

function messageOf(error: unknown): string {
  const known =
    error instanceof ExitError ||
    error instanceof UsageError ||
    error instanceof UnsupportedShapeError ||
    error instanceof Hw4FormatError ||
    error instanceof Hw4IoError ||
    error instanceof GpuError;
  const text = error instanceof Error ? error.message : String(error);
  const line = text.split('\n')[0] ?? text;
  return known ? line : `internal error: ${line} (set FA_DEBUG=1 for a stack trace)`;
}

async function finish(code: number): Promise<never> {
  releaseAll();
  await new Promise<void>((resolve) => process.stdout.write('', () => { resolve(); }));
  await new Promise<void>((resolve) => process.stderr.write('', () => { resolve(); }));
  process.exit(code);
}

const argv = process.argv.slice(2);

let stopping = false;
for (const [signal, code] of SIGNAL_EXITS) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    removeTemporaryFilesSync();
    process.stderr.write(`\nhw4-cli: ${signal === 'SIGHUP' ? 'hung up' : signal === 'SIGTERM' ? 'terminated' : 'interrupted'} (${signal}); no output was written\n`);
    process.exit(code);
  });
}

try {
  await finish(await main(argv));
} catch (error) {
  removeTemporaryFilesSync();
  process.stderr.write(`hw4-cli: error: ${messageOf(error)}\n`);
  if (process.env.FA_DEBUG === '1' && error instanceof Error) process.stderr.write(`${error.stack ?? ''}\n`);
  await finish(exitCodeOf(error));
}
