/**
 * Rung 3, cpu: every core. Changed from seq-flash: batches × blocks of query rows are spread over worker threads
 * (one per core) that share Q, K, V and O through SharedArrayBuffer, and arithmetic is float64 with plain loops the
 * JIT compiles tightly (no Math.fround). It is the fallback of hw4-cli when no GPU adapter exists.
 */
import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { matrixFloats, type Shape } from '@fa/io';
import type { Rung, Runner } from '@fa/core';
import { attendRowBlock, workerLoop, type PoolJob } from './cpu-kernel.js';

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
${attendRowBlock.toString()}
(${workerLoop.toString()})(parentPort, ${attendRowBlock.name});
`;

class CpuPoolRunner implements Runner {
  readonly prefersSharedInput = true;
  readonly maxBatchesPerRun: number;
  private readonly workers: Worker[];
  private scratchIn: Float32Array | undefined;
  private scratchOut: Float32Array | undefined;

  constructor(
    private readonly shape: Shape,
    threads: number,
  ) {
    this.maxBatchesPerRun = Math.max(1, Math.floor((64 * 1024 * 1024) / (16 * matrixFloats(shape))));
    this.workers = Array.from({ length: Math.max(1, threads) }, () => new Worker(WORKER_SOURCE, { eval: true }));
  }

  async run(input: Float32Array, batches: number, output: Float32Array): Promise<Record<string, never>> {
    const { N, d } = this.shape;
    const size = matrixFloats(this.shape);
    const qkv = this.sharedIn(input, batches * 3 * size);
    const out = output.buffer instanceof SharedArrayBuffer ? output : this.sharedOut(batches * size);
    const job: PoolJob = {
      qkv,
      out,
      counter: new Int32Array(new SharedArrayBuffer(4)),
      batches,
      N,
      d,
      rowsPerTask: Math.max(1, Math.min(64, Math.ceil((batches * N) / (this.workers.length * 8)))),
    };
    await Promise.all(this.workers.map((worker) => runOn(worker, job)));
    if (out !== output) output.set(out.subarray(0, batches * size));
    return {};
  }

  async dispose(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
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

export const cpu: Rung = {
  id: 'cpu',
  index: 3,
  kind: 'cpu',
  title: `Multi-threaded CPU (worker threads over batches and row blocks, ${availableParallelism()} cores here)`,
  delta: 'Spreads batches × row blocks over one worker thread per core, sharing memory, with float64 accumulation.',
  supports: () => true,
  prepare: (env, shape) => Promise.resolve(new CpuPoolRunner(shape, env.threads)),
};
