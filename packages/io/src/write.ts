/**
 * Output writers. A regular file is written atomically: bytes go to a temporary file in the destination folder, which
 * is renamed over the destination only when everything was written, so a failed or interrupted run leaves the
 * destination as it was and no partial file. Standard output (`-`) and special files (devices, FIFOs) cannot be
 * replaced that way; they are written directly (see output-target.ts).
 */
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { endianness } from 'node:os';
import { Hw4FormatError, Hw4IoError } from './errors.js';
import { encodeHeader } from './header.js';
import { ioError } from './io-error.js';
import { resolveOutputTarget, type OutputTarget } from './output-target.js';
import { formatShape, validateShape, type Shape } from './shape.js';
import { keepStdoutErrors, writeStdout } from './stdout.js';
import { removeStaleTemporaries, temporaryPathFor, trackTemporary, untrackTemporary } from './temp-files.js';

export { removeTemporaryFilesSync, removeStaleTemporaries } from './temp-files.js';

const BIG_ENDIAN_HOST = endianness() === 'BE';

export interface AtomicWriterOptions {
  /** fsync before the rename, so the file survives a power loss too. Default false. */
  durable?: boolean;
  /** How messages call the destination (default: the path). */
  name?: string;
}

/** What every writer offers: append, then commit (or abort, which is safe to call more than once). */
export interface OutputWriter {
  /** Where the bytes end up (an absolute path, or `-` for standard output). */
  readonly path: string;
  /** True when the destination is written as the data comes (standard output, a device, a FIFO). */
  readonly direct: boolean;
  write(data: ArrayBufferView): Promise<void>;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

/** Little-endian bytes of `data`, whatever the host. */
function bytesOf(data: ArrayBufferView): Uint8Array {
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return BIG_ENDIAN_HOST && data instanceof Float32Array ? Buffer.from(bytes).swap32() : bytes;
}

async function writeAll(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.byteLength) {
    const { bytesWritten } = await handle.write(bytes, done, Math.min(bytes.byteLength - done, 1 << 30));
    done += bytesWritten;
  }
}

/**
 * Opens the right writer for `path`: atomic for regular files (through symbolic links to their target), direct for
 * standard output (`-`) and for existing devices, FIFOs and sockets. Checks the destination before any work is done.
 */
export async function openOutput(path: string, options: AtomicWriterOptions = {}): Promise<OutputWriter> {
  const target = await resolveOutputTarget(path, options.name ?? path);
  return target.kind === 'file' ? AtomicFileWriter.openTarget(target, options) : DirectWriter.open(target, options);
}

export class AtomicFileWriter implements OutputWriter {
  readonly direct = false;
  private finished = false;

  private constructor(
    readonly path: string,
    readonly temporaryPath: string,
    private readonly handle: FileHandle,
    private readonly options: AtomicWriterOptions,
  ) {}

  /**
   * Checks the destination folder and creates the temporary file beside the destination (beside a symbolic link's
   * target). Refuses destinations that are not regular files; use openOutput() to write those directly.
   */
  static async open(path: string, options: AtomicWriterOptions = {}): Promise<AtomicFileWriter> {
    const name = options.name ?? path;
    const target = await resolveOutputTarget(path, name);
    if (target.kind !== 'file') {
      const what = target.kind === 'stdout' ? 'standard output' : 'not a regular file';
      throw new Hw4IoError(`output ${name}: is ${what}, which cannot be replaced atomically; write it with openOutput()`);
    }
    return AtomicFileWriter.openTarget(target, options);
  }

  /** @internal */
  static async openTarget(target: Extract<OutputTarget, { kind: 'file' }>, options: AtomicWriterOptions): Promise<AtomicFileWriter> {
    await removeStaleTemporaries(target.path);
    const temporaryPath = temporaryPathFor(target.path);
    // Tracked before it exists: the file is created on a worker thread, and a signal that arrives after that but
    // before `open` resolves must still find it to remove.
    trackTemporary(temporaryPath);
    let handle: FileHandle;
    try {
      handle = await open(temporaryPath, 'wx', target.mode ?? 0o644);
    } catch (error) {
      untrackTemporary(temporaryPath);
      throw ioError(error, `output ${options.name ?? target.path}`);
    }
    return new AtomicFileWriter(target.path, temporaryPath, handle, options);
  }

  /** Appends bytes (float data is written little-endian whatever the host). */
  async write(data: ArrayBufferView): Promise<void> {
    try {
      await writeAll(this.handle, bytesOf(data));
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
      untrackTemporary(this.temporaryPath);
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
    untrackTemporary(this.temporaryPath);
  }
}

/**
 * Writes straight to standard output or to a special file. Nothing can be taken back: a failure part-way leaves
 * what was already written (a reader of a pipe sees a short stream and the program's non-zero exit).
 */
export class DirectWriter implements OutputWriter {
  readonly direct = true;
  private finished = false;

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle | undefined,
    private readonly name: string,
  ) {}

  static async open(target: Exclude<OutputTarget, { kind: 'file' }>, options: AtomicWriterOptions = {}): Promise<DirectWriter> {
    if (target.kind === 'stdout') {
      keepStdoutErrors();
      return new DirectWriter('-', undefined, options.name ?? 'standard output');
    }
    const name = options.name ?? target.path;
    try {
      return new DirectWriter(target.path, await open(target.path, 'w'), name);
    } catch (error) {
      throw ioError(error, `output ${name}`);
    }
  }

  async write(data: ArrayBufferView): Promise<void> {
    const bytes = bytesOf(data);
    try {
      if (this.handle) await writeAll(this.handle, bytes);
      else await writeStdout(bytes);
    } catch (error) {
      await this.abort();
      throw ioError(error, `output ${this.name}`);
    }
  }

  async commit(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    try {
      await this.handle?.close();
    } catch (error) {
      throw ioError(error, `output ${this.name}`);
    }
  }

  async abort(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    await this.handle?.close().catch(() => undefined);
  }
}

/** Writes `chunks` to `path` atomically (directly for standard output and special files); on any error a regular destination is untouched. */
export async function writeFileAtomic(
  path: string,
  chunks: Iterable<ArrayBufferView> | AsyncIterable<ArrayBufferView>,
  options: AtomicWriterOptions = {},
): Promise<void> {
  const writer = await openOutput(path, options);
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
