/**
 * The machine a command runs on: CPU threads, and the GPU when one is wanted and exists.
 */
import { availableParallelism } from 'node:os';
import type { RunEnv } from '@fa/core';
import { acquireNodeGpu } from '@fa/core/node';

export interface CliEnv extends RunEnv {
  /** Frees the GPU device (the process must still exit explicitly: Dawn keeps a thread alive). */
  release(): void;
}

export async function makeEnv(options: { gpu: boolean; threads?: number | undefined }): Promise<CliEnv> {
  const threads = options.threads ?? availableParallelism();
  if (!options.gpu) return { threads, gpuUnavailableReason: 'GPU not requested', release: () => undefined };
  const acquired = await acquireNodeGpu();
  if (acquired.gpu) {
    const gpu = acquired.gpu;
    return { threads, gpu, release: () => { gpu.destroy(); } };
  }
  return { threads, gpuUnavailableReason: acquired.reason, release: () => undefined };
}
