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
import { sweepCommand } from './commands/sweep.js';
import { sdpaCommand } from './commands/sdpa.js';
import { asksHelp, asksVersion, commandLine, isCommandName, type CommandName } from './command-line.js';
import { releaseAll } from './env.js';
import { ExitError, EXIT, SIGNAL_EXITS, UsageError } from './exit-codes.js';
import { releaseFifoOpens } from './fifo-opens.js';
import { commandHelp, HELP } from './help.js';
import { onLauncherGone } from './parent-watch.js';

function version(): string {
  return typeof __HW4_CLI_VERSION__ === 'string' ? __HW4_CLI_VERSION__ : 'development';
}

const COMMAND_RUNNERS: Record<CommandName, (args: string[]) => Promise<number>> = {
  gen: genCommand,
  check: checkCommand,
  ladder: ladderCommand,
  bench: benchCommand,
  conformance: conformanceCommand,
  run: runCommand,
  list: listCommand,
  sdpa: sdpaCommand,
  sweep: sweepCommand,
};

async function main(argv: string[]): Promise<number> {
  if (argv.length === 0) {
    process.stderr.write(`${HELP.split('\n\n')[1] ?? ''}\n\nrun hw4-cli --help for options and examples\n`);
    return EXIT.usage;
  }
  const { command, args } = commandLine(argv);
  if (asksHelp(argv)) {
    // A command line without a command word or --list gets the overview.
    const named = isCommandName(argv[0]) || command === 'list';
    process.stdout.write(named ? commandHelp(command) : HELP);
    return EXIT.ok;
  }
  if (asksVersion(argv)) {
    process.stdout.write(`${version()}\n`);
    return EXIT.ok;
  }
  return COMMAND_RUNNERS[command](args);
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

/** Waits until what was written to `stream` is handed to the system; the error that stopped it, if any (a full device, a closed pipe). */
function flushed(stream: NodeJS.WriteStream): Promise<Error | undefined> {
  return new Promise((resolve) => {
    stream.once('error', resolve);
    stream.write('', (error) => {
      resolve(error ?? undefined);
    });
  });
}

async function finish(code: number): Promise<never> {
  releaseAll();
  const lost = await flushed(process.stdout);
  await flushed(process.stderr);
  // A command that succeeded but whose report on standard output did not arrive (--json into a full disk) failed.
  if (lost !== undefined && code === EXIT.ok) {
    process.stderr.write(`hw4-cli: error: standard output: ${lost.message.split('\n')[0] ?? ''}; the report was not written\n`);
    process.exit(EXIT.fileSystem);
  }
  process.exit(code);
}

/**
 * The one global flag, taken out before the command line is parsed: --bounds-checks (anywhere before `--`) keeps
 * Dawn's bounds checks on for this run, as FA_BOUNDS_CHECKS=1 does.
 */
function takeGlobalFlags(args: string[]): string[] {
  const end = args.indexOf('--');
  const limit = end < 0 ? args.length : end;
  const kept = args.filter((arg, at) => !(at < limit && arg === '--bounds-checks'));
  if (kept.length !== args.length) process.env.FA_BOUNDS_CHECKS = '1';
  return kept;
}

const argv = takeGlobalFlags(process.argv.slice(2));

let stopping = false;

/**
 * Ends the process at once without output, for a signal or a launcher that has gone: removes the temporary files,
 * completes pending FIFO opens (exiting waits for them), says why in one line and exits with `code`.
 */
function stopWithoutOutput(code: number, why: string): void {
  if (stopping) return;
  stopping = true;
  removeTemporaryFilesSync();
  releaseFifoOpens();
  try {
    process.stderr.write(`\nhw4-cli: ${why}; no output was written\n`);
  } catch {
    // No one reads stderr any more (the launcher has gone).
  }
  process.exit(code);
}

const SIGNAL_WORDS: Record<(typeof SIGNAL_EXITS)[number][0], string> = { SIGHUP: 'hung up', SIGINT: 'interrupted', SIGTERM: 'terminated' };
for (const [signal, code] of SIGNAL_EXITS) {
  process.on(signal, () => {
    stopWithoutOutput(code, `${SIGNAL_WORDS[signal]} (${signal})`);
  });
}
onLauncherGone(() => {
  stopWithoutOutput(EXIT.hangup, 'hung up (the hw4-cli launcher has ended)');
});

try {
  await finish(await main(argv));
} catch (error) {
  removeTemporaryFilesSync();
  process.stderr.write(`hw4-cli: error: ${messageOf(error)}\n`);
  if (process.env.FA_DEBUG === '1' && error instanceof Error) process.stderr.write(`${error.stack ?? ''}\n`);
  await finish(exitCodeOf(error));
}
