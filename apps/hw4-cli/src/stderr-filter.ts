/**
 * Keeping Dawn's own messages out of the user's stream. Dawn (the native webgpu module) writes warnings straight to
 * the process's stderr from C++ (`Warning: Couldn't load Vulkan … at operator() (…BackendVk.cpp:368)`, the two
 * `maxDynamic…` warnings of the software GPU), even with -q, and offers no log level to silence them; Node cannot
 * redirect its own descriptor 2. So a command that may start the GPU runs as a child process whose stderr goes
 * through this filter: Dawn's lines are dropped, ours pass unchanged, and the child's exit code (or signal) becomes
 * ours. hw4-cli says in its own words why there is no GPU. FA_DEBUG=1 shows Dawn's lines (no child process).
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { SIGNAL_EXITS } from './exit-codes.js';

/** Lines that Dawn or the Vulkan loader print themselves. */
const NATIVE_LINE = /^(Warning|Error|Info): |^\s+at .*\.(cpp|cc|h|mm):\d+\)?$|^(ERROR|WARNING|INFO): \[Loader Message\]/;

export function isNativeLine(line: string): boolean {
  return NATIVE_LINE.test(line);
}

/** Set in the child, so it does not start another. */
const CHILD_FLAG = 'FA_STDERR_CHILD';

/** The ids of the CPU rungs (a test keeps this equal to the ladder's; the launcher must not load the ladder). */
export const CPU_RUNG_IDS: readonly string[] = ['seq-attention', 'seq-flash', 'cpu'];

/** Whether this command line may start the GPU and so should run behind the filter. */
export function wantsFilter(argv: readonly string[], env: NodeJS.ProcessEnv, cpuRungIds: readonly string[] = CPU_RUNG_IDS): boolean {
  if (env[CHILD_FLAG] === '1' || env.FA_DEBUG === '1' || env.FA_GPU === 'off' || env.FA_GPU === '0') return false;
  if (argv.length === 0 || argv.some((a) => ['--help', '-h', '--version', '-V'].includes(a))) return false;
  if (argv[0] === 'gen' || argv[0] === 'check') return false;
  const impl = implOf(argv);
  return impl === undefined || !impl.split(',').every((id) => cpuRungIds.includes(id.trim()));
}

function implOf(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--impl' || arg === '-i') return argv[i + 1];
    if (arg.startsWith('--impl=')) return arg.slice('--impl='.length);
  }
  return undefined;
}

/** How a filtered run ended: its exit code, and how many of Dawn's lines the filter dropped. */
export interface FilteredRun {
  code: number;
  dropped: number;
}

/** Runs this same command line as a child with Dawn's lines filtered out of its stderr. */
export function runFiltered(): Promise<FilteredRun> {
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: ['inherit', 'inherit', 'pipe'],
    env: { ...process.env, [CHILD_FLAG]: '1', FA_STDERR_TTY: process.stderr.isTTY ? '1' : '0' },
  });
  for (const [signal] of SIGNAL_EXITS) {
    process.on(signal, () => {
      child.kill(signal);
    });
  }
  let pending = '';
  // Dawn ends some messages with an empty line: dropped with them.
  let afterNative = false;
  let dropped = 0;
  const keep = (line: string): boolean => {
    const drop = isNativeLine(line) || (afterNative && line === '');
    afterNative = drop;
    if (drop) dropped++;
    return !drop;
  };
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => {
    const lines = (pending + text).split('\n');
    pending = lines.pop() ?? '';
    const kept = lines.filter(keep);
    if (kept.length > 0) process.stderr.write(`${kept.join('\n')}\n`);
    // A progress bar redraws one line with \r and no newline: pass it on at once.
    if (pending.startsWith('\r')) {
      process.stderr.write(pending);
      pending = '';
    }
  });
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      if (pending.length > 0 && keep(pending)) process.stderr.write(pending);
      resolve({ code: code ?? 128 + (signal ? constants.signals[signal] : 1), dropped });
    });
    child.on('error', (error) => {
      process.stderr.write(`hw4-cli: error: could not start: ${error.message}\n`);
      resolve({ code: 1, dropped });
    });
  });
}
