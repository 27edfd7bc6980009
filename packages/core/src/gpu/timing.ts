/**
 * GPU time from timestamp queries: one pair per run, written at the start of the first compute pass and the end of
 * the last. Returns undefined when the device has no 'timestamp-query' (callers then use wall-clock time).
 */
import type { GpuContext } from '../gpu-context.js';

export class PassTimer {
  private readonly querySet: GPUQuerySet | undefined;
  private readonly resolveBuffer: GPUBuffer | undefined;
  private readonly readBuffer: GPUBuffer | undefined;

  constructor(gpu: GpuContext) {
    if (!gpu.hasTimestamps) return;
    const { device } = gpu;
    this.querySet = device.createQuerySet({ type: 'timestamp', count: 2, label: 'pass-timer' });
    this.resolveBuffer = device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
    this.readBuffer = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  }

  /** timestampWrites for a pass: `first` writes the start, `last` the end (a single pass is both). */
  writes(first: boolean, last: boolean): GPUComputePassTimestampWrites | undefined {
    if (!this.querySet || (!first && !last)) return undefined;
    const writes: GPUComputePassTimestampWrites = { querySet: this.querySet };
    if (first) writes.beginningOfPassWriteIndex = 0;
    if (last) writes.endOfPassWriteIndex = 1;
    return writes;
  }

  /** Encodes the copy of the two timestamps to the readable buffer (after the last pass). */
  resolve(encoder: GPUCommandEncoder): void {
    if (!this.querySet || !this.resolveBuffer || !this.readBuffer) return;
    encoder.resolveQuerySet(this.querySet, 0, 2, this.resolveBuffer, 0);
    encoder.copyBufferToBuffer(this.resolveBuffer, 0, this.readBuffer, 0, 16);
  }

  /** Milliseconds between the two timestamps of the last submitted run. */
  async read(): Promise<number | undefined> {
    if (!this.readBuffer) return undefined;
    await this.readBuffer.mapAsync(GPUMapMode.READ);
    const [start, end] = new BigUint64Array(this.readBuffer.getMappedRange().slice(0));
    this.readBuffer.unmap();
    if (start === undefined || end === undefined || end < start) return undefined;
    return Number(end - start) / 1e6;
  }

  destroy(): void {
    this.querySet?.destroy();
    this.resolveBuffer?.destroy();
    this.readBuffer?.destroy();
  }
}
