/**
 * Chunks of an hw4 input held in memory: what a reader yields and what the compute loop consumes, and the buffers
 * they live in. No file system here: this module is shared by Node and browsers.
 */
import { matrixFloats, type Shape } from './shape.js';
import type { BatchStats, StatsFunction } from './stats.js';

/** Memory for `bytes` bytes of data read from a file (fresh, or a reused buffer from a pool). */
export type Allocate = (bytes: number) => Uint8Array;

/** A fresh ArrayBuffer of `bytes` bytes. */
export const freshBytes: Allocate = (bytes) => new Uint8Array(new ArrayBuffer(bytes));

/** A fresh SharedArrayBuffer of `bytes` bytes (worker threads read it without a copy). */
export const freshSharedBytes: Allocate = (bytes) => new Uint8Array(new SharedArrayBuffer(bytes));

/** A run of whole batches of input: for each batch Q, K, V (each N·d floats), in file order. */
export interface InputChunk {
  /** Index of the chunk's first batch in the file. */
  readonly firstBatch: number;
  /** Number of batches in the chunk. */
  readonly batches: number;
  /** batches·3·N·d floats. */
  readonly data: Float32Array;
  /** Per-batch statistics, when asked for with { stats: true }. */
  readonly stats?: readonly BatchStats[];
}

export interface ChunkOptions {
  /** Target chunk size in bytes (at least one batch is always read). Default 64 MiB. */
  chunkBytes?: number;
  /** Exact number of batches per chunk; overrides chunkBytes. */
  batchesPerChunk?: number;
  /** Accept NaN and ±Inf instead of rejecting the file. Default false. */
  allowNonFinite?: boolean;
  /** Back chunks with SharedArrayBuffer (for worker threads). Default false. */
  shared?: boolean;
  /** Compute each batch's statistics (row norms, non-finite rows) while reading. Default false. */
  stats?: boolean;
  /**
   * How to compute them (default chunkStats, on this thread). An asynchronous one (worker threads) runs while the
   * consumer works on the chunk before: the statistics of a chunk are computed as part of reading it ahead.
   */
  statsOf?: StatsFunction;
  /** Chunks read ahead of the one the consumer holds (default 2). */
  readAhead?: number;
  /**
   * Read into buffers from this pool instead of fresh ones; the consumer gives each chunk's data back with
   * `pool.give(chunk.data)` once done with it, and host memory stays at a few chunks however large the file.
   */
  pool?: ChunkPool;
}

/**
 * Reusable chunk buffers. A fresh 32-64 MiB buffer per chunk costs its page faults every time and leaves the old
 * ones to the garbage collector; a pool keeps the few that are in use at once and hands them out again.
 */
export class ChunkPool {
  private readonly free: Uint8Array[] = [];
  /** Buffers this pool has created. */
  created = 0;

  constructor(
    /** SharedArrayBuffer-backed (for worker threads). */
    readonly shared = false,
  ) {}

  /** `bytes` bytes, from a returned buffer when one is large enough. */
  readonly take: Allocate = (bytes) => {
    const index = this.free.findIndex((buffer) => buffer.byteLength >= bytes);
    if (index >= 0) return (this.free.splice(index, 1)[0] as Uint8Array).subarray(0, bytes);
    this.created += 1;
    return (this.shared ? freshSharedBytes : freshBytes)(bytes);
  };

  /** Gives a chunk's data back for reuse; the caller must not use it afterwards. */
  give(data: ArrayBufferView): void {
    this.free.push(new Uint8Array(data.buffer));
  }
}

export const DEFAULT_CHUNK_BYTES = 64 * 1024 * 1024;

/** Chunks read ahead by default: two reads at once keep up with a consumer that reads back and writes in between. */
export const DEFAULT_READ_AHEAD = 2;

/** Q, K or V of batch `b` (within the chunk) as a view of the chunk's data. */
export function matrixView(chunk: InputChunk, shape: Shape, b: number, which: 0 | 1 | 2): Float32Array {
  const size = matrixFloats(shape);
  const start = (b * 3 + which) * size;
  return chunk.data.subarray(start, start + size);
}
