/**
 * Moving data between the host and GPU buffers. Uploads go through one reused MAP_WRITE | COPY_SRC staging buffer:
 * queue.writeBuffer of large data makes and zero-fills a fresh staging buffer every time (about 1 GB/s measured),
 * a reused mapped buffer runs several times faster. Readback goes through a reused MAP_READ buffer.
 */
import type { GpuContext } from '../gpu-context.js';

export class StagingUpload {
  private readonly staging: GPUBuffer;

  constructor(
    gpu: GpuContext,
    readonly capacity: number,
  ) {
    this.staging = gpu.device.createBuffer({
      size: align4(capacity),
      usage: GPUBufferUsage.MAP_WRITE | GPUBufferUsage.COPY_SRC,
      label: 'upload-staging',
    });
  }

  /**
   * Writes `data` into the staging buffer (once the GPU is done with its last contents); then `encode` copies it into
   * `target` at `targetOffset`. Returns the milliseconds of the copy alone, not of the wait.
   */
  async fill(data: Float32Array): Promise<number> {
    await this.staging.mapAsync(GPUMapMode.WRITE, 0, align4(data.byteLength));
    const t = performance.now();
    new Float32Array(this.staging.getMappedRange(0, align4(data.byteLength))).set(data);
    this.staging.unmap();
    return performance.now() - t;
  }

  encode(encoder: GPUCommandEncoder, target: GPUBuffer, bytes: number, targetOffset = 0): void {
    encoder.copyBufferToBuffer(this.staging, 0, target, targetOffset, align4(bytes));
  }

  destroy(): void {
    this.staging.destroy();
  }
}

export class Readback {
  private readonly buffer: GPUBuffer;

  constructor(
    gpu: GpuContext,
    readonly capacity: number,
  ) {
    this.buffer = gpu.device.createBuffer({
      size: align4(capacity),
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
      label: 'readback',
    });
  }

  encode(encoder: GPUCommandEncoder, source: GPUBuffer, bytes: number): void {
    encoder.copyBufferToBuffer(source, 0, this.buffer, 0, align4(bytes));
  }

  /**
   * After the submit: waits for the GPU (the map resolves when the submitted work is done) and copies the bytes into
   * `output`. Returns the milliseconds of the copy alone, so that waiting for the kernels is not counted as readback.
   */
  async read(output: Float32Array): Promise<number> {
    await this.buffer.mapAsync(GPUMapMode.READ, 0, align4(output.byteLength));
    const t = performance.now();
    output.set(new Float32Array(this.buffer.getMappedRange(0, align4(output.byteLength))));
    this.buffer.unmap();
    return performance.now() - t;
  }

  destroy(): void {
    this.buffer.destroy();
  }
}

function align4(bytes: number): number {
  return Math.ceil(bytes / 4) * 4;
}
