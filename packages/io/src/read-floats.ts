/**
 * Reading a run of little-endian float32 values from an open file, whatever the host's byte order.
 */
import { fstat, read } from 'node:fs';
import type { Stats } from 'node:fs';
import { endianness } from 'node:os';
import { freshBytes, type Allocate } from './chunks.js';
import { Hw4FormatError } from './errors.js';

const BIG_ENDIAN_HOST = endianness() === 'BE';

/** What the readers need of an open file: a FileHandle, or standard input's descriptor (stdinSource). */
export interface ByteSource {
  read(buffer: Uint8Array, offset: number, length: number, position: number | null): Promise<{ bytesRead: number }>;
  stat(): Promise<Stats>;
  close(): Promise<void>;
}

/**
 * Standard input as a ByteSource, read through descriptor 0 (a pipe, a socket or a redirected file; opening
 * /dev/stdin fails for sockets). Closing it leaves the descriptor open.
 */
export function stdinSource(): ByteSource {
  return {
    read: (buffer, offset, length, position) =>
      new Promise((resolve, reject) => {
        read(0, buffer, offset, length, position, (error, bytesRead) => {
          if (error) reject(error);
          else resolve({ bytesRead });
        });
      }),
    stat: () =>
      new Promise((resolve, reject) => {
        fstat(0, (error, stats) => {
          if (error) reject(error);
          else resolve(stats);
        });
      }),
    close: () => Promise.resolve(),
  };
}


/** `bytes` bytes from `position`, as floats; `name` is how a file that shrinks mid-read is called. */
export async function readFloats(handle: ByteSource, position: number, bytes: number, name: string, allocate: Allocate = freshBytes): Promise<Float32Array> {
  const target = allocate(bytes);
  let done = 0;
  while (done < bytes) {
    const { bytesRead } = await handle.read(target, done, Math.min(bytes - done, 1 << 30), position + done);
    if (bytesRead === 0) throw new Hw4FormatError(`${name}: file shrank while being read (at byte ${position + done})`);
    done += bytesRead;
  }
  if (BIG_ENDIAN_HOST) Buffer.from(target.buffer, target.byteOffset, bytes).swap32();
  return new Float32Array(target.buffer, target.byteOffset, bytes / 4);
}

/**
 * Up to `bytes` bytes read in order from a stream (standard input, a pipe): fewer only when it ends first. As raw
 * bytes when `raw`, else the caller views them as floats (little-endian whatever the host).
 */
export async function readStreamFloats(handle: ByteSource, bytes: number, name: string, raw = false, allocate: Allocate = freshBytes): Promise<Uint8Array> {
  const target = allocate(bytes);
  let done = 0;
  while (done < bytes) {
    let bytesRead: number;
    try {
      ({ bytesRead } = await handle.read(target, done, Math.min(bytes - done, 1 << 30), null));
    } catch (error) {
      throw new Hw4FormatError(`${name}: reading failed: ${(error as Error).message}`);
    }
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  if (BIG_ENDIAN_HOST && !raw) Buffer.from(target.buffer, target.byteOffset, done - (done % 4)).swap32();
  return target.subarray(0, done);
}
