/**
 * Standard output written so that every byte arrives or the write fails. Node's stream for a redirected file or a
 * device (a SyncWriteStream) ignores a short count from the system and reports success, so a full disk cut the
 * output short while the program exited 0; those are written through descriptor 1 here instead. A pipe's stream
 * reports a closed reader (EPIPE) as an 'error' event, which ends the process with a stack trace when nobody
 * listens; a listener stays on it and its error goes to the writer that is waiting, or to the next one.
 */
import { writeSync } from 'node:fs';
import { Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

const STDOUT_FD = 1;

/** How long to wait before retrying a descriptor that was opened non-blocking and is full (EAGAIN). */
const RETRY_MS = 1;

/** The first error standard output's stream reported; every later write fails with it. */
let streamError: Error | undefined;
let listening = false;

/** Writes all of `bytes` to standard output; rejects with the system's error (ENOSPC, EPIPE, …) if it cannot. */
export async function writeStdout(bytes: Uint8Array): Promise<void> {
  keepStdoutErrors();
  if (streamError) throw streamError;
  // A terminal's stream is a Socket too; everything else (a file, a device) is a SyncWriteStream.
  if (process.stdout instanceof Socket) await writeStream(process.stdout, bytes);
  else await writeDescriptor(STDOUT_FD, bytes);
}

/** Keeps standard output's stream from ever raising an unhandled 'error' event; its error fails the writes instead. */
export function keepStdoutErrors(): void {
  if (listening) return;
  listening = true;
  process.stdout.on('error', (error: Error) => {
    streamError ??= error;
  });
}

/** Writes through a stream and waits until the bytes are handed to the system (back-pressure for pipes). */
function writeStream(stream: NodeJS.WritableStream, bytes: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    stream.write(bytes, (error) => {
      // After the first failure the stream is destroyed and later writes only say so: report the cause.
      if (error) reject(streamError ?? error);
      else resolve();
    });
  });
}

/**
 * Writes all of `bytes` to descriptor `fd`: a short count (a disk that fills up, a file size limit) goes on with the
 * rest, whose write then fails with the reason; a non-blocking descriptor that is full is retried after a moment.
 */
export async function writeDescriptor(fd: number, bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.byteLength) {
    let written: number;
    try {
      written = writeSync(fd, bytes, done, bytes.byteLength - done);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      await delay(RETRY_MS);
      continue;
    }
    if (written === 0) throw new Error(`write accepted none of the last ${bytes.byteLength - done} bytes`);
    done += written;
  }
}
