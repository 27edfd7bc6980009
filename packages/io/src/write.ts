/**
 * Atomic output: bytes go to a temporary file in the destination folder, which is renamed over the destination only
 * when everything was written. A failed or interrupted run leaves the destination as it was and no partial file.
 */
import { randomBytes } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { open, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { endianness } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { Hw4FormatError, Hw4IoError } from './errors.js';
import { encodeHeader } from './header.js';
import { ioError } from './io-error.js';
import { formatShape, validateShape, type Shape } from './shape.js';

const BIG_ENDIAN_HOST = endianness() === 'BE';

/** Temporary files not yet committed or removed, so a signal handler can remove them. */
const pendingTemporaries = new Set<string>();

/** Removes every temporary file still pending (for SIGINT/SIGTERM handlers, which must act synchronously). */
export function removeTemporaryFilesSync(): void {
  for (const path of pendingTemporaries) {
    try {
      unlinkSync(path);
    } catch {
      // already gone
    }
  }
  pendingTemporaries.clear();
}

export interface AtomicWriterOptions {
  /** fsync before the rename, so the file survives a power loss too. Default false. */
  durable?: boolean;
  /** How messages call the destination (default: the path). */
  name?: string;
}

export class AtomicFileWriter {
  private finished = false;

  private constructor(
    readonly path: string,
    readonly temporaryPath: string,
    private readonly handle: FileHandle,
    private readonly options: AtomicWriterOptions,
  ) {}

  /** Checks the destination folder and creates the temporary file beside the destination. */
  static async open(path: string, options: AtomicWriterOptions = {}): Promise<AtomicFileWriter> {
    const name = options.name ?? path;
    const target = resolve(path);
    const folder = dirname(target);
    const folderStat = await stat(folder).catch((error: unknown) => {
      throw (error as NodeJS.ErrnoException).code === 'ENOENT'
        ? new Hw4IoError(`output ${name}: folder ${folder} does not exist; create it first`)
        : ioError(error, `output ${name}`);
    });
    if (!folderStat.isDirectory()) throw new Hw4IoError(`output ${name}: ${folder} is not a folder`);
    const existing = await stat(target).catch(() => undefined);
    if (existing?.isDirectory()) throw new Hw4IoError(`output ${name}: is a folder; give a file path`);
    const temporaryPath = join(folder, `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    let handle: FileHandle;
    try {
      handle = await open(temporaryPath, 'wx', existing ? existing.mode & 0o777 : 0o644);
    } catch (error) {
      throw ioError(error, `output ${name}`);
    }
    pendingTemporaries.add(temporaryPath);
    return new AtomicFileWriter(target, temporaryPath, handle, options);
  }

  /** Appends bytes (float data is written little-endian whatever the host). */
  async write(data: ArrayBufferView): Promise<void> {
    let bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    if (BIG_ENDIAN_HOST && data instanceof Float32Array) bytes = Buffer.from(bytes).swap32();
    try {
      let done = 0;
      while (done < bytes.byteLength) {
        const { bytesWritten } = await this.handle.write(bytes, done, Math.min(bytes.byteLength - done, 1 << 30));
        done += bytesWritten;
      }
    } catch (error) {
      await this.abort();
      throw ioError(error, `output ${this.options.name ?? this.path}`);
    }
  }

  /** Renames the temporary file over the destination. */
  async commit(): Promise<void> {
    if (this.finished) return;
    try {
      if (this.options.durable) await this.handle.sync();
      await this.handle.close();
      await rename(this.temporaryPath, this.path);
      this.finished = true;
      pendingTemporaries.delete(this.temporaryPath);
    } catch (error) {
      await this.abort();
      throw ioError(error, `output ${this.options.name ?? this.path}`);
    }
  }

  /** Removes the temporary file; the destination is untouched. Safe to call more than once. */
  async abort(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    await this.handle.close().catch(() => undefined);
    await unlink(this.temporaryPath).catch(() => undefined);
    pendingTemporaries.delete(this.temporaryPath);
  }
}

/** Writes `chunks` to `path` atomically; on any error the destination is untouched. */
export async function writeFileAtomic(
  path: string,
  chunks: Iterable<ArrayBufferView> | AsyncIterable<ArrayBufferView>,
  options: AtomicWriterOptions = {},
): Promise<void> {
  const writer = await AtomicFileWriter.open(path, options);
  try {
    for await (const chunk of chunks) await writer.write(chunk);
    await writer.commit();
  } finally {
    await writer.abort();
  }
}

/** Writes an output file (B·N·d floats, no header) atomically. */
export async function writeHw4Output(path: string, data: Float32Array, options: AtomicWriterOptions = {}): Promise<void> {
  await writeFileAtomic(path, [data], options);
}

/** Writes an input file (header, then Q, K, V per batch) atomically; `batches` yields the float data in order. */
export async function writeHw4Input(
  path: string,
  shape: Shape,
  batches: Float32Array | Iterable<Float32Array> | AsyncIterable<Float32Array>,
  options: AtomicWriterOptions = {},
): Promise<void> {
  validateShape(shape);
  const body = batches instanceof Float32Array ? [batches] : batches;
  const expected = shape.B * 3 * shape.N * shape.d;
  async function* all(): AsyncGenerator<ArrayBufferView> {
    yield encodeHeader(shape);
    let floats = 0;
    for await (const chunk of body) {
      floats += chunk.length;
      yield chunk;
    }
    if (floats !== expected) {
      throw new Hw4FormatError(`input data has ${floats} floats but ${formatShape(shape)} needs ${expected}; nothing was written`);
    }
  }
  await writeFileAtomic(path, all(), options);
}
