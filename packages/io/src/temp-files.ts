/**
 * The writer's temporary files: `.<name>.<pid>.<8 hex>.tmp` beside the destination. Pending ones are removed by
 * signal handlers; stale ones, left by an earlier run that was killed outright (SIGKILL, a power loss), are removed
 * when the next writer for the same destination starts and finds their process gone.
 */
import { randomBytes } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { readdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Temporary files not yet committed or removed, so a signal handler can remove them. */
const pending = new Set<string>();

export function temporaryPathFor(destination: string): string {
  return join(dirname(destination), `.${basename(destination)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

export function trackTemporary(path: string): void {
  pending.add(path);
}

export function untrackTemporary(path: string): void {
  pending.delete(path);
}

/** Removes every temporary file still pending (for SIGINT/SIGTERM/SIGHUP handlers, which must act synchronously). */
export function removeTemporaryFilesSync(): void {
  for (const path of pending) {
    try {
      unlinkSync(path);
    } catch {
      // already gone
    }
  }
  pending.clear();
}

/** Whether a process with this id exists (one of another user counts: it may still be writing). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the temporary files of `destination` whose writing process no longer exists; returns their paths.
 * Files of live processes (a run writing the same output right now) are left alone.
 */
export async function removeStaleTemporaries(destination: string): Promise<string[]> {
  const folder = dirname(destination);
  const prefix = `.${basename(destination)}.`;
  const names = await readdir(folder).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const match = /^(\d+)\.[0-9a-f]{8}\.tmp$/.exec(name.slice(prefix.length));
    const pid = Number(match?.[1]);
    if (!match || !Number.isSafeInteger(pid) || pid === process.pid || processAlive(pid)) continue;
    const path = join(folder, name);
    if (await unlink(path).then(() => true, () => false)) removed.push(path);
  }
  return removed;
}
