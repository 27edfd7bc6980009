/**
 * hw4-cli must not outlive the process that waits for it: a run already reported as ended (a launcher killed with
 * exit 137, npx ended with 143) would otherwise still replace OUTPUT later. Two such parents are watched, decided at
 * start:
 * - the launcher, by the child it runs behind the stderr filter (stderr-filter.ts). They share an IPC channel: when the
 *   launcher ends, even killed outright (SIGKILL), the channel closes and the child stops at once. The child also says
 *   through it when it has loaded Dawn, so that the launcher records whether Dawn prints only after a run that loaded it.
 * - npx: npm runs `npx hw4-cli …` as `sh -c "'hw4-cli' …"` (npm_lifecycle_event=npx) and passes SIGINT and SIGTERM on
 *   to that shell only (@npmcli/run-script, lib/signal-manager.js). The shell dies of SIGTERM without passing it on,
 *   and a shell left behind by npm killed outright keeps waiting for hw4-cli. So hw4-cli polls whether the shell, or
 *   npm above it, has ended, and then stops as on SIGHUP. (A SIGINT sent to npm alone reaches the shell only, which
 *   waits for hw4-cli before it ends: hw4-cli cannot see it; see the README.)
 * Any other parent (a shell, nohup, a service manager) may end while hw4-cli goes on: that is the user's choice.
 * A run also checks that its watched parent is still there right before it renames OUTPUT into place.
 */
import { readFileSync } from 'node:fs';
import { EXIT, ExitError } from './exit-codes.js';

/** Set in the child that the launcher runs behind the stderr filter (so it does not start another). */
export const CHILD_FLAG = 'FA_STDERR_CHILD';

/** The message a child sends its launcher when it has loaded Dawn. */
export const DAWN_LOADED = 'dawn-loaded';

/** How often hw4-cli looks whether npm's shell and npm are still there, under npx. */
const NPX_POLL_MS = 200;

const parentAtStart = process.ppid;

/** The parent id of process `pid` (field 4 of /proc/PID/stat, after the command name in parentheses), if it exists. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** npm's process id, when this process was started by the shell that npm runs for `npx hw4-cli …`. */
function npmOfNpx(env: NodeJS.ProcessEnv): number | undefined {
  const script = env.npm_lifecycle_script;
  if (env.npm_lifecycle_event !== 'npx' || script === undefined) return undefined;
  try {
    const [, flag, command] = readFileSync(`/proc/${parentAtStart}/cmdline`, 'utf8').split('\0');
    return flag === '-c' && command?.startsWith(script) === true ? parentOf(parentAtStart) : undefined;
  } catch {
    return undefined;
  }
}

const npmAtStart = process.env[CHILD_FLAG] === '1' ? undefined : npmOfNpx(process.env);

/** The parent this process must not outlive, if any: decided at start. */
const watched: 'launcher' | 'npx' | undefined = process.env[CHILD_FLAG] === '1' ? 'launcher' : npmAtStart !== undefined ? 'npx' : undefined;

/** Whether the watched parent has ended (this process then has another parent), or under npx, npm above it. */
export function parentGone(): boolean {
  if (watched === undefined) return false;
  return process.ppid !== parentAtStart || (watched === 'npx' && parentOf(parentAtStart) !== npmAtStart);
}

/** Throws (exit 129, as on SIGHUP) when the watched parent has ended; called right before OUTPUT is renamed into place. */
export function checkParentAlive(): void {
  if (!parentGone()) return;
  const parent = watched === 'npx' ? 'npx, which started hw4-cli,' : 'the hw4-cli launcher';
  throw new ExitError(`hung up: ${parent} has ended, so no one waits for this run; no output was written`, EXIT.hangup);
}

/** In the launcher (or the one process): under npx, stops this process as on SIGHUP once npm's shell or npm has ended. */
export function stopWithNpx(): void {
  if (watched !== 'npx') return;
  const timer = setInterval(() => {
    if (!parentGone()) return;
    clearInterval(timer);
    process.kill(process.pid, 'SIGHUP');
  }, NPX_POLL_MS);
  timer.unref();
}

/** In the launcher's child: calls `stop` as soon as the launcher has ended (the IPC channel closed). */
export function onLauncherGone(stop: () => void): void {
  if (watched !== 'launcher' || process.channel === undefined) return;
  process.on('disconnect', stop);
  process.channel.unref();
  if (!process.connected) stop();
}

/** In the launcher's child: tells the launcher that Dawn has been loaded. */
export function reportDawnLoaded(): void {
  if (watched === 'launcher' && process.connected) process.send?.(DAWN_LOADED);
}
