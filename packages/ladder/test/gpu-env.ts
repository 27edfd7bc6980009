import { availableParallelism } from 'node:os';
import { createGpuContext, type RunEnv } from '@fa/core';
import { acquireNodeGpu, nodeGpu } from '@fa/core/node';
import { compileWithoutOptimizing, pollEveryMillisecond } from './gpu-setup.js';

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
