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
import { asksHelp, asksVersion, mayStartGpu } from './command-line.js';
import { SIGNAL_EXITS } from './exit-codes.js';
import { CHILD_FLAG, DAWN_LOADED } from './parent-watch.js';

/** Lines that Dawn or the Vulkan loader print themselves. */
const NATIVE_LINE = /^(Warning|Error|Info): |^\s+at .*\.(cpp|cc|h|mm):\d+\)?$|^(ERROR|WARNING|INFO): \[Loader Message\]/;

export function isNativeLine(line: string): boolean {
  return NATIVE_LINE.test(line);
}

/** The ids of the CPU rungs (a test keeps this equal to the ladder's; the launcher must not load the ladder). */
export const CPU_RUNG_IDS: readonly string[] = ['seq-attention', 'seq-flash', 'cpu'];

/**
 * Whether this command line should run behind the filter: one that may start the GPU (parsed as main parses it), or
 * any command with FA_STDERR_FILTER=always.
 */
export function wantsFilter(argv: readonly string[], env: NodeJS.ProcessEnv, cpuRungIds: readonly string[] = CPU_RUNG_IDS): boolean {
  if (env[CHILD_FLAG] === '1' || env.FA_DEBUG === '1' || argv.length === 0 || asksHelp(argv) || asksVersion(argv)) return false;
  if (env.FA_STDERR_FILTER === 'always') return true;
  if (env.FA_GPU === 'off' || env.FA_GPU === '0') return false;
  return mayStartGpu(argv, cpuRungIds);
}

/** The line for a child ended by `signal`: which signal, its likely sender, and what to do. */
export function killedLine(signal: NodeJS.Signals): string {
  const why = signal === 'SIGKILL' ? ' (sent by a user, or by the system when memory runs out)' : '';
  return `hw4-cli: error: the process running the command was killed by ${signal}${why}; no output file was replaced by a partial one, rerun the command`;
}

/** How a filtered run ended: its exit code, how many of Dawn's lines the filter dropped, and whether it loaded Dawn. */
export interface FilteredRun {
  code: number;
  dropped: number;
  dawnLoaded: boolean;
}

/**
 * Runs this same command line as a child with Dawn's lines filtered out of its stderr. The child's fourth descriptor
 * is an IPC channel (parent-watch.ts): it says when it has loaded Dawn, and it stops when the channel closes.
 */
export function runFiltered(): Promise<FilteredRun> {
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: ['inherit', 'inherit', 'pipe', 'ipc'],
    env: { ...process.env, [CHILD_FLAG]: '1', FA_STDERR_TTY: process.stderr.isTTY ? '1' : '0' },
  });
  let dawnLoaded = false;
  child.on('message', (message) => {
    if (message === DAWN_LOADED) dawnLoaded = true;
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
  // Piped (the third descriptor above), so never null; typed nullable because of the IPC descriptor.
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (text: string) => {
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
      if (pending.length > 0 && keep(pending)) process.stderr.write(`${pending}\n`);
      // The signals hw4-cli handles end the child with its own line and code; any other (SIGKILL, a crash) ends it
      // silently: said here, in one line.
      if (code === null && signal !== null) process.stderr.write(`${killedLine(signal)}\n`);
      resolve({ code: code ?? 128 + (signal ? constants.signals[signal] : 1), dropped, dawnLoaded });
    });
    child.on('error', (error) => {
      process.stderr.write(`hw4-cli: error: could not start: ${error.message}\n`);
      resolve({ code: 1, dropped, dawnLoaded });
    });
  });
}
