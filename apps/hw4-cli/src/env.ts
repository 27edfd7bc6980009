/**
 * The machine a command runs on: CPU threads, and the GPU when one is wanted and exists.
 */
import { availableParallelism } from 'node:os';
import type { RunEnv } from '@fa/core';
import { acquireNodeGpu, type GpuStartTimes } from '@fa/core/node';
import { UsageError } from './exit-codes.js';
import { reportDawnLoaded } from './parent-watch.js';

/** Devices this process created, destroyed by releaseAll() before exit. */
const devices: GPUDevice[] = [];

/** Destroys every device makeEnv created (the process must still exit explicitly: Dawn keeps a thread alive). */
export function releaseAll(): void {
  for (const device of devices.splice(0)) device.destroy();
}

/** Checks --threads against the cores here: more threads than cores only slow a CPU rung down. */
export function checkThreads(threads: number | undefined, cores = availableParallelism()): number {
  if (threads === undefined) return cores;
  if (threads > cores) {
    throw new UsageError(`--threads ${threads}: this machine has ${cores} core${cores === 1 ? '' : 's'}; give at most ${cores} (or leave --threads out)`);
  }
  return threads;
}

/** The reason given for no GPU when the command did not ask for one (its rungs all run on the CPU). */
export const GPU_NOT_REQUESTED = 'GPU not requested';

let startTimes: GpuStartTimes | undefined;

/** How long starting the GPU took in this process, once makeEnv has started it. */
export function gpuStartTimes(): GpuStartTimes | undefined {
  return startTimes;
}

export async function makeEnv(options: { gpu: boolean; threads?: number | undefined }): Promise<RunEnv> {
  const threads = checkThreads(options.threads);
  if (!options.gpu) return { threads, gpuUnavailableReason: GPU_NOT_REQUESTED };
  const acquired = await acquireNodeGpu();
  // Dawn was loaded, and had its chance to print, unless FA_GPU turned the GPU off.
  if (acquired.gpu || !acquired.reason.includes('FA_GPU')) reportDawnLoaded();
  if (!acquired.gpu) return { threads, gpuUnavailableReason: acquired.reason };
  startTimes = acquired.times;
  devices.push(acquired.gpu.device);
  return { threads, gpu: acquired.gpu };
}
