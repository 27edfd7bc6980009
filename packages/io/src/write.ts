/**
 * Output writers. A regular file is written atomically: bytes go to a temporary file in the destination folder, which
 * is renamed over the destination only when everything was written, so a failed or interrupted run leaves the
 * destination as it was and no partial file. Standard output (`-`) and special files (devices, FIFOs) cannot be
 * replaced that way; they are written directly (see output-target.ts). OutputGroup commits several outputs together:
 * all of them, or none of the regular ones.
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
  private closed = false;

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

  /** Completes the temporary file (synced when durable, then closed) without renaming it; commit() renames it. */
  async complete(): Promise<void> {
    if (this.finished || this.closed) return;
    try {
      if (this.options.durable) await this.handle.sync();
      await this.handle.close();
      this.closed = true;
    } catch (error) {
      await this.abort();
      throw ioError(error, `output ${this.options.name ?? this.path}`);
    }
  }

  /** Renames the temporary file over the destination (completing it first). */
  async commit(): Promise<void> {
    if (this.finished) return;
    await this.complete();
    try {
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
    if (!this.closed) await this.handle.close().catch(() => undefined);
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

/** One output of an OutputGroup: its path, and how messages call it (default: the path). */
export interface GroupOutput {
  readonly path: string;
  readonly name?: string;
}

export interface OutputGroupOptions {
  /** fsync each regular file before the renames. Default false. */
  durable?: boolean;
  /** Runs the opening of a direct destination (a FIFO's open waits for its reader): a caller's hook, e.g. to keep it interruptible. */
  opening?: <T>(path: string, open: () => Promise<T>) => Promise<T>;
}

interface GroupEntry {
  readonly target: OutputTarget;
  readonly name: string;
  /** The temporary file of a regular destination. */
  readonly file?: AtomicFileWriter;
}

/**
 * Outputs written together, all or none: a command that writes two files must not leave one replaced when the other
 * failed. open() checks every destination and creates the temporary file of each regular one before any work is
 * done; commit() then writes, in this order:
 * 1. each regular destination's bytes to its temporary file, which is completed (closed, synced when durable);
 * 2. each direct destination (standard output, a device, a FIFO), opened only now since opening a FIFO waits for its
 *    reader: bytes written there cannot be taken back, so they come after everything that can fail quietly;
 * 3. the renames of the temporary files over their destinations, one after the other.
 * A failure in 1 or 2 removes every temporary file and leaves each regular destination as it was; only a rename that
 * fails after an earlier one succeeded (its folder removed or made read-only meanwhile) leaves the earlier one done.
 */
export class OutputGroup {
  private finished = false;

  private constructor(
    private readonly entries: readonly GroupEntry[],
    private readonly options: OutputGroupOptions,
  ) {}

  /** Resolves and checks every destination, then creates the temporary files; on an error none is left behind. */
  static async open(outputs: readonly GroupOutput[], options: OutputGroupOptions = {}): Promise<OutputGroup> {
    const resolved: { target: OutputTarget; name: string }[] = [];
    for (const output of outputs) {
      const name = output.name ?? output.path;
      const target = await resolveOutputTarget(output.path, name);
      const twin = resolved.find((r) => r.target.kind === 'file' && target.kind === 'file' && r.target.path === target.path);
      if (twin) throw new Hw4IoError(`output ${name}: is the same file as ${twin.name}; give each output its own path`);
      resolved.push({ target, name });
    }
    const entries: GroupEntry[] = [];
    try {
      for (const { target, name } of resolved) {
        const file = target.kind === 'file' ? await AtomicFileWriter.openTarget(target, { name, durable: options.durable === true }) : undefined;
        entries.push(file ? { target, name, file } : { target, name });
      }
    } catch (error) {
      await Promise.all(entries.map((e) => e.file?.abort() ?? Promise.resolve()));
      throw error;
    }
    return new OutputGroup(entries, options);
  }

  /**
   * Writes `contents[n]` to output n in the order above; `beforeRenames` runs between the last write and the first
   * rename (a last check that the work is still wanted: throwing there aborts). On any error everything is aborted.
   */
  async commit(contents: readonly (readonly ArrayBufferView[])[], beforeRenames: () => void = () => undefined): Promise<void> {
    if (contents.length !== this.entries.length) throw new RangeError(`OutputGroup.commit: ${contents.length} contents for ${this.entries.length} outputs`);
    if (this.finished) throw new Error('OutputGroup.commit: already committed or aborted');
    try {
      for (const [n, entry] of this.entries.entries()) {
        if (!entry.file) continue;
        for (const chunk of contents[n] ?? []) await entry.file.write(chunk);
        await entry.file.complete();
      }
      for (const [n, entry] of this.entries.entries()) {
        if (entry.target.kind === 'file') continue;
        const target = entry.target;
        const open = (): Promise<DirectWriter> => DirectWriter.open(target, { name: entry.name });
        const writer = target.kind === 'special' && this.options.opening ? await this.options.opening(target.path, open) : await open();
        try {
          for (const chunk of contents[n] ?? []) await writer.write(chunk);
          await writer.commit();
        } finally {
          await writer.abort();
        }
      }
      beforeRenames();
      for (const entry of this.entries) await entry.file?.commit();
      this.finished = true;
    } catch (error) {
      await this.abort();
      throw error;
    }
  }

  /** Removes the temporary files not yet renamed; safe to call more than once. */
  async abort(): Promise<void> {
    this.finished = true;
    await Promise.all(this.entries.map((e) => e.file?.abort() ?? Promise.resolve()));
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
