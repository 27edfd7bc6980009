import { availableParallelism } from 'node:os';
import type { RunEnv } from '@fa/core';
import { acquireNodeGpu } from '@fa/core/node';

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
 * The environment for the conformance suite. Without a GPU adapter, GPU rungs are skipped with the reason shown;
 * with FA_REQUIRE_GPU=1 (CI sets it) a missing adapter is a failure instead.
 */
export async function conformanceEnv(): Promise<{ env: RunEnv; release: () => void }> {
  pollEveryMillisecond();
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
