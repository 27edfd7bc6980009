/**
 * The writer's temporary files: `.<name>.<pid>.<8 hex>.tmp` beside the destination. Pending ones are removed by
 * signal handlers; stale ones, left by an earlier run that was killed outright (SIGKILL, a power loss), are removed
 * when the next writer for the same destination starts and finds their process gone. A name too long to fit a
 * file name with that decoration is cut, and a hash of the whole name keeps the temporary files of two long names
 * with the same beginning apart (`.<beginning>~<8 hex of the name>.<pid>.<8 hex>.tmp`).
 */
import { createHash, randomBytes } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { readdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Temporary files not yet committed or removed, so a signal handler can remove them. */
const pending = new Set<string>();

/** The longest file name most file systems take (NAME_MAX), in bytes. */
const NAME_MAX_BYTES = 255;
/** What the decoration adds to the name: the dot before it, `.<pid>` (a pid has at most 10 digits), `.<8 hex>.tmp`. */
const DECORATION_BYTES = '.'.length + '.'.length + 10 + '.'.length + 8 + '.tmp'.length;
/** What a cut name ends with instead of its rest: `~` and 8 hex digits of the whole name's hash. */
const HASH_TAIL_BYTES = '~'.length + 8;

/** The part of a temporary file's name that names its destination: the destination's name, or its beginning and hash. */
function temporaryStem(destination: string): string {
  const name = basename(destination);
  if (Buffer.byteLength(name) <= NAME_MAX_BYTES - DECORATION_BYTES) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${cutToBytes(name, NAME_MAX_BYTES - DECORATION_BYTES - HASH_TAIL_BYTES)}~${hash}`;
}

/** The longest beginning of `text` of at most `bytes` bytes in UTF-8, cut between characters. */
function cutToBytes(text: string, bytes: number): string {
  let cut = '';
  let used = 0;
  for (const character of text) {
    used += Buffer.byteLength(character);
    if (used > bytes) break;
    cut += character;
  }
  return cut;
}

export function temporaryPathFor(destination: string): string {
  return join(dirname(destination), `.${temporaryStem(destination)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
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
  const prefix = `.${temporaryStem(destination)}.`;
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
