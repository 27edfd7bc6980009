/**
 * The host side every GPU rung shares: buffers for Q, K, V and O sized to the largest run, one command buffer per run
 * (upload, the rung's passes, readback, timestamps), error scopes and device-loss checks. A rung supplies only its
 * kernel: scratch buffer sizes and how to encode its passes.
 *
 * Two runs may be in flight at once. Each takes one of two slots, with its own staging, readback and timestamp
 * buffers, so the host fills the next run's staging memory while the GPU computes the current run and copies the
 * previous run's output out. The Q, K, V and O buffers on the GPU are shared: the queue runs the copies and passes of
 * one submit after those of the one before, so the next upload never overwrites data a kernel still reads.
 */
import { formatShape, matrixFloats, type Shape } from '@fa/io';
import { GpuError } from '../errors.js';
import { oneLine, type GpuContext } from '../gpu-context.js';
import type { PrepareOptions, Runner, RunStats } from '../rung.js';
import { checked, checkedSync, whileAlive } from './errors.js';
import { batchesPerRun } from './plan.js';
import { PassTimer } from './timing.js';
import { Readback, StagingUpload } from './transfer.js';

export interface AttentionBuffers {
  /** Q, K, V of each batch of the run, batch after batch (the file's layout). */
  readonly qkv: GPUBuffer;
  /** O of each batch of the run. */
  readonly O: GPUBuffer;
  /** The rung's own buffers, by the names of `scratchBytesPerBatch`. */
  readonly scratch: Readonly<Record<string, GPUBuffer>>;
}

export interface AttentionKernel {
  /** Bytes per batch of each intermediate buffer the kernel needs (l, m, S, ...). */
  readonly scratchBytesPerBatch: Readonly<Record<string, number>>;
  /** Called once the buffers exist: build bind groups; return the per-run encoder. */
  bind(buffers: AttentionBuffers, maxBatches: number): KernelEncoder;
}

/** Where a kernel's passes get their timestamp writes (a PassTimer, or none when the caller encodes). */
export interface TimestampSink {
  writes(first: boolean, last: boolean): GPUComputePassTimestampWrites | undefined;
}

export interface KernelEncoder {
  /** Encodes the kernel's compute passes for `batches` batches; passes take timestamp writes from `timer`. */
  encode(encoder: GPUCommandEncoder, batches: number, timer: TimestampSink): void;
  destroy?(): void;
}

/**
 * Batches one run of `kernel` may cover: as many as Q, K, V, O and the kernel's scratch buffers allow under the
 * adapter's binding limits (`batchesPerRun`), at most `wanted`, at least 1.
 */
export function kernelBatchesPerRun(gpu: GpuContext, shape: Shape, kernel: AttentionKernel, rung: string, wanted?: number): number {
  const floats = matrixFloats(shape);
  const fits = batchesPerRun(gpu, shape, { 'Q, K and V': 12 * floats, O: 4 * floats, ...kernel.scratchBytesPerBatch }, rung);
  return Math.max(1, Math.min(fits, wanted ?? fits));
}

/** Allocates everything a rung needs for `shape` and returns its Runner. */
export async function prepareAttentionRunner(
  gpu: GpuContext,
  shape: Shape,
  rung: string,
  kernel: AttentionKernel,
  options: PrepareOptions = {},
): Promise<Runner> {
  const floats = matrixFloats(shape);
  const maxBatches = kernelBatchesPerRun(gpu, shape, kernel, rung, options.maxBatchesPerRun);
  const created: { destroy(): void }[] = [];
  const track = <T extends { destroy(): void }>(resource: T): T => {
    created.push(resource);
    return resource;
  };
  try {
    return await checked(gpu, `allocating ${rung} buffers for ${formatShape(shape)} (${maxBatches} batches per run)`, () => {
      const { device } = gpu;
      const storage = (label: string, bytes: number, extra = 0): GPUBuffer =>
        track(device.createBuffer({ label, size: Math.max(16, Math.ceil(bytes / 4) * 4), usage: GPUBufferUsage.STORAGE | extra }));
      const qkv = storage('qkv', maxBatches * 12 * floats, GPUBufferUsage.COPY_DST);
      const O = storage('O', maxBatches * 4 * floats, GPUBufferUsage.COPY_SRC);
      const scratch: Record<string, GPUBuffer> = {};
      for (const [name, bytes] of Object.entries(kernel.scratchBytesPerBatch)) scratch[name] = storage(name, maxBatches * bytes);
      const slots = Array.from({ length: SLOTS }, (): Slot => ({
        upload: track(new StagingUpload(gpu, maxBatches * 12 * floats)),
        readback: track(new Readback(gpu, maxBatches * 4 * floats)),
        timer: track(new PassTimer(gpu)),
        busy: Promise.resolve(),
      }));
      const encoderOf = kernel.bind({ qkv, O, scratch }, maxBatches);
      const owned = [qkv, O, ...Object.values(scratch)];
      return new AttentionRunner(gpu, rung, shape, maxBatches, { qkv, O, slots, encoderOf, owned });
    });
  } catch (error) {
    // A failed allocation (out of memory, a limit) frees what was created before it.
    for (const resource of created) resource.destroy();
    throw error;
  }
}

/** Runs in flight at once: one filling or computing while the one before it is read back. */
const SLOTS = 2;

/** What one run in flight owns: host-visible memory in each direction and its timestamps. */
interface Slot {
  upload: StagingUpload;
  readback: Readback;
  timer: PassTimer;
  /** The last run that used this slot; the next one waits for it. */
  busy: Promise<unknown>;
}

interface RunnerParts {
  qkv: GPUBuffer;
  O: GPUBuffer;
  slots: Slot[];
  encoderOf: KernelEncoder;
  owned: GPUBuffer[];
}

class AttentionRunner implements Runner {
  readonly concurrentRuns = SLOTS;
  private nextSlot = 0;

  constructor(
    private readonly gpu: GpuContext,
    private readonly rung: string,
    private readonly shape: Shape,
    readonly maxBatchesPerRun: number,
    private readonly parts: RunnerParts,
  ) {}

  run(input: Float32Array, batches: number, output: Float32Array): Promise<RunStats> {
    const slot = this.parts.slots[this.nextSlot] as Slot;
    this.nextSlot = (this.nextSlot + 1) % this.parts.slots.length;
    const previous = slot.busy;
    const work = previous.catch(() => undefined).then(() => this.runOn(slot, input, batches, output));
    slot.busy = work.catch(() => undefined);
    return work;
  }

  private async runOn(slot: Slot, input: Float32Array, batches: number, output: Float32Array): Promise<RunStats> {
    const { qkv, O, encoderOf } = this.parts;
    const { upload, readback, timer } = slot;
    const floats = matrixFloats(this.shape);
    const what = `running ${this.rung} on ${batches} batches of ${formatShape(this.shape)}`;
    try {
      const uploadMs = await whileAlive(this.gpu, upload.fill(input.subarray(0, batches * 3 * floats)));
      await checkedSync(this.gpu, what, () => {
        const encoder = this.gpu.device.createCommandEncoder({ label: this.rung });
        upload.encode(encoder, qkv, batches * 12 * floats);
        encoderOf.encode(encoder, batches, timer);
        readback.encode(encoder, O, batches * 4 * floats);
        timer.resolve(encoder);
        this.gpu.device.queue.submit([encoder.finish()]);
      });
      const readbackMs = await whileAlive(this.gpu, readback.read(output.subarray(0, batches * floats)));
      const gpuMs = await whileAlive(this.gpu, timer.read());
      return gpuMs === undefined ? { uploadMs, readbackMs } : { gpuMs, uploadMs, readbackMs };
    } catch (error) {
      throw error instanceof GpuError ? error : new GpuError('internal', `GPU failure while ${what}: ${oneLine(error)}`);
    }
  }

  async timeKernel(batches: number, warmups: number, repeats: number): Promise<number[] | undefined> {
    if (!this.gpu.hasTimestamps) return undefined;
    const { encoderOf, slots } = this.parts;
    await Promise.all(slots.map((slot) => slot.busy));
    return checked(this.gpu, `timing ${this.rung} on ${batches} batches of ${formatShape(this.shape)}`, async () => {
      const timer = new PassTimer(this.gpu, repeats);
      try {
        const encoder = this.gpu.device.createCommandEncoder({ label: `${this.rung} timing` });
        for (let k = 0; k < warmups + repeats; k++) {
          timer.select(k < warmups ? undefined : k - warmups);
          encoderOf.encode(encoder, batches, timer);
        }
        timer.resolve(encoder);
        this.gpu.device.queue.submit([encoder.finish()]);
        return await timer.readAll();
      } finally {
        timer.destroy();
      }
    });
  }

  dispose(): Promise<void> {
    const { slots, encoderOf, owned } = this.parts;
    encoderOf.destroy?.();
    for (const buffer of owned) buffer.destroy();
    for (const { upload, readback, timer } of slots) {
      upload.destroy();
      readback.destroy();
      timer.destroy();
    }
    return Promise.resolve();
  }
}

/**
 * The copy-only floor: upload Q, K, V and read O back through the same plumbing, with no kernel at all. No rung can
 * beat its wall time; the bench prints it beside the rungs.
 */
export function prepareCopyFloor(gpu: GpuContext, shape: Shape): Promise<Runner> {
  return prepareAttentionRunner(gpu, shape, 'copy floor', {
    scratchBytesPerBatch: {},
    bind: () => ({ encode: () => undefined }),
  });
}
