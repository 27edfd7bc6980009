/**
 * One run of the ladder on the page: generate the input, compute the float64 oracle in the worker, then each rung in
 * ladder order (CPU rungs in the worker, GPU rungs on the reader's GPU), each checked against the oracle and judged
 * by the conformance suite's verdict (`conformanceVerdict`: the 5e-3 contract and at most 2× the plain float32
 * rung's error; reduced-precision rungs against a plain f16 computation).
 */
import { canRun, oneLine, runAll, type RunEnv, type Rung } from '@fa/core';
import { attentionFlops, compareOutputs, generateInput, type Comparison, type DataKind, type Shape } from '@fa/io';
import { conformanceVerdict } from '@fa/ladder/browser';
import { compareRows, outputRows, sampleRows, seqAttention, type RowRef } from '@fa/reference';
import { CHECK, SAMPLED_ROWS, WHOLE_ORACLE_LIMIT } from './estimate.js';
import type { ComputeWorker } from './worker-client.js';

export type RungStatus = 'waiting' | 'running' | 'pass' | 'fail' | 'skipped';

export interface RungRow {
  rung: Rung;
  status: RungStatus;
  /** Why the rung was skipped, or what went wrong. */
  reason?: string;
  /** Wall time of the run (prepare excluded), ms. */
  wallMs?: number;
  /** GPU time from timestamp queries, when the device has them. */
  gpuMs?: number;
  gflops?: number;
  /**
   * Time of the rung below that ran ÷ this rung's time, like with like: GPU time over GPU time where both have it,
   * else wall time over wall time (`speedupBasis` 'wall'; the first GPU rung against a CPU rung, say).
   */
  speedup?: number;
  speedupBasis?: 'gpu' | 'wall';
  /** Everything the rung took, prepare and check included: what the reader waited. */
  elapsedMs?: number;
  comparison?: Comparison;
  /** The most error the verdict allows. */
  limit?: number;
}

export interface LadderRun {
  shape: Shape;
  kind: DataKind;
  seed: number;
  rungs: readonly Rung[];
  env: RunEnv;
  worker: ComputeWorker;
  onUpdate(rows: readonly RungRow[]): void;
  onNote(text: string): void;
  /** A part of the run finished (a rung id, or CHECK for the oracle): what it took, for the estimates. */
  onDone?(key: string, elapsedMs: number): void;
  /** Stops the run: the rung under way is abandoned, the rest are not started. */
  signal?: AbortSignal;
}

/** The reason a run ends early when its signal aborts. */
export class StoppedError extends Error {
  constructor() {
    super('stopped by the reader');
    this.name = 'StoppedError';
  }
}

/** `promise`, or a StoppedError as soon as `signal` aborts (the work behind the promise is left to its owner). */
function unlessStopped<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(new StoppedError());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      reject(new StoppedError());
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** The time a rung is judged by: GPU time when measured, wall time otherwise. */
export const rungMs = (row: RungRow): number | undefined => row.gpuMs ?? row.wallMs;

/** Runs the rungs in order; a stop (run.signal) marks the rung under way and those after it skipped, with why. */
export async function runLadder(run: LadderRun): Promise<{ rows: RungRow[]; stopped: boolean }> {
  const rows: RungRow[] = run.rungs.map((rung) => ({ rung, status: 'waiting' }));
  run.onUpdate(rows);
  try {
    await runRows(run, rows);
    return { rows, stopped: false };
  } catch (error) {
    if (!(error instanceof StoppedError)) throw error;
    for (const row of rows) {
      if (row.status === 'running') Object.assign(row, { status: 'skipped', reason: 'stopped by the reader while it ran' });
      else if (row.status === 'waiting') Object.assign(row, { status: 'skipped', reason: 'stopped by the reader before it ran' });
    }
    run.onUpdate(rows);
    return { rows, stopped: true };
  }
}

async function runRows(run: LadderRun, rows: RungRow[]): Promise<void> {
  const { shape, env, worker, signal } = run;
  const stoppable = <T>(promise: Promise<T>): Promise<T> => unlessStopped(promise, signal);
  const input = generateInput({ shape, kind: run.kind, seed: run.seed });
  const sampled = shape.B * shape.N * shape.N * shape.d > WHOLE_ORACLE_LIMIT ? sampleRows(shape, SAMPLED_ROWS) : undefined;
  run.onNote(sampled ? `computing the float64 oracle for ${SAMPLED_ROWS} sampled rows ...` : 'computing the float64 oracle ...');
  let started = performance.now();
  const oracle = await stoppable(worker.oracle(input, shape, sampled));
  run.onDone?.(CHECK, performance.now() - started);
  run.onNote(sampled ? `errors over ${SAMPLED_ROWS} sampled rows of O` : `errors over all ${shape.B * shape.N * shape.d} elements of O`);
  const check = (output: Float32Array | Float64Array) => compareWith(output, oracle, shape, sampled);

  let fp32Baseline: Comparison | undefined;
  let f16Baseline: Comparison | undefined;
  const baselineFor = async (rung: Rung): Promise<Comparison> => {
    if (rung.reducedPrecision !== undefined) return (f16Baseline ??= check(await stoppable(worker.plainF16(input, shape))));
    return (fp32Baseline ??= check((await stoppable(worker.cpuRung(seqAttention.id, input, shape))).output));
  };

  let below: RungRow | undefined;
  for (const row of rows) {
    if (signal?.aborted) throw new StoppedError();
    const { rung } = row;
    const allowed = canRun(rung, shape, env);
    if (allowed !== true) {
      Object.assign(row, { status: 'skipped', reason: allowed });
      run.onUpdate(rows);
      continue;
    }
    row.status = 'running';
    run.onUpdate(rows);
    started = performance.now();
    try {
      const { output, wallMs, gpuMs } = await stoppable(rung.kind === 'cpu' ? runOnWorker(worker, rung, input, shape) : runOnGpu(rung, env, input, shape));
      const comparison = check(output);
      if (rung.id === seqAttention.id) fp32Baseline = comparison;
      const verdict = conformanceVerdict(rung, comparison, await baselineFor(rung));
      Object.assign(row, { status: verdict.pass ? 'pass' : 'fail', comparison, limit: verdict.limit, wallMs });
      if (gpuMs !== undefined) row.gpuMs = gpuMs;
      const ms = rungMs(row) ?? wallMs;
      row.gflops = attentionFlops(shape) / ms / 1e6;
      if (below?.wallMs !== undefined) {
        // Like with like: GPU time against GPU time, else wall time against wall time.
        const gpu = below.gpuMs !== undefined && row.gpuMs !== undefined;
        row.speedup = gpu ? (below.gpuMs as number) / (row.gpuMs as number) : below.wallMs / wallMs;
        row.speedupBasis = gpu ? 'gpu' : 'wall';
      }
      if (!verdict.pass) row.reason = failureReason(comparison, verdict.limit, rung.reducedPrecision !== undefined);
      below = row;
    } catch (error) {
      if (error instanceof StoppedError) throw error;
      Object.assign(row, { status: 'fail', reason: oneLine(error) });
    }
    row.elapsedMs = performance.now() - started;
    run.onDone?.(rung.id, row.elapsedMs);
    run.onUpdate(rows);
  }
}

interface Ran {
  output: Float32Array;
  wallMs: number;
  gpuMs?: number;
}

async function runOnWorker(worker: ComputeWorker, rung: Rung, input: Float32Array, shape: Shape): Promise<Ran> {
  const { output, ms } = await worker.cpuRung(rung.id, input, shape);
  return { output, wallMs: ms };
}

async function runOnGpu(rung: Rung, env: RunEnv, input: Float32Array, shape: Shape): Promise<Ran> {
  const runner = await rung.prepare(env, shape);
  try {
    const start = performance.now();
    const { output, gpuMs } = await runAll(runner, input, shape);
    const wallMs = performance.now() - start;
    return gpuMs === undefined ? { output, wallMs } : { output, wallMs, gpuMs };
  } finally {
    await runner.dispose();
  }
}

/** Compares a whole output with the oracle, or its sampled rows with the oracle's rows (`oracle`: d values per row). */
function compareWith(output: Float32Array | Float64Array, oracle: Float64Array, shape: Shape, rows: readonly RowRef[] | undefined): Comparison {
  if (!rows) return compareOutputs(output, oracle, shape);
  const expected = rows.map((_, k) => oracle.subarray(k * shape.d, (k + 1) * shape.d));
  return compareRows(shape, rows, outputRows(output, shape, rows), expected);
}

function failureReason(comparison: Comparison, limit: number, reduced: boolean): string {
  const error = `max error ${comparison.maxAbsError.toExponential(2)}`;
  if (!comparison.pass && !reduced) return `${error} beyond the format's tolerance ${comparison.tolerance}`;
  return `${error} beyond ${limit.toExponential(2)}, twice the error of ${reduced ? 'a plain f16 computation' : 'seq-attention (plain float32)'}`;
}
