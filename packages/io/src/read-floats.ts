/**
 * Reading a run of little-endian float32 values from an open file, whatever the host's byte order.
 */
import type { FileHandle } from 'node:fs/promises';
import { endianness } from 'node:os';
import { Hw4FormatError } from './errors.js';

const BIG_ENDIAN_HOST = endianness() === 'BE';

/** `bytes` bytes from `position`, as floats; `name` is how a file that shrinks mid-read is called. */
export async function readFloats(handle: FileHandle, position: number, bytes: number, name: string, shared = false): Promise<Float32Array> {
  const storage = shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes);
  const target = new Uint8Array(storage);
  let done = 0;
  while (done < bytes) {
    const { bytesRead } = await handle.read(target, done, Math.min(bytes - done, 1 << 30), position + done);
    if (bytesRead === 0) throw new Hw4FormatError(`${name}: file shrank while being read (at byte ${position + done})`);
    done += bytesRead;
  }
  if (BIG_ENDIAN_HOST) Buffer.from(storage).swap32();
  return new Float32Array(storage);
}
