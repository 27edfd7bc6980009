/**
 * Running a prepared rung over an in-memory input of any number of batches, chunk by chunk.
 */
import { matrixFloats, type Shape } from '@fa/io';
import type { Runner } from './rung.js';

export interface RunAllResult {
  output: Float32Array;
  /** Sum of the GPU times the runner reported, when it reported any. */
  gpuMs?: number;
}

/** Feeds `input` (shape.B batches of Q, K, V) to `runner` in chunks of at most maxBatchesPerRun batches. */
export async function runAll(runner: Runner, input: Float32Array, shape: Shape): Promise<RunAllResult> {
  const size = matrixFloats(shape);
  const output = new Float32Array(shape.B * size);
  let gpuMs: number | undefined;
  for (let first = 0; first < shape.B; first += runner.maxBatchesPerRun) {
    const batches = Math.min(runner.maxBatchesPerRun, shape.B - first);
    const stats = await runner.run(
      input.subarray(first * 3 * size, (first + batches) * 3 * size),
      batches,
      output.subarray(first * size, (first + batches) * size),
    );
    if (stats.gpuMs !== undefined) gpuMs = (gpuMs ?? 0) + stats.gpuMs;
  }
  return gpuMs === undefined ? { output } : { output, gpuMs };
}
