import { afterEach, describe, expect, it, vi } from 'vitest';
import * as fs from 'node:fs';
import { ioError } from '../src/io-error.js';
import { writeDescriptor } from '../src/stdout.js';

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return { ...real, writeSync: vi.fn() };
});

/** The one form of writeSync the writer calls. */
type WriteSync = (fd: number, bytes: Uint8Array, offset: number, length: number) => number;
const writeSync = vi.mocked(fs.writeSync as unknown as WriteSync);

/** An error as the system reports it. */
function systemError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: write`), { code });
}

describe('writing standard output through its descriptor (a file or a device)', () => {
  afterEach(() => {
    writeSync.mockReset();
  });

  it('goes on after short counts until every byte is written', async () => {
    const received: number[] = [];
    writeSync.mockImplementation((_fd, bytes, offset, length) => {
      const count = Math.min(length, 3);
      received.push(...bytes.subarray(offset, offset + count));
      return count;
    });
    const bytes = Uint8Array.from({ length: 10 }, (_, i) => i);
    await writeDescriptor(1, bytes);
    expect(received).toEqual([...bytes]);
    expect(writeSync.mock.calls.map(([, , offset, length]) => [offset, length])).toEqual([[0, 10], [3, 7], [6, 4], [9, 1]]);
  });

  it('fails with the reason when the rest of a short write fails (a disk that fills up)', async () => {
    writeSync.mockReturnValueOnce(4).mockImplementationOnce(() => {
      throw systemError('ENOSPC');
    });
    const error = await writeDescriptor(1, new Uint8Array(10)).catch((e: unknown) => e);
    expect(writeSync).toHaveBeenCalledTimes(2);
    expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
    expect(ioError(error, 'output standard output').message).toBe('output standard output: no space left on the device');
  });

  it('waits and retries while a non-blocking descriptor is full', async () => {
    writeSync
      .mockImplementationOnce(() => {
        throw systemError('EAGAIN');
      })
      .mockReturnValueOnce(6)
      .mockImplementationOnce(() => {
        throw systemError('EAGAIN');
      })
      .mockReturnValueOnce(4);
    await writeDescriptor(1, new Uint8Array(10));
    expect(writeSync).toHaveBeenCalledTimes(4);
  });

  it('fails instead of looping when the system accepts no bytes', async () => {
    writeSync.mockReturnValue(0);
    await expect(writeDescriptor(1, new Uint8Array(10))).rejects.toThrow(/accepted none of the last 10 bytes/);
  });
});
