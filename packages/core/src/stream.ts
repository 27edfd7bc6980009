/**
 * The one chunk loop. Every caller that computes attention over more than one run of batches goes through
 * `streamChunks`: the CLI (file in, file out), `runAll` (the bench, the ladder, the conformance suite, the tests).
 *
 * It keeps the stages busy at the same time: while chunk k computes on the GPU, the host fills chunk k+1's upload
 * memory, chunk k-1's output is delivered (checked and written), and the source reads chunk k+2 ahead. At most
 * `depth` runs are in flight (and never more than a runner allows), so host memory stays bounded: outputs come from a
 * small pool that is reused, and a source that pools its input buffers gets each one back (`release`) as soon as its
 * run no longer needs it.
 */
import { DEFAULT_READ_AHEAD, matrixFloats, type Shape } from '@fa/io';
import type { Runner, RunStats } from './rung.js';

/** A run of whole batches: Q, K, V of each batch (batches·3·N·d floats), in file order. */
export interface StreamChunk {
  /** Index of the chunk's first batch in the whole input. */
  readonly firstBatch: number;
  readonly batches: number;
  readonly data: Float32Array;
}

export interface StreamStages<C extends StreamChunk> {
  /** The runner for this chunk (a caller may route chunks to different rungs). */
  runnerFor(chunk: C): Runner | Promise<Runner>;
  /** Called with each chunk's O, in chunk order; the output buffer is reused once the promise settles. */
  deliver(chunk: C, output: Float32Array, stats: RunStats): void | Promise<void>;
  /** Called before the chunk is computed, e.g. to clean its input in place. */
  prepare?(chunk: C): void;
  /** Where a chunk's O goes (default: a buffer from the loop's own pool, reused between chunks). */
  outputFor?(chunk: C): Float32Array;
  /** Called when a chunk's input is no longer needed, so its buffer may be reused. */
  release?(chunk: C): void;
  /** Whether pooled output buffers should be SharedArrayBuffer-backed (worker-thread runners read them without a copy). */
  sharedOutput?: boolean;
}

export interface StreamOptions {
  /** Most runs in flight at once (further limited by each runner's concurrentRuns). Default 2. */
  depth?: number;
}

/**
 * Milliseconds per stage. `busy`: time the stage was working (compute: time with at least one run in flight; input:
 * left to the caller, whose source knows its own read time); `waited`: time the loop stood still waiting for it.
 */
export interface StageTimes {
  input: number;
  compute: number;
  output: number;
}

export interface StreamReport {
  chunks: number;
  batches: number;
  /** From the first request for input to the last delivery. */
  wallMs: number;
  busy: StageTimes;
  waited: StageTimes;
  /** Sums of what the runners reported: GPU time, host time filling upload memory and reading output back. */
  gpuMs?: number;
  uploadMs?: number;
  readbackMs?: number;
}

interface InFlight<C> {
  chunk: C;
  output: Float32Array;
  pooled: boolean;
  done: Promise<RunStats>;
}

const DEFAULT_STREAM_DEPTH = 2;

/**
 * Host memory for the loop's data buffers when the caller names no chunk size: chunks are sized from it. 192 MiB
 * leaves room under a 512 MB peak for Node, Dawn and a software GPU's compiler (a 1 GB input peaked at 538 MB with
 * 256 MiB on lavapipe, where GPU buffers are host memory too).
 */
const DEFAULT_STREAM_MEMORY_BYTES = 192 * 2 ** 20;

/**
 * Input-chunk bytes that keep the loop's buffers within `budgetBytes`. Counted in input chunks: the source's reads
 * ahead (DEFAULT_READ_AHEAD), one waiting for a run slot and `depth` in flight, `depth` upload staging buffers, and one
 * GPU-side copy (host memory too on a software GPU); outputs are a third of an input each: depth + 1 in the pool,
 * `depth` readback buffers and one GPU-side copy.
 */
export function chunkBytesFor(budgetBytes = DEFAULT_STREAM_MEMORY_BYTES, depth = DEFAULT_STREAM_DEPTH): number {
  const inputs = DEFAULT_READ_AHEAD + 1 + depth + depth + 1;
  const outputs = (depth + 1 + depth + 1) / 3;
  return Math.max(1, Math.floor(budgetBytes / (inputs + outputs)));
}

/** Computes every chunk of `chunks` and delivers its output, in order, overlapping input, compute and output. */
export async function streamChunks<C extends StreamChunk>(
  chunks: AsyncIterable<C> | Iterable<C>,
  shape: Shape,
  stages: StreamStages<C>,
  options: StreamOptions = {},
): Promise<StreamReport> {
  const depth = Math.max(1, options.depth ?? DEFAULT_STREAM_DEPTH);
  const size = matrixFloats(shape);
  const report: StreamReport = { chunks: 0, batches: 0, wallMs: 0, busy: zero(), waited: zero() };
  const pool: Float32Array[] = [];
  const inFlight: InFlight<C>[] = [];
  const start = performance.now();
  let running = 0;
  let computeSince = 0;

  const takeOutput = (floats: number): Float32Array => {
    const index = pool.findIndex((buffer) => buffer.length >= floats);
    const buffer = index >= 0 ? pool.splice(index, 1)[0] : undefined;
    if (buffer) return buffer.subarray(0, floats);
    return new Float32Array(stages.sharedOutput ? new SharedArrayBuffer(floats * 4) : new ArrayBuffer(floats * 4));
  };

  const finishOldest = async (): Promise<void> => {
    const entry = inFlight.shift();
    if (!entry) return;
    let t = performance.now();
    const stats = await entry.done;
    report.waited.compute += performance.now() - t;
    add(report, stats);
    t = performance.now();
    await stages.deliver(entry.chunk, entry.output, stats);
    report.busy.output += performance.now() - t;
    report.chunks += 1;
    report.batches += entry.chunk.batches;
    if (entry.pooled) pool.push(new Float32Array(entry.output.buffer));
  };

  const iterator = Symbol.asyncIterator in chunks ? chunks[Symbol.asyncIterator]() : toAsync(chunks[Symbol.iterator]());
  try {
    for (;;) {
      const t = performance.now();
      const item = await iterator.next();
      const waitedMs = performance.now() - t;
      report.waited.input += waitedMs;
      if (item.done === true) break;
      const chunk = item.value;
      const runner = await stages.runnerFor(chunk);
      const limit = Math.min(depth, Math.max(1, runner.concurrentRuns ?? 1));
      while (inFlight.length >= limit) await finishOldest();
      stages.prepare?.(chunk);
      const given = stages.outputFor?.(chunk);
      const output = given ?? takeOutput(chunk.batches * size);
      if (running++ === 0) computeSince = performance.now();
      const done = runInPieces(runner, chunk, output, size).finally(() => {
        if (--running === 0) report.busy.compute += performance.now() - computeSince;
      });
      void done.then(() => stages.release?.(chunk), () => undefined);
      done.catch(() => undefined);
      inFlight.push({ chunk, output, pooled: given === undefined, done });
    }
    while (inFlight.length > 0) await finishOldest();
  } catch (error) {
    await Promise.allSettled(inFlight.map((entry) => entry.done));
    await iterator.return?.(undefined).catch(() => undefined);
    throw error;
  }
  report.wallMs = performance.now() - start;
  return report;
}

/** Runs a chunk in runs of at most the runner's maxBatchesPerRun batches, one after another. */
async function runInPieces(runner: Runner, chunk: StreamChunk, output: Float32Array, size: number): Promise<RunStats> {
  const step = Math.max(1, runner.maxBatchesPerRun);
  if (chunk.batches <= step) return runner.run(chunk.data, chunk.batches, output);
  const total: RunStats = {};
  for (let b = 0; b < chunk.batches; b += step) {
    const n = Math.min(step, chunk.batches - b);
    const stats = await runner.run(chunk.data.subarray(3 * b * size, 3 * (b + n) * size), n, output.subarray(b * size, (b + n) * size));
    add(total, stats);
  }
  return total;
}

function add(into: RunStats, stats: RunStats): void {
  if (stats.gpuMs !== undefined) into.gpuMs = (into.gpuMs ?? 0) + stats.gpuMs;
  if (stats.uploadMs !== undefined) into.uploadMs = (into.uploadMs ?? 0) + stats.uploadMs;
  if (stats.readbackMs !== undefined) into.readbackMs = (into.readbackMs ?? 0) + stats.readbackMs;
}

function zero(): StageTimes {
  return { input: 0, compute: 0, output: 0 };
}

function toAsync<C>(iterator: Iterator<C>): AsyncIterator<C> {
  return {
    next: () => Promise.resolve(iterator.next()),
    return: (value?: unknown) => Promise.resolve(iterator.return?.(value) ?? { done: true, value: undefined }),
  };
}

/** An in-memory input (shape.B batches) as chunks of at most `batchesPerChunk` batches, as views (no copies). */
export function* memoryChunks(input: Float32Array, shape: Shape, batchesPerChunk: number): Generator<StreamChunk> {
  const size = matrixFloats(shape);
  const step = Math.max(1, batchesPerChunk);
  for (let first = 0; first < shape.B; first += step) {
    const batches = Math.min(step, shape.B - first);
    yield { firstBatch: first, batches, data: input.subarray(3 * first * size, 3 * (first + batches) * size) };
  }
}
