/**
 * The four things `hw4-cli sdpa` does (compute on files, --list, --bench, --conformance) and the options each takes:
 * an option of another one, files given to one that takes none, or two of them at once are usage errors, never
 * silently ignored.
 */
import type { Values } from '../args.js';
import { UsageError } from '../exit-codes.js';

export type SdpaMode = 'run' | 'list' | 'bench' | 'conformance';

/** The options each mode reads (every mode takes --json and --quiet). */
const MODE_OPTIONS: Record<SdpaMode, readonly string[]> = {
  run: ['causal', 'window', 'mask', 'scale', 'layout', 'cache-lengths', 'softcap', 'sinks', 'alibi-slopes', 'score-mod', 'mask-mod', 'mod-buffer', 'impl', 'lse'],
  list: [],
  bench: ['cases', 'python', 'no-torch', 'ort', 'out'],
  conformance: ['impl', 'dtype'],
};

const COMMON = ['json', 'quiet'];
const FLAGS: readonly Exclude<SdpaMode, 'run'>[] = ['list', 'bench', 'conformance'];

/** How messages call a mode. */
const called = (mode: SdpaMode): string => (mode === 'run' ? 'a run on files (sdpa Q K V OUTPUT)' : `sdpa --${mode}`);

/** The mode a command line asks for; throws a UsageError for a mix of modes or an option the mode does not take. */
export function sdpaMode(values: Values, positionals: readonly string[]): SdpaMode {
  const flags = FLAGS.filter((flag) => values[flag] === true);
  if (flags.length > 1) throw new UsageError(`${flags.map((f) => `--${f}`).join(' and ')} are separate commands; give one of them (see hw4-cli sdpa --help)`);
  const mode: SdpaMode = flags[0] ?? 'run';
  if (mode !== 'run' && positionals.length > 0) {
    throw new UsageError(`sdpa --${mode} takes no files (got ${positionals.map((p) => JSON.stringify(p)).join(' ')}); drop them, or drop --${mode} to compute attention on them`);
  }
  for (const name of Object.keys(values)) {
    if (values[name] === undefined || (FLAGS as readonly string[]).includes(name) || COMMON.includes(name) || MODE_OPTIONS[mode].includes(name)) continue;
    const owners = (Object.keys(MODE_OPTIONS) as SdpaMode[]).filter((m) => MODE_OPTIONS[m].includes(name));
    throw new UsageError(`--${name} is an option of ${owners.map(called).join(' and ')}, not of ${called(mode)}; drop it`);
  }
  return mode;
}
