/**
 * Reading one .npy input of sdpa: a file, a FIFO, a device, or standard input (`-`). The header comes first and says
 * how many bytes of values follow. A regular file must be exactly that long, checked against its size before its
 * values are read; a stream is read up to that length and must then end. A stream that ends short, or goes on (a FIFO
 * fed forever, /dev/zero), is refused in one line (exit 3), never read whole.
 */
import { open } from 'node:fs/promises';
import { constants } from 'node:buffer';
import { isatty } from 'node:tty';
import { Hw4IoError, ioError, npyDataStart, NpyFormatError, parseNpy, parseNpyHeader, STDIO_PATH, stdinSource, type ByteSource, type NpyArray } from '@fa/io/node';
import { EXIT, ExitError } from '../exit-codes.js';
import { whileOpening } from '../fifo-opens.js';

/** The longest header taken: np.save writes 128 bytes for four dimensions (NumPy refuses over 10000 by default). */
const MAX_HEADER_BYTES = 1 << 20;
/** The bytes before the header's text: the magic, the version and the header's length (4 bytes of it in 2.0 and 3.0). */
const PREFIX_BYTES = 12;

/** How messages call an input: its role (Q, K, V, the mask) and its path. */
export const inputName = (what: string, path: string): string => (path === STDIO_PATH ? `${what} - (standard input)` : `${what} ${path}`);

/** The array in `path` (`-`: standard input), called `what` (Q, K, V, the mask) in messages. */
export async function readNpyInput(path: string, what: string): Promise<NpyArray> {
  const name = inputName(what, path);
  const source = await openSource(path, name);
  try {
    const stats = await source.stat().catch((error: unknown) => {
      throw ioError(error, name);
    });
    if (stats.isDirectory()) throw new Hw4IoError(`${name}: is a folder; give the path of a .npy file`);
    try {
      return parseNpy(await new Reader(source, name, stats.isFile()).whole(stats.size));
    } catch (error) {
      if (error instanceof NpyFormatError) throw new ExitError(`${name}: ${error.message}`, EXIT.invalidInput);
      throw error;
    }
  } finally {
    await source.close();
  }
}

async function openSource(path: string, name: string): Promise<ByteSource> {
  if (path === STDIO_PATH) {
    if (isatty(0)) throw new Hw4IoError(`${name}: standard input is a terminal; pipe or redirect a .npy file into it`);
    return stdinSource();
  }
  try {
    return await whileOpening(path, () => open(path, 'r'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new Hw4IoError(`${name}: is a loop of symbolic links (following them never reaches a file); point the link at a file or remove it`);
    throw ioError(error, name);
  }
}

/** Reads the header, then exactly the values it announces: at offsets from a regular file, in order from a stream. */
class Reader {
  /** Where a regular file is read next; a stream has no positions. */
  private at = 0;

  constructor(
    private readonly source: ByteSource,
    private readonly name: string,
    private readonly file: boolean,
  ) {}

  /** The whole .npy file: header, then values (`size`: a regular file's size, checked against the header first). */
  async whole(size: number): Promise<Uint8Array> {
    const prefix = await this.fill(new Uint8Array(PREFIX_BYTES), 0);
    const dataStart = npyDataStart(prefix);
    if (dataStart - PREFIX_BYTES > MAX_HEADER_BYTES) {
      throw new NpyFormatError(`the .npy header claims ${dataStart - PREFIX_BYTES} bytes, beyond the ${MAX_HEADER_BYTES} taken here (np.save writes about 128); write the file with np.save`);
    }
    // A header too short to hold the dict (a length under 2) fails to parse, after the prefix already read.
    const head = new Uint8Array(Math.max(dataStart, prefix.length));
    head.set(prefix);
    const header = parseNpyHeader(await this.fill(head, prefix.length));
    const total = dataStart + header.dataBytes;
    const shape = `(${header.shape.join(', ')}${header.shape.length === 1 ? ',' : ''})`;
    if (this.file && size !== total) {
      throw new NpyFormatError(`the .npy data holds ${size - dataStart} bytes but shape ${shape} of '${header.dtype}' needs ${header.dataBytes}; the file is truncated or its header is wrong`);
    }
    if (total > constants.MAX_LENGTH) throw new NpyFormatError(`the .npy array of shape ${shape} holds ${header.dataBytes} bytes, more than one buffer takes here (${constants.MAX_LENGTH}); give smaller tensors`);
    const bytes = new Uint8Array(total);
    bytes.set(head.subarray(0, dataStart));
    const got = (await this.fill(bytes, dataStart)).length - dataStart;
    if (got < header.dataBytes) {
      throw new NpyFormatError(`the .npy input ended after ${got} bytes of values but shape ${shape} of '${header.dtype}' needs ${header.dataBytes}; give the whole file`);
    }
    if (!this.file && (await this.fill(new Uint8Array(1), 0)).length > 0) {
      throw new NpyFormatError(`the .npy stream goes on after the ${total} bytes its header announces; give one .npy file and nothing after it`);
    }
    return bytes;
  }

  /** Fills `buffer` from `from` on, or less where the input ends first; the part filled. */
  private async fill(buffer: Uint8Array, from: number): Promise<Uint8Array> {
    let done = from;
    while (done < buffer.length) {
      let got: number;
      try {
        got = (await this.source.read(buffer, done, Math.min(buffer.length - done, 1 << 30), this.file ? this.at : null)).bytesRead;
      } catch (error) {
        throw ioError(error, this.name);
      }
      if (got === 0) break;
      done += got;
      this.at += got;
    }
    return buffer.subarray(0, done);
  }
}
