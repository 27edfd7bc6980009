/**
 * Host plumbing shared by the single-threaded CPU rungs: run a per-batch kernel over each batch of a chunk.
 */
import { matrixFloats, type Shape } from '@fa/io';
import type { Runner } from '@fa/core';

/** Computes O (N·d) for one batch from its Q, K, V (each N·d). */
export type BatchKernel = (Q: Float32Array, K: Float32Array, V: Float32Array, O: Float32Array, shape: Shape) => void;

export function singleThreadRunner(kernel: BatchKernel, shape: Shape): Runner {
  const size = matrixFloats(shape);
  return {
    // About 2^27 flops per run (under a second), so progress can be reported between runs.
    maxBatchesPerRun: Math.max(1, Math.floor(2 ** 27 / (4 * shape.N * size))),
    run(input, batches, output) {
      for (let b = 0; b < batches; b++) {
        const q = b * 3 * size;
        kernel(
          input.subarray(q, q + size),
          input.subarray(q + size, q + 2 * size),
          input.subarray(q + 2 * size, q + 3 * size),
          output.subarray(b * size, (b + 1) * size),
          shape,
        );
      }
      return Promise.resolve({});
    },
    dispose: () => Promise.resolve(),
  };
}
