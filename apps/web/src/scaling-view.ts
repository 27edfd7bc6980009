/**
 * The page's scaling view: one rung on the reader's GPU at five sequence lengths and at five batch sizes (the head
 * size of the form), each point checked against the float64 oracle on sampled rows and then timed (GPU time where the
 * device has timestamps), drawn as two log-log charts with their fitted slopes. `hw4-cli sweep` does the same at
 * larger sizes (docs/scaling.md explains what the curves show). When it ends, `window.scalingResult` holds the points,
 * for test harnesses; a sweep that cannot run leaves the reason in `window.scalingError`.
 */
import { runAll, type RunEnv, type Rung } from '@fa/core';
import { generateInput, type Shape } from '@fa/io';
import { scalingSvg, segmentSlopes, type SweepSeries } from '@fa/ladder/browser';
import { attentionOracleRows, compareRows, outputRows, sampleRows } from '@fa/reference';

/** A point of a study: the value, the median time of the timed runs (ms) and the error on sampled rows. */
export interface ScalingPoint {
  value: number;
  ms: number;
  maxAbsError: number;
}

export interface ScalingResult {
  rung: string;
  n: ScalingPoint[];
  batch: ScalingPoint[];
}

declare global {
  interface Window {
    scalingResult?: ScalingResult;
    scalingError?: string;
  }
}

/** The studies' values: N at the form's B and d, and B at N = 256 and the form's d. */
export const SCALING_N = [64, 128, 256, 512, 1024];
export const SCALING_B = [1, 2, 4, 8, 16];
const SCALING_B_N = 256;
/** Timed runs per point, after one untimed run that compiles and warms up. */
const TIMED_RUNS = 3;
/** Rows per point checked against the oracle. */
const CHECKED_ROWS = 4;

async function measurePoint(rung: Rung, env: RunEnv, shape: Shape): Promise<Omit<ScalingPoint, 'value'>> {
  const input = generateInput({ shape, seed: 1 });
  const rows = sampleRows(shape, CHECKED_ROWS);
  const oracle = attentionOracleRows(input, shape, rows);
  const runner = await rung.prepare(env, shape);
  try {
    const first = await runAll(runner, input, shape);
    const maxAbsError = compareRows(shape, rows, outputRows(first.output, shape, rows), oracle).maxAbsError;
    const times: number[] = [];
    for (let k = 0; k < TIMED_RUNS; k++) {
      const start = performance.now();
      const { gpuMs } = await runAll(runner, input, shape);
      times.push(gpuMs ?? performance.now() - start);
    }
    times.sort((a, b) => a - b);
    return { ms: times[Math.floor(times.length / 2)] as number, maxAbsError };
  } finally {
    await runner.dispose();
  }
}

/** Runs both studies for `rung`, reporting each point as it is measured; throws when a point's error passes 5e-3. */
export async function runScaling(rung: Rung, env: RunEnv, shape: Shape, onPoint: (text: string) => void): Promise<ScalingResult> {
  const result: ScalingResult = { rung: rung.id, n: [], batch: [] };
  const studies = [
    ['n', SCALING_N.map((N) => ({ ...shape, N }))],
    ['batch', SCALING_B.map((B) => ({ ...shape, B, N: SCALING_B_N }))],
  ] as const;
  for (const [study, shapes] of studies) {
    for (const point of shapes) {
      const value = study === 'n' ? point.N : point.B;
      const measured = await measurePoint(rung, env, point);
      if (measured.maxAbsError > 5e-3) throw new Error(`${rung.id} at ${point.B}×${point.N}×${point.d}: max error ${measured.maxAbsError.toExponential(2)} beyond 5e-3`);
      result[study].push({ value, ...measured });
      onPoint(`${rung.id} at ${point.B}×${point.N}×${point.d}: ${measured.ms.toPrecision(3)} ms`);
    }
  }
  return result;
}

/** The two charts of a result, as SVG text: time over N, and time over B. */
export function scalingCharts(result: ScalingResult, shape: Shape): { n: string; batch: string } {
  const series = (points: readonly ScalingPoint[]): SweepSeries[] => [{ id: result.rung, points: points.map((p) => [p.value, p.ms]) }];
  return {
    n: scalingSvg(`${result.rung}: time over N (B = ${shape.B}, d = ${shape.d}), log-log`, 'N', SCALING_N, series(result.n)),
    batch: scalingSvg(`${result.rung}: time over B (N = ${SCALING_B_N}, d = ${shape.d}), log-log`, 'B', SCALING_B, series(result.batch)),
  };
}

/** One line saying what the slopes show. */
export function scalingSummary(result: ScalingResult): string {
  const slopes = (points: readonly ScalingPoint[]): string => segmentSlopes(points.map((p) => [p.value, p.ms])).map((g) => g.slope.toFixed(2)).join(' then ');
  return `Slopes of log(time) over log(value): ${slopes(result.n)} over N, ${slopes(result.batch)} over B (0: flat, the GPU not yet full; 1: linear; 2: quadratic).`;
}
