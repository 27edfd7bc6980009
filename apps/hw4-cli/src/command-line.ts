/**
 * The command line's grammar, one for the launcher (launch.ts, which decides before loading anything else whether a
 * command may start the GPU) and for main (cli.ts): which command a command line names, and each command's options
 * (the parser's tables; help.ts prints them). Light on purpose: it loads node:util through args.ts, nothing more.
 */
import { parse, stringFlag, type Options } from './args.js';

export const RUN_OPTIONS = {
  impl: { type: 'string', short: 'i' },
  threads: { type: 'string' },
  'chunk-mb': { type: 'string' },
  'allow-non-finite': { type: 'boolean' },
  'allow-inaccurate': { type: 'boolean' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
} as const;

export const LIST_OPTIONS = { json: { type: 'boolean' }, shape: { type: 'string', short: 's' } } as const;

export const LADDER_OPTIONS = {
  shape: { type: 'string', short: 's' },
  kind: { type: 'string', short: 'k' },
  seed: { type: 'string' },
  impl: { type: 'string', short: 'i' },
  threads: { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
} as const;

export const GEN_OPTIONS = {
  shape: { type: 'string', short: 's' },
  kind: { type: 'string', short: 'k' },
  seed: { type: 'string' },
  range: { type: 'string' },
  expected: { type: 'string' },
  quiet: { type: 'boolean', short: 'q' },
} as const;

export const CHECK_OPTIONS = {
  expected: { type: 'string', short: 'e' },
  tolerance: { type: 'string', short: 't' },
  rows: { type: 'string' },
  'allow-non-finite': { type: 'boolean' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
} as const;

export const CONFORMANCE_OPTIONS = {
  impl: { type: 'string', short: 'i' },
  threads: { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
} as const;

export const BENCH_OPTIONS = {
  shapes: { type: 'string', short: 's' },
  impl: { type: 'string', short: 'i' },
  repeats: { type: 'string', short: 'r' },
  'budget-s': { type: 'string' },
  render: { type: 'boolean' },
  out: { type: 'string', short: 'o' },
  python: { type: 'string' },
  'no-torch': { type: 'boolean' },
  'torch-dtype': { type: 'string' },
  threads: { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
} as const;

export const SWEEP_OPTIONS = {
  over: { type: 'string' },
  values: { type: 'string' },
  grid: { type: 'string' },
  base: { type: 'string' },
  impl: { type: 'string', short: 'i' },
  repeats: { type: 'string', short: 'r' },
  'budget-s': { type: 'string' },
  out: { type: 'string', short: 'o' },
  python: { type: 'string' },
  'no-torch': { type: 'boolean' },
  threads: { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
} as const;

export const SDPA_OPTIONS = {
  causal: { type: 'boolean' },
  window: { type: 'string', short: 'w' },
  mask: { type: 'string', short: 'm' },
  scale: { type: 'string' },
  layout: { type: 'string' },
  'cache-lengths': { type: 'string' },
  softcap: { type: 'string' },
  sinks: { type: 'string' },
  'alibi-slopes': { type: 'string' },
  'score-mod': { type: 'string' },
  'mask-mod': { type: 'string' },
  'mod-buffer': { type: 'string', multiple: true },
  impl: { type: 'string', short: 'i' },
  lse: { type: 'string' },
  list: { type: 'boolean' },
  bench: { type: 'boolean' },
  conformance: { type: 'boolean' },
  dtype: { type: 'string' },
  cases: { type: 'string' },
  python: { type: 'string' },
  'no-torch': { type: 'boolean' },
  ort: { type: 'boolean' },
  out: { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
} as const;

/** Each command's options, by the word that names it (`run` is also what a command line without one runs). */
export const COMMAND_OPTIONS = {
  run: RUN_OPTIONS,
  list: LIST_OPTIONS,
  ladder: LADDER_OPTIONS,
  gen: GEN_OPTIONS,
  check: CHECK_OPTIONS,
  conformance: CONFORMANCE_OPTIONS,
  bench: BENCH_OPTIONS,
  sdpa: SDPA_OPTIONS,
  sweep: SWEEP_OPTIONS,
} as const satisfies Record<string, Options>;

export type CommandName = keyof typeof COMMAND_OPTIONS;

export function isCommandName(word: string | undefined): word is CommandName {
  return word !== undefined && Object.hasOwn(COMMAND_OPTIONS, word);
}

/** The command a command line runs and that command's arguments: a command word first (`gen …`), else `--list` anywhere, else run. */
export function commandLine(argv: readonly string[]): { command: CommandName; args: string[] } {
  const [first, ...rest] = argv;
  if (isCommandName(first)) return { command: first, args: rest };
  if (argv.includes('--list')) return { command: 'list', args: argv.filter((a) => a !== '--list') };
  return { command: 'run', args: [...argv] };
}

export const asksHelp = (argv: readonly string[]): boolean => argv.includes('--help') || argv.includes('-h');
export const asksVersion = (argv: readonly string[]): boolean => argv.includes('--version') || argv.includes('-V');

/** Commands that never start the GPU, whatever their options. */
const GPU_FREE_COMMANDS: readonly CommandName[] = ['gen', 'check'];

/**
 * Whether this command line may start the GPU: a command that can, without an --impl that names CPU rungs only
 * (`cpuRungIds`: the launcher must not load the ladder to learn them). A command line that does not parse cannot: main
 * stops at the usage error before it starts anything.
 */
export function mayStartGpu(argv: readonly string[], cpuRungIds: readonly string[]): boolean {
  const { command, args } = commandLine(argv);
  if (GPU_FREE_COMMANDS.includes(command)) return false;
  let impl: string | undefined;
  try {
    impl = stringFlag(parse(command, args, COMMAND_OPTIONS[command]).values, 'impl');
  } catch {
    return false;
  }
  return impl === undefined || !impl.split(',').every((id) => cpuRungIds.includes(id.trim()));
}
