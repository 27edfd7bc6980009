/**
 * How many batches one GPU run may take: every buffer a kernel binds must fit the device's
 * maxStorageBufferBindingSize and maxBufferSize. A single batch that cannot fit is a clear error naming the limit.
 */
import { formatBytes, formatShape, type Shape } from '@fa/io';
import { GpuError } from '../errors.js';
import type { GpuContext } from '../gpu-context.js';

/** Bytes one batch needs in each bound buffer, by name (for the message). */
export type BytesPerBatch = Record<string, number>;

/** Upper bound on the batches of one run when nothing else limits it (keeps host staging memory bounded). */
const MAX_RUN_BYTES = 1 << 30;

export function batchesPerRun(gpu: GpuContext, shape: Shape, perBatch: BytesPerBatch, rung: string): number {
  const { maxStorageBufferBindingSize: binding, maxBufferSize: buffer } = gpu.report.limits;
  const limit = Math.min(binding, buffer);
  let batches = shape.B;
  for (const [name, bytes] of Object.entries(perBatch)) {
    if (bytes > limit) {
      const which = binding <= buffer ? `maxStorageBufferBindingSize (${formatBytes(binding)})` : `maxBufferSize (${formatBytes(buffer)})`;
      throw new GpuError(
        'limit',
        `${rung}: one batch of ${formatShape(shape)} needs ${formatBytes(bytes)} for ${name}, over this GPU's ${which}; use a CPU rung or a smaller N·d`,
      );
    }
    batches = Math.min(batches, Math.floor(limit / bytes), Math.max(1, Math.floor(MAX_RUN_BYTES / bytes)));
  }
  return Math.max(1, batches);
}

/** Workgroup grid for `count` workgroups: x up to the per-dimension limit, the rest in y. */
export function grid2d(gpu: GpuContext, count: number): [number, number] {
  const maxX = gpu.report.limits.maxComputeWorkgroupsPerDimension;
  if (count <= maxX) return [Math.max(1, count), 1];
  const y = Math.ceil(count / maxX);
  if (y > maxX) throw new GpuError('limit', `a dispatch of ${count} workgroups exceeds ${maxX}² workgroups`);
  return [Math.ceil(count / y), y];
}

/** The head sizes the GPU rungs support: multiples of 4 up to 128 (tiles of d columns must fit on chip). */
const GPU_MAX_HEAD_SIZE = 128;

export function gpuHeadSizeSupport(shape: Shape, maxD = GPU_MAX_HEAD_SIZE): true | string {
  if (shape.d > maxD) return `d = ${shape.d} is above this rung's maximum head size ${maxD}`;
  if (shape.d % 4 !== 0) return `d = ${shape.d} is not a multiple of 4`;
  return true;
}
