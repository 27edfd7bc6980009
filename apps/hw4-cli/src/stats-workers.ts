/**
 * Input statistics on worker threads. The statistics (row norms of Q and K, max |V|, where NaN/Inf sit) cost about
 * as much main-thread time as everything else the CLI does per chunk (0.33 of 0.71 s at 13600×128×32 on the H100
 * host); on workers they run while the main thread uploads, reads back and writes the chunk before. Chunks must live
 * in SharedArrayBuffers (the workers read them in place); any other chunk is done on this thread.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { batchStatsRange, chunkStats, type BatchStats, type Shape, type StatsFunction } from '@fa/io/node';

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const batchStatsRange = ${batchStatsRange.toString()};
parentPort.on('message', ({ id, data, first, batches, N, d }) => {
  try {
    parentPort.postMessage({ id, stats: batchStatsRange(data, first, batches, N, d) });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message ? error.message : error) });
  }
});
`;

interface Reply {
  id: number;
  stats?: BatchStats[];
  error?: string;
}

export class StatsWorkers {
  private readonly workers: Worker[] = [];
  private readonly waiting = new Map<number, { resolve: (stats: BatchStats[]) => void; reject: (error: Error) => void }>();
  private nextId = 0;

  /** Workers for a run: a few (the work is light and memory-bound), leaving a core to the main thread. */
  static forRun(cores = availableParallelism()): StatsWorkers | undefined {
    const threads = Math.min(4, cores - 1);
    return threads >= 1 ? new StatsWorkers(threads) : undefined;
  }

  constructor(threads: number) {
    for (let k = 0; k < threads; k++) {
      const worker = new Worker(WORKER_SOURCE, { eval: true, stdout: true, stderr: true }); // not piped into ours (see @fa/reference's cpu.ts)
      worker.unref();
      worker.on('message', (reply: Reply) => {
        this.settle(reply);
      });
      worker.on('error', (error) => {
        this.failAll(error);
      });
      this.workers.push(worker);
    }
  }

  /** A StatsFunction for Hw4Input.chunks: the batches split evenly over the workers. */
  readonly statsOf: StatsFunction = async (data: Float32Array, batches: number, shape: Shape) => {
    if (!(data.buffer instanceof SharedArrayBuffer) || this.workers.length === 0) return chunkStats(data, batches, shape);
    const per = Math.ceil(batches / this.workers.length);
    const parts: Promise<BatchStats[]>[] = [];
    for (let first = 0, k = 0; first < batches; first += per, k++) {
      parts.push(this.ask(this.workers[k] as Worker, data, first, Math.min(per, batches - first), shape));
    }
    return (await Promise.all(parts)).flat();
  };

  async close(): Promise<void> {
    await Promise.all(this.workers.splice(0).map((w) => w.terminate()));
  }

  private ask(worker: Worker, data: Float32Array, first: number, batches: number, { N, d }: Shape): Promise<BatchStats[]> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      if (this.waiting.size === 1) for (const w of this.workers) w.ref();
      worker.postMessage({ id, data, first, batches, N, d });
    });
  }

  private settle({ id, stats, error }: Reply): void {
    const waiter = this.waiting.get(id);
    if (!waiter) return;
    this.waiting.delete(id);
    if (this.waiting.size === 0) for (const w of this.workers) w.unref();
    if (stats) waiter.resolve(stats);
    else waiter.reject(new Error(`input statistics failed in a worker thread: ${error ?? 'unknown error'}`));
  }

  private failAll(error: Error): void {
    for (const waiter of this.waiting.values()) waiter.reject(new Error(`input statistics failed in a worker thread: ${error.message}`));
    this.waiting.clear();
  }
}
