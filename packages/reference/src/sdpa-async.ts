/**
 * The CPU computations of sdpa.ts without holding the thread: their steps (one query row each), with the thread handed
 * back to the event loop every few milliseconds, so that signals, timers and I/O are served while a large problem
 * computes (seconds to minutes on one thread). The same values as `sdpaFloat32` and `sdpaOracle`, bit for bit.
 */
import type { SdpaProblem } from '@fa/core';
import type { ModValues } from './sdpa-mods.js';
import { sdpaFloat32Steps, sdpaOracleSteps } from './sdpa.js';
import { yieldToEventLoop } from './single-thread.js';

/** How long the computation runs before it hands the thread back to the event loop. */
const SLICE_MS = 20;

/** `sdpaFloat32`, computed in slices of about SLICE_MS with the event loop served between them. */
export function sdpaFloat32Async(problem: SdpaProblem, q: Float32Array, k: Float32Array, v: Float32Array, mods?: ModValues): Promise<{ out: Float32Array; lse: Float32Array }> {
  return inSlices(sdpaFloat32Steps(problem, q, k, v, mods));
}

/** `sdpaOracle` (float64), computed in slices of about SLICE_MS with the event loop served between them. */
export function sdpaOracleAsync(problem: SdpaProblem, q: Float32Array, k: Float32Array, v: Float32Array, mods?: ModValues): Promise<{ out: Float64Array; lse: Float64Array }> {
  return inSlices(sdpaOracleSteps(problem, q, k, v, mods));
}

/** Runs `steps` to their end, handing the thread back every SLICE_MS. */
async function inSlices<T>(steps: Generator<void, T, undefined>): Promise<T> {
  let sliceStart = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
    if (performance.now() - sliceStart < SLICE_MS) continue;
    await yieldToEventLoop();
    sliceStart = performance.now();
  }
}
