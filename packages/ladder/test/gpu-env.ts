import { availableParallelism } from 'node:os';
import { createGpuContext, type RunEnv } from '@fa/core';
import { acquireNodeGpu, nodeGpu } from '@fa/core/node';

/**
 * While a GPU promise is pending, Dawn (the webgpu package) polls for finished work on every turn of the event loop
 * through `setImmediate`, so a test waiting on the software GPU keeps one core busy for as long as Mesa compiles a
 * pipeline on another (seconds to minutes, docs/ci.md). The GPU test files run two at a time (vitest.config.ts), so
 * here the polling waits a millisecond between turns instead: the compilation gets the core. Vitest's own timers are
 * its saved originals; only code of the test file sees this `setImmediate`.
 */
function pollEveryMillisecond(): void {
  const marked = globalThis as { faPollEveryMillisecond?: boolean };
  if (marked.faPollEveryMillisecond === true) return;
  marked.faPollEveryMillisecond = true;
  const setTimer = globalThis.setTimeout;
  globalThis.setImmediate = ((callback: (...args: unknown[]) => void, ...args: unknown[]) => setTimer(callback, 1, ...args)) as unknown as typeof setImmediate;
}

/**
 * Mesa's llvmpipe (the software GPU of CI) skips LLVM's optimization passes with GALLIVM_PERF=nopt: the tests' kernels
 * run on tiny shapes, and the `@fa/ladder` GPU files took 201 s instead of 262 s with it (docs/ci.md). Read when the
 * first device is made, so set before; a value given by the caller stays.
 */
function compileWithoutOptimizing(): void {
  process.env.GALLIVM_PERF ??= 'nopt';
}

/**
 * The environment for the conformance suite. Without a GPU adapter, GPU rungs are skipped with the reason shown;
 * with FA_REQUIRE_GPU=1 (CI sets it) a missing adapter is a failure instead.
 */
export async function conformanceEnv(): Promise<{ env: RunEnv; release: () => void }> {
  pollEveryMillisecond();
  compileWithoutOptimizing();
  const acquired = await acquireNodeGpu();
  const threads = Math.min(4, availableParallelism());
  if (acquired.gpu) {
    const gpu = acquired.gpu;
    return { env: { threads, gpu }, release: () => { gpu.destroy(); } };
  }
  if (process.env.FA_REQUIRE_GPU === '1') throw new Error(`FA_REQUIRE_GPU=1 but ${acquired.reason}`);
  console.warn(`GPU rungs skipped: ${acquired.reason} (set FA_REQUIRE_GPU=1 to make this a failure)`);
  return { env: { threads, gpuUnavailableReason: acquired.reason }, release: () => undefined };
}

let instance: Promise<GPU> | undefined;

/**
 * A new device on the GPU of `env` (`env` itself when it has none), and how to destroy it. On the software GPU a
 * device compiles more slowly the more it has compiled: split-softmax at d = 32 took 18-22 s of CPU on a new device,
 * 48-57 s on one that had compiled 36 small pipelines before, 21-25 s on a new device after them (docs/ci.md). So the
 * GPU tests give each rung and head size a device of their own: its pipelines serve no other rung or head size anyway.
 */
export async function deviceOfItsOwn(env: RunEnv): Promise<{ env: RunEnv; release: () => void }> {
  if (!env.gpu) return { env, release: () => undefined };
  instance ??= nodeGpu();
  const adapter = await (await instance).requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) throw new Error('the GPU adapter is gone: no second device');
  const gpu = await createGpuContext(adapter);
  return { env: { ...env, gpu }, release: () => { gpu.destroy(); } };
}
