/**
 * hw4-cli entry: dispatches the command, maps errors to one-line messages and exit codes, and exits explicitly
 * (Dawn keeps a thread alive after a device is created, so the process would otherwise never end).
 */
import { GpuError, UnsupportedShapeError } from '@fa/core';
import { Hw4FormatError, Hw4IoError, removeTemporaryFilesSync } from '@fa/io';
import { parse } from './args.js';
import { benchCommand } from './commands/bench.js';
import { checkCommand } from './commands/check.js';
import { conformanceCommand } from './commands/conformance.js';
import { genCommand } from './commands/gen.js';
import { ladderCommand } from './commands/ladder.js';
import { formatList, listRungs } from './commands/list.js';
import { runCommand } from './commands/run.js';
import { makeEnv, releaseAll } from './env.js';
import { ExitError, EXIT, UsageError } from './exit-codes.js';
import { HELP } from './help.js';

function version(): string {
  return typeof __HW4_CLI_VERSION__ === 'string' ? __HW4_CLI_VERSION__ : 'development';
}

async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (argv.length === 0) {
    process.stderr.write(`${HELP.split('\n\n')[1] ?? ''}\n\nrun hw4-cli --help for options and examples\n`);
    return EXIT.usage;
  }
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return EXIT.ok;
  }
  if (argv.includes('--version') || argv.includes('-V')) {
    process.stdout.write(`${version()}\n`);
    return EXIT.ok;
  }
  switch (first) {
    case 'gen':
      return genCommand(rest);
    case 'check':
      return checkCommand(rest);
    case 'ladder':
      return ladderCommand(rest);
    case 'bench':
      return benchCommand(rest);
    case 'conformance':
      return conformanceCommand(rest);
    case 'run':
      return runCommand(rest);
    case 'list':
      return listCommand(rest);
    default:
      if (argv.includes('--list')) return listCommand(argv.filter((a) => a !== '--list'));
      return runCommand(argv);
  }
}

async function listCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse('--list', args, { json: { type: 'boolean' } });
  if (positionals.length > 0) throw new UsageError(`--list takes no file arguments (got ${positionals.join(' ')})`);
  const env = await makeEnv({ gpu: true });
  process.stdout.write(values.json === true ? `${JSON.stringify(listRungs(env), null, 2)}\n` : `${formatList(env)}\n`);
  return EXIT.ok;
}

function exitCodeOf(error: unknown): number {
  if (error instanceof ExitError) return error.exitCode;
  if (error instanceof UsageError || error instanceof UnsupportedShapeError) return EXIT.usage;
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

for (const [signal, code] of [['SIGINT', EXIT.interrupted], ['SIGTERM', 143]] as const) {
  process.on(signal, () => {
    removeTemporaryFilesSync();
    process.stderr.write(`\nhw4-cli: interrupted; no output was written\n`);
    process.exit(code);
  });
}

try {
  await finish(await main(process.argv.slice(2)));
} catch (error) {
  removeTemporaryFilesSync();
  process.stderr.write(`hw4-cli: error: ${messageOf(error)}\n`);
  if (process.env.FA_DEBUG === '1' && error instanceof Error) process.stderr.write(`${error.stack ?? ''}\n`);
  await finish(exitCodeOf(error));
}
