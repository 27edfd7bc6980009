/**
 * Streaming reader for hw4 input files: the header is checked against the file size first, then batches are read
 * in chunks of whole batches, so memory stays bounded however large B is. Standard input (`-`) and pipes are read as
 * streams: the header is checked as it arrives, and the length as the batches are read (a short or long stream is an
 * error at its end).
 */
import { open } from 'node:fs/promises';
import { isatty } from 'node:tty';
import { Hw4FormatError, Hw4IoError, Hw4NonFiniteError } from './errors.js';
import { countNonFinite, firstNonFinite, formatPosition, inputPosition } from './finite.js';
import { parseHeader, parseStreamHeader } from './header.js';
import { DEFAULT_CHUNK_BYTES, DEFAULT_READ_AHEAD, freshBytes, freshSharedBytes, type Allocate, type ChunkOptions, type InputChunk } from './chunks.js';
import { readFloats, readStreamFloats, stdinSource, type ByteSource } from './read-floats.js';
import { ioError } from './io-error.js';
import { positiveInteger, positiveNumber } from './options.js';
import { STDIO_PATH } from './output-target.js';
import { HEADER_BYTES, inputBatchBytes, inputFileBytes, type Shape } from './shape.js';
import { chunkStats, hasNonFinite, type BatchStats } from './stats.js';

/**
 * An open hw4 input file whose header has been validated. chunks() closes it when the consumer is done with it (at
 * the end, on an error, or on leaving the loop early); close() it yourself only when not reading it through chunks().
 */
export class Hw4Input {
  /** Milliseconds spent reading batches so far (reads ahead overlap the consumer's work). */
  readMs = 0;
  /** Milliseconds spent on the statistics of chunks so far. */
  statsMs = 0;
  private closed = false;

  private constructor(
    readonly path: string,
    readonly name: string,
    readonly shape: Shape,
    readonly fileBytes: number,
    private readonly handle: ByteSource,
    /** Read in order, without positions (standard input, a pipe). */
    readonly stream = false,
  ) {}

  /**
   * Opens and validates `path` (`-`: standard input); `name` is how messages call it (default: the path, or
   * "standard input"). A folder or a device is an Hw4IoError; a malformed header an Hw4FormatError.
   */
  static async open(path: string, name?: string): Promise<Hw4Input> {
    const stdin = path === STDIO_PATH;
    const called = name ?? (stdin ? 'standard input' : path);
    if (stdin && isatty(0)) throw new Hw4IoError(`input -: standard input is a terminal; pipe or redirect an hw4 input file into it`);
    let handle: ByteSource;
    try {
      handle = stdin ? stdinSource() : await open(path, 'r');
    } catch (error) {
      throw ioError(error, `input ${called}`);
    }
    try {
      const stat = await handle.stat();
      if (stat.isDirectory()) throw new Hw4IoError(`input ${called}: is a folder; give the path of an hw4 input file`);
      if (stat.isFIFO() || stat.isSocket()) {
        const header = await readStreamFloats(handle, HEADER_BYTES, called, true);
        const shape = parseStreamHeader(header, called);
        return new Hw4Input(path, called, shape, inputFileBytes(shape), handle, true);
      }
      if (!stat.isFile()) throw new Hw4IoError(`input ${called}: not a regular file or a pipe; give the path of an hw4 input file`);
      const header = new Uint8Array(HEADER_BYTES);
      const { bytesRead } = await handle.read(header, 0, HEADER_BYTES, 0);
      const shape = parseHeader(header.subarray(0, bytesRead), stat.size, called);
      return new Hw4Input(path, called, shape, stat.size, handle);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Batches per chunk for the given options; a batchesPerChunk or chunkBytes that is not a positive number is a RangeError. */
  batchesPerChunk(options: ChunkOptions = {}): number {
    if (options.batchesPerChunk !== undefined) return positiveInteger('chunks: batchesPerChunk', options.batchesPerChunk);
    const target = options.chunkBytes === undefined ? DEFAULT_CHUNK_BYTES : positiveNumber('chunks: chunkBytes', options.chunkBytes);
    return Math.max(1, Math.min(this.shape.B, Math.floor(target / inputBatchBytes(this.shape))));
  }

  /**
   * Reads the file as chunks of whole batches, in order. Rejects non-finite values unless allowed, reporting their
   * count over the whole file and the first position. Each chunk owns a fresh buffer, so a consumer may keep it.
   * The file is closed when the loop ends, however it ends: call chunks() once.
   */
  async *chunks(options: ChunkOptions = {}): AsyncGenerator<InputChunk> {
    try {
      yield* this.readChunks(options);
    } finally {
      await this.close();
    }
  }

  /** chunks() without the closing. */
  private async *readChunks(options: ChunkOptions): AsyncGenerator<InputChunk> {
    const perChunk = this.batchesPerChunk(options);
    const readAhead = options.readAhead === undefined ? DEFAULT_READ_AHEAD : positiveInteger('chunks: readAhead', options.readAhead);
    const batchBytes = inputBatchBytes(this.shape);
    const allocate = options.pool?.take ?? (options.shared ? freshSharedBytes : freshBytes);
    const statsOf = options.stats ? (options.statsOf ?? chunkStats) : undefined;
    // A stream is read in order: each read starts when the one before it has ended.
    let streamTail: Promise<unknown> = Promise.resolve();
    const read = async (first: number): Promise<{ data: Float32Array; stats?: BatchStats[] }> => {
      const batches = Math.min(perChunk, this.shape.B - first);
      const previous = streamTail;
      const reading = (async (): Promise<Float32Array> => {
        if (this.stream) await previous;
        const started = performance.now();
        try {
          return await this.readBatches(first, batches, batchBytes, allocate);
        } finally {
          this.readMs += performance.now() - started;
        }
      })();
      streamTail = reading.catch(() => undefined);
      const data = await reading;
      if (!statsOf) return { data };
      const t = performance.now();
      const stats = await statsOf(data, batches, this.shape);
      this.statsMs += performance.now() - t;
      return { data, stats };
    };
    // Reads ahead: chunks k+1 and k+2 are read from disk (and their statistics computed) while chunk k is consumed.
    // A file is read at two offsets at once; a stream can only be read in order, so its reads queue behind each other.
    const queue: ReturnType<typeof read>[] = [];
    let next = 0;
    const fill = (): void => {
      while (queue.length < readAhead && next < this.shape.B) {
        const reading = read(next);
        // Handled here so a read that fails before its turn is not an unhandled rejection; its turn rethrows it.
        reading.catch(() => undefined);
        queue.push(reading);
        next += perChunk;
      }
    };
    try {
      fill();
      for (let first = 0; first < this.shape.B; first += perChunk) {
        const { data, stats } = await (queue.shift() as ReturnType<typeof read>);
        fill();
        const batches = Math.min(perChunk, this.shape.B - first);
        if (!options.allowNonFinite && (stats ? hasNonFinite(stats) : firstNonFinite(data) >= 0)) {
          const ahead: Float32Array[] = [];
          for (const pending of queue.splice(0)) {
            const chunk = await pending.catch(() => undefined);
            if (!chunk) break;
            ahead.push(chunk.data);
          }
          throw await this.nonFiniteError(first, batches, data, ahead);
        }
        yield stats ? { firstBatch: first, batches, data, stats } : { firstBatch: first, batches, data };
      }
      if (this.stream) await this.expectEnd();
    } finally {
      await Promise.all(queue.map((pending) => pending.catch(() => undefined)));
    }
  }

  /** Reads the whole file into one chunk (for small files). */
  async readAll(options: Omit<ChunkOptions, 'chunkBytes' | 'batchesPerChunk'> = {}): Promise<InputChunk> {
    let all: InputChunk | undefined;
    for await (const chunk of this.chunks({ ...options, batchesPerChunk: this.shape.B })) all = chunk;
    if (all === undefined) throw new Hw4FormatError(`${this.name}: no batches`);
    return all;
  }

  /** Closes the file; safe to call more than once. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.handle.close();
  }

  /** Batches `first`… of the file; a stream must be read in order, which chunks() does. */
  private async readBatches(first: number, batches: number, batchBytes: number, allocate: Allocate): Promise<Float32Array> {
    if (!this.stream) return readFloats(this.handle, HEADER_BYTES + first * batchBytes, batches * batchBytes, this.name, allocate);
    const bytes = await readStreamFloats(this.handle, batches * batchBytes, this.name, false, allocate);
    if (bytes.byteLength < batches * batchBytes) {
      throw new Hw4FormatError(
        `${this.name}: stream is truncated: the header (B=${this.shape.B}, N=${this.shape.N}, d=${this.shape.d}) needs ${this.fileBytes} bytes but it ended after ${HEADER_BYTES + first * batchBytes + bytes.byteLength}`,
      );
    }
    return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  }

  /** A stream must end where the header says. */
  private async expectEnd(): Promise<void> {
    const extra = await readStreamFloats(this.handle, 1, this.name, true);
    if (extra.byteLength > 0) {
      throw new Hw4FormatError(`${this.name}: stream has trailing bytes after the ${this.fileBytes} bytes its header (B=${this.shape.B}, N=${this.shape.N}, d=${this.shape.d}) announces`);
    }
  }

  /** The error for non-finite input in `data`, counting them over the whole file (`ahead`: the chunks read after it). */
  private async nonFiniteError(first: number, batches: number, data: Float32Array, ahead: readonly Float32Array[]): Promise<Hw4NonFiniteError> {
    let count = countNonFinite(data);
    let after = first + batches;
    const batchBytes = inputBatchBytes(this.shape);
    for (const chunk of ahead) {
      count += countNonFinite(chunk);
      after += chunk.length / (batchBytes / 4);
    }
    const step = Math.max(1, Math.floor((64 * 1024 * 1024) / batchBytes));
    try {
      for (let b = after; b < this.shape.B; b += step) {
        count += countNonFinite(await this.readBatches(b, Math.min(step, this.shape.B - b), batchBytes, freshBytes));
      }
    } catch {
      // a short stream: count what was there
    }
    const position = inputPosition(this.shape, first, firstNonFinite(data));
    const what = count === 1 ? '1 non-finite value (NaN or ±Inf)' : `${count} non-finite values (NaN or ±Inf)`;
    return new Hw4NonFiniteError(
      `${this.name}: ${what}, the first at ${formatPosition(position)}; hw4 inputs must be finite (--allow-non-finite to run anyway)`,
      count,
      position,
    );
  }
}

/** Opens, validates and reads a whole input file (for small files; use Hw4Input.chunks for large ones). */
export async function readHw4Input(
  path: string,
  options: Omit<ChunkOptions, 'chunkBytes' | 'batchesPerChunk'> = {},
): Promise<{ shape: Shape; data: Float32Array }> {
  const input = await Hw4Input.open(path);
  try {
    const { data } = await input.readAll(options);
    return { shape: input.shape, data };
  } finally {
    await input.close();
  }
}
