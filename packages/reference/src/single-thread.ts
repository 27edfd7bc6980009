/**
 * Host plumbing shared by the single-threaded CPU rungs: run a per-batch kernel over each batch of a chunk. A batch
 * can take minutes (N = 100 000), so a kernel computes it in steps (a row, a tile) and the runner hands the thread
 * back to the event loop every few tens of milliseconds: signals, timers and I/O are served while it computes.
 */
import { matrixFloats, type Shape } from '@fa/io';
import type { Runner } from '@fa/core';

/** Computes O (N·d) for one batch from its Q, K, V (each N·d). */
export type BatchKernel = (Q: Float32Array, K: Float32Array, V: Float32Array, O: Float32Array, shape: Shape) => void;

/** A batch kernel in steps: computes O for one batch, yielding after each step (a row or a tile) so its caller may pause. */
export type SteppedKernel = (Q: Float32Array, K: Float32Array, V: Float32Array, O: Float32Array, shape: Shape) => Generator<void, void, undefined>;

/** How long the runner computes before it hands the thread back to the event loop. */
const SLICE_MS = 50;

/** The stepped kernel run to the end at once. */
export function wholeBatch(kernel: SteppedKernel): BatchKernel {
  return (Q, K, V, O, shape) => {
    const steps = kernel(Q, K, V, O, shape);
    while (steps.next().done !== true);
  };
}

/** Resolves after the event loop has served what is waiting (setImmediate in Node; a zero timeout elsewhere). */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => {
    if (typeof setImmediate === 'function') setImmediate(resolve);
    else setTimeout(resolve, 0);
  });
}

export function singleThreadRunner(kernel: SteppedKernel, shape: Shape): Runner {
  const size = matrixFloats(shape);
  return {
    // About 2^27 flops per run (under a second), so progress can be reported between runs.
    maxBatchesPerRun: Math.max(1, Math.floor(2 ** 27 / (4 * shape.N * size))),
    async run(input, batches, output) {
      let sliceStart = performance.now();
      for (let b = 0; b < batches; b++) {
        const q = b * 3 * size;
        const steps = kernel(
          input.subarray(q, q + size),
          input.subarray(q + size, q + 2 * size),
          input.subarray(q + 2 * size, q + 3 * size),
          output.subarray(b * size, (b + 1) * size),
          shape,
        );
        while (steps.next().done !== true) {
          if (performance.now() - sliceStart < SLICE_MS) continue;
          await yieldToEventLoop();
          sliceStart = performance.now();
        }
      }
      return {};
    },
    dispose: () => Promise.resolve(),
  };
}
