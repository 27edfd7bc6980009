/** The page's side of the compute worker: one promise per request. */
import type { Shape } from '@fa/io';
import type { RowRef } from '@fa/reference';
import type { WorkerReply, WorkerRequest } from './worker-protocol.js';

type Pending = { resolve: (reply: WorkerReply) => void; reject: (error: Error) => void };

export class ComputeWorker {
  private worker = ComputeWorker.start();
  private readonly pending = new Map<number, Pending>();
  private next = 0;

  constructor() {
    this.listen();
  }

  private static start(): Worker {
    return new Worker(new URL('./compute-worker.ts', import.meta.url), { type: 'module' });
  }

  private listen(): void {
    this.worker.onmessage = (event: MessageEvent<{ id: number; reply?: WorkerReply; error?: string }>) => {
      const { id, reply, error } = event.data;
      const waiting = this.pending.get(id);
      this.pending.delete(id);
      if (reply) waiting?.resolve(reply);
      else waiting?.reject(new Error(error ?? 'the worker failed'));
    };
    this.worker.onerror = (event) => {
      this.rejectAll(`the worker failed: ${event.message}`);
    };
  }

  private rejectAll(message: string): void {
    for (const waiting of this.pending.values()) waiting.reject(new Error(message));
    this.pending.clear();
  }

  /** Ends the computation under way at once (the worker is terminated and a fresh one started). */
  restart(): void {
    this.worker.terminate();
    this.rejectAll('the worker was stopped');
    this.worker = ComputeWorker.start();
    this.listen();
  }

  /** The float64 oracle: all of O, or the rows listed (one d-vector each, in order). */
  async oracle(input: Float32Array, shape: Shape, rows?: readonly RowRef[]): Promise<Float64Array> {
    return values(await this.send(rows ? { type: 'oracle', input, shape, rows } : { type: 'oracle', input, shape }));
  }

  async plainF16(input: Float32Array, shape: Shape): Promise<Float64Array> {
    return values(await this.send({ type: 'plain-f16', input, shape }));
  }

  /** Runs a CPU rung on the worker: its output and the milliseconds of its run (prepare excluded). */
  async cpuRung(id: string, input: Float32Array, shape: Shape): Promise<{ output: Float32Array; ms: number }> {
    const reply = await this.send({ type: 'cpu-rung', id, input, shape });
    if (reply.type !== 'output') throw new Error('the worker answered with the wrong kind of reply');
    return reply;
  }

  private send(request: WorkerRequest): Promise<WorkerReply> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, request });
    });
  }
}

function values(reply: WorkerReply): Float64Array {
  if (reply.type !== 'values') throw new Error('the worker answered with the wrong kind of reply');
  return reply.values;
}
