/**
 * The machine a command runs on: CPU threads, and the GPU when one is wanted and exists.
 */
import { availableParallelism } from 'node:os';
import type { RunEnv } from '@fa/core';
import { acquireNodeGpu } from '@fa/core/node';

/** Devices this process created, destroyed by releaseAll() before exit. */
const devices: GPUDevice[] = [];

/** Destroys every device makeEnv created (the process must still exit explicitly: Dawn keeps a thread alive). */
export function releaseAll(): void {
  for (const device of devices.splice(0)) device.destroy();
}

export async function makeEnv(options: { gpu: boolean; threads?: number | undefined }): Promise<RunEnv> {
  const threads = options.threads ?? availableParallelism();
  if (!options.gpu) return { threads, gpuUnavailableReason: 'GPU not requested' };
  const acquired = await acquireNodeGpu();
  if (!acquired.gpu) return { threads, gpuUnavailableReason: acquired.reason };
  devices.push(acquired.gpu.device);
  return { threads, gpu: acquired.gpu };
}
