import { availableParallelism } from 'node:os';
import type { RunEnv } from '@fa/core';
import { acquireNodeGpu } from '@fa/core/node';

/**
 * The environment for the conformance suite. Without a GPU adapter, GPU rungs are skipped with the reason shown;
 * with FA_REQUIRE_GPU=1 (CI sets it) a missing adapter is a failure instead.
 */
export async function conformanceEnv(): Promise<{ env: RunEnv; release: () => void }> {
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
