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
  /** Time of the rung below that ran ÷ this rung's time. */
  speedup?: number;
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
}

/** Above this many multiply-adds (B·N²·d) the oracle is computed for sampled rows only. */
const WHOLE_ORACLE_LIMIT = 2 ** 27;
const SAMPLED_ROWS = 256;

/** The time a rung is judged by: GPU time when measured, wall time otherwise. */
export const rungMs = (row: RungRow): number | undefined => row.gpuMs ?? row.wallMs;

export async function runLadder(run: LadderRun): Promise<RungRow[]> {
  const { shape, env, worker } = run;
  const rows: RungRow[] = run.rungs.map((rung) => ({ rung, status: 'waiting' }));
  run.onUpdate(rows);
  const input = generateInput({ shape, kind: run.kind, seed: run.seed });
  const sampled = shape.B * shape.N * shape.N * shape.d > WHOLE_ORACLE_LIMIT ? sampleRows(shape, SAMPLED_ROWS) : undefined;
  run.onNote(sampled ? `computing the float64 oracle for ${SAMPLED_ROWS} sampled rows ...` : 'computing the float64 oracle ...');
  const oracle = await worker.oracle(input, shape, sampled);
  run.onNote(sampled ? `errors over ${SAMPLED_ROWS} sampled rows of O` : `errors over all ${shape.B * shape.N * shape.d} elements of O`);
  const check = (output: Float32Array | Float64Array) => compareWith(output, oracle, shape, sampled);

  let fp32Baseline: Comparison | undefined;
  let f16Baseline: Comparison | undefined;
  const baselineFor = async (rung: Rung): Promise<Comparison> => {
    if (rung.reducedPrecision !== undefined) return (f16Baseline ??= check(await worker.plainF16(input, shape)));
    return (fp32Baseline ??= check((await worker.cpuRung(seqAttention.id, input, shape)).output));
  };

  let below: RungRow | undefined;
  for (const row of rows) {
    const { rung } = row;
    const allowed = canRun(rung, shape, env);
    if (allowed !== true) {
      Object.assign(row, { status: 'skipped', reason: allowed });
      run.onUpdate(rows);
      continue;
    }
    row.status = 'running';
    run.onUpdate(rows);
    try {
      const { output, wallMs, gpuMs } = rung.kind === 'cpu' ? await runOnWorker(worker, rung, input, shape) : await runOnGpu(rung, env, input, shape);
      const comparison = check(output);
      if (rung.id === seqAttention.id) fp32Baseline = comparison;
      const verdict = conformanceVerdict(rung, comparison, await baselineFor(rung));
      Object.assign(row, { status: verdict.pass ? 'pass' : 'fail', comparison, limit: verdict.limit, wallMs });
      if (gpuMs !== undefined) row.gpuMs = gpuMs;
      const ms = rungMs(row) ?? wallMs;
      row.gflops = attentionFlops(shape) / ms / 1e6;
      const belowMs = below && rungMs(below);
      if (belowMs !== undefined) row.speedup = belowMs / ms;
      if (!verdict.pass) row.reason = failureReason(comparison, verdict.limit, rung.reducedPrecision !== undefined);
      below = row;
    } catch (error) {
      Object.assign(row, { status: 'fail', reason: oneLine(error) });
    }
    run.onUpdate(rows);
  }
  return rows;
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
