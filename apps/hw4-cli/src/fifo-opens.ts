/**
 * Opening a FIFO waits until its other end is opened too, and Node opens files on its thread pool: a run whose INPUT
 * is a FIFO with no writer (or OUTPUT a FIFO with no reader) holds a pool thread in open(). Exiting waits for the
 * pool's threads, so not even a signal could end such a run. The commands open their files through `whileOpening`,
 * and the way out (cli.ts) first calls `releaseFifoOpens`: it opens each FIFO still being opened for reading and
 * writing, which on Linux never waits and gives the pending open the other end it waits for. That descriptor stays
 * open until the process exits, so an open that had not reached the system yet does not wait either.
 */
import { constants, openSync, statSync } from 'node:fs';

/** Paths whose open is under way. */
const pending = new Set<string>();

/** Runs `open` (which opens `path`), keeping `path` known meanwhile to releaseFifoOpens. */
export async function whileOpening<T>(path: string, open: () => Promise<T>): Promise<T> {
  pending.add(path);
  try {
    return await open();
  } finally {
    pending.delete(path);
  }
}

/** Completes the pending opens of FIFOs (synchronous, for the way out on a signal). */
export function releaseFifoOpens(): void {
  for (const path of pending) {
    try {
      if (statSync(path).isFIFO()) openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
    } catch {
      // Not there, or not ours to open: no open of ours waits on it.
    }
  }
}
