/**
 * Running a prepared rung over an in-memory input of any number of batches, through the one chunk loop.
 */
import { matrixFloats, type Shape } from '@fa/io';
import type { Runner } from './rung.js';
import { memoryChunks, streamChunks, type StreamReport } from './stream.js';

export interface RunAllResult {
  output: Float32Array;
  /** Sum of the GPU times the runner reported, when it reported any. */
  gpuMs?: number;
  /** The chunk loop's own account (stage times, overlap). */
  stream: StreamReport;
}

/** Feeds `input` (shape.B batches of Q, K, V) to `runner` in chunks of at most maxBatchesPerRun batches. */
export async function runAll(runner: Runner, input: Float32Array, shape: Shape): Promise<RunAllResult> {
  const size = matrixFloats(shape);
  const output = new Float32Array(shape.B * size);
  const stream = await streamChunks(memoryChunks(input, shape, runner.maxBatchesPerRun), shape, {
    runnerFor: () => runner,
    outputFor: (chunk) => output.subarray(chunk.firstBatch * size, (chunk.firstBatch + chunk.batches) * size),
    deliver: () => undefined,
  });
  return stream.gpuMs === undefined ? { output, stream } : { output, gpuMs: stream.gpuMs, stream };
}
