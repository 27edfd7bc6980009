/**
 * Rung 3, cpu: every core. Changed from seq-flash: batches × blocks of query rows are spread over worker threads
 * (one per core) that share Q, K, V and O through SharedArrayBuffer, and arithmetic is float64 with plain loops the
 * JIT compiles tightly (no Math.fround). It is the fallback of hw4-cli when no GPU adapter exists.
 */
import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { matrixFloats, type Shape } from '@fa/io';
import type { RungDefinition, Runner } from '@fa/core';
import { attendRowBlock, workerLoop, type PoolJob } from './cpu-kernel.js';

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
${attendRowBlock.toString()}
(${workerLoop.toString()})(parentPort, ${attendRowBlock.name});
`;

/**
 * One pool of worker threads per process, created on first use and kept: starting and stopping threads for every
 * prepare costs time, and repeated thread teardown next to Dawn's own threads proved fragile. Idle workers are
 * unref'd, so they never keep the process alive.
 */
class WorkerPool {
  private static instance: WorkerPool | undefined;
  private readonly workers: Worker[] = [];

  static get(threads: number): WorkerPool {
    WorkerPool.instance ??= new WorkerPool();
    WorkerPool.instance.grow(threads);
    return WorkerPool.instance;
  }

  private grow(threads: number): void {
    while (this.workers.length < threads) {
      // Its stdout and stderr are not piped into the process's (it writes to neither): each pipe would add listeners to
      // process.stdout and process.stderr, and a pool of more than ten workers set off Node's leak warning.
      const worker = new Worker(WORKER_SOURCE, { eval: true, stdout: true, stderr: true });
      worker.unref();
      this.workers.push(worker);
    }
  }

  /** Runs `job` on the first `threads` workers; each takes tasks until none are left. */
  async run(job: PoolJob, threads: number): Promise<void> {
    const crew = this.workers.slice(0, threads);
    for (const w of crew) w.ref();
    try {
      await Promise.all(crew.map((worker) => runOn(worker, job)));
    } finally {
      for (const w of crew) w.unref();
    }
  }
}

class CpuPoolRunner implements Runner {
  readonly prefersSharedInput = true;
  readonly maxBatchesPerRun: number;
  private readonly pool: WorkerPool;
  private scratchIn: Float32Array | undefined;
  private scratchOut: Float32Array | undefined;

  constructor(
    private readonly shape: Shape,
    private readonly threads: number,
  ) {
    const size = matrixFloats(shape);
    // At most 64 MiB of input per run and about 2^31 flops, so progress can be reported between runs.
    this.maxBatchesPerRun = Math.max(1, Math.min(Math.floor(2 ** 26 / (12 * size)), Math.floor(2 ** 31 / (4 * shape.N * size))));
    this.pool = WorkerPool.get(Math.max(1, threads));
  }

  async run(input: Float32Array, batches: number, output: Float32Array): Promise<Record<string, never>> {
    const { N, d } = this.shape;
    const size = matrixFloats(this.shape);
    const qkv = this.sharedIn(input, batches * 3 * size);
    const out = output.buffer instanceof SharedArrayBuffer ? output : this.sharedOut(batches * size);
    const threads = Math.max(1, this.threads);
    const job: PoolJob = {
      qkv,
      out,
      counter: new Int32Array(new SharedArrayBuffer(4)),
      batches,
      N,
      d,
      rowsPerTask: Math.max(1, Math.min(64, Math.ceil((batches * N) / (threads * 8)))),
    };
    await this.pool.run(job, threads);
    if (out !== output) output.set(out.subarray(0, batches * size));
    return {};
  }

  dispose(): Promise<void> {
    this.scratchIn = undefined;
    this.scratchOut = undefined;
    return Promise.resolve();
  }

  private sharedIn(input: Float32Array, floats: number): Float32Array {
    if (input.buffer instanceof SharedArrayBuffer) return input;
    if (!this.scratchIn || this.scratchIn.length < floats) this.scratchIn = new Float32Array(new SharedArrayBuffer(floats * 4));
    this.scratchIn.set(input.subarray(0, floats));
    return this.scratchIn;
  }

  private sharedOut(floats: number): Float32Array {
    if (!this.scratchOut || this.scratchOut.length < floats) this.scratchOut = new Float32Array(new SharedArrayBuffer(floats * 4));
    return this.scratchOut;
  }
}

function runOn(worker: Worker, job: PoolJob): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => {
      worker.off('message', onMessage);
      reject(error);
    };
    const onMessage = (reply: { ok: boolean; message?: string }): void => {
      worker.off('error', onError);
      if (reply.ok) resolve();
      else reject(new Error(`cpu worker failed: ${reply.message ?? 'unknown error'}`));
    };
    worker.once('message', onMessage);
    worker.once('error', onError);
    worker.postMessage(job);
  });
}

export const cpu: RungDefinition = {
  id: 'cpu',
  parent: 'seq-flash',
  kind: 'cpu',
  title: `Multi-threaded CPU (worker threads over batches and row blocks, ${availableParallelism()} cores here)`,
  delta: 'Spreads batches × row blocks over one worker thread per core, sharing memory, with float64 accumulation.',
  supports: () => true,
  prepare: (env, shape) => Promise.resolve(new CpuPoolRunner(shape, env.threads)),
};
