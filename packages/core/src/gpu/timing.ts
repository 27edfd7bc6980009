/**
 * GPU time from timestamp queries: one pair per run (or per timed repeat), written at the start of the first compute
 * pass and the end of the last. Returns undefined when the device has no 'timestamp-query' (callers then use
 * wall-clock time).
 */
import type { GpuContext } from '../gpu-context.js';

export class PassTimer {
  private readonly querySet: GPUQuerySet | undefined;
  private readonly resolveBuffer: GPUBuffer | undefined;
  private readonly readBuffer: GPUBuffer | undefined;

  /** Which pair the next passes write (see `select`). */
  private pair = 0;

  constructor(
    gpu: GpuContext,
    private readonly pairs = 1,
  ) {
    if (!gpu.hasTimestamps) return;
    const { device } = gpu;
    this.querySet = device.createQuerySet({ type: 'timestamp', count: 2 * pairs, label: 'pass-timer' });
    this.resolveBuffer = device.createBuffer({ size: 16 * pairs, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
    this.readBuffer = device.createBuffer({ size: 16 * pairs, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  }

  /** Makes the following passes write pair `pair` (0 ≤ pair < pairs), or no timestamps at all when undefined. */
  select(pair: number | undefined): void {
    this.pair = pair ?? -1;
  }

  /** timestampWrites for a pass: `first` writes the start, `last` the end (a single pass is both). */
  writes(first: boolean, last: boolean): GPUComputePassTimestampWrites | undefined {
    if (!this.querySet || (!first && !last) || this.pair < 0) return undefined;
    const writes: GPUComputePassTimestampWrites = { querySet: this.querySet };
    if (first) writes.beginningOfPassWriteIndex = 2 * this.pair;
    if (last) writes.endOfPassWriteIndex = 2 * this.pair + 1;
    return writes;
  }

  /** Encodes the copy of the two timestamps to the readable buffer (after the last pass). */
  resolve(encoder: GPUCommandEncoder): void {
    if (!this.querySet || !this.resolveBuffer || !this.readBuffer) return;
    encoder.resolveQuerySet(this.querySet, 0, 2 * this.pairs, this.resolveBuffer, 0);
    encoder.copyBufferToBuffer(this.resolveBuffer, 0, this.readBuffer, 0, 16 * this.pairs);
  }

  /** Milliseconds between the two timestamps of the last submitted run. */
  async read(): Promise<number | undefined> {
    return (await this.readAll())?.[0];
  }

  /** Milliseconds of every pair, or undefined when any pair is missing. */
  async readAll(): Promise<number[] | undefined> {
    if (!this.readBuffer) return undefined;
    await this.readBuffer.mapAsync(GPUMapMode.READ);
    const stamps = new BigUint64Array(this.readBuffer.getMappedRange().slice(0));
    this.readBuffer.unmap();
    const times: number[] = [];
    for (let k = 0; k < this.pairs; k++) {
      const start = stamps[2 * k];
      const end = stamps[2 * k + 1];
      if (start === undefined || end === undefined || end < start) return undefined;
      times.push(Number(end - start) / 1e6);
    }
    return times;
  }

  destroy(): void {
    this.querySet?.destroy();
    this.resolveBuffer?.destroy();
    this.readBuffer?.destroy();
  }
}
