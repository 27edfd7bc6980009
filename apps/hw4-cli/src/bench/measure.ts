/**
 * Timing one prepared runner on one input: warm-up, then repeats, median of each measure. GPU time comes from the
 * runner's timestamp queries (summed over the runs' chunks); wall time covers upload, compute and readback.
 */
import { runAll, type Runner } from '@fa/core';
import type { Shape } from '@fa/io/node';

export interface Timing {
  /** Median wall-clock milliseconds of a whole run (upload, compute, readback for GPU rungs). */
  wallMs: number;
  /** Median GPU milliseconds from timestamps, when the runner reports them. */
  gpuMs?: number;
  repeats: number;
  wallSamples: number[];
  gpuSamples?: number[];
  /** Output of the last run. */
  output: Float32Array;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export async function measure(runner: Runner, input: Float32Array, shape: Shape, warmups: number, repeats: number): Promise<Timing> {
  for (let i = 0; i < warmups; i++) await runAll(runner, input, shape);
  const wallSamples: number[] = [];
  const gpuSamples: number[] = [];
  let output: Float32Array = new Float32Array(0);
  for (let i = 0; i < Math.max(1, repeats); i++) {
    const start = performance.now();
    const result = await runAll(runner, input, shape);
    wallSamples.push(performance.now() - start);
    if (result.gpuMs !== undefined) gpuSamples.push(result.gpuMs);
    output = result.output;
  }
  const timing: Timing = { wallMs: median(wallSamples), repeats: wallSamples.length, wallSamples, output };
  if (gpuSamples.length === wallSamples.length) {
    timing.gpuMs = median(gpuSamples);
    timing.gpuSamples = gpuSamples;
  }
  return timing;
}
