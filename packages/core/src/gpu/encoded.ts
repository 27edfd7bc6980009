/**
 * A GPU rung encoded into the caller's own command encoder, on buffers the caller owns: Q, K, V in the hw4 layout
 * (per batch Q, K, V, each N × d float32) in, O out. Nothing is copied to or from the CPU; the rung's own scratch
 * buffers (if any) are allocated once here. For applications whose data is already on the GPU.
 */
import { formatShape, matrixFloats, type Shape } from '@fa/io';
import { UnsupportedShapeError } from '../errors.js';
import { canRun, type RunEnv, type Rung } from '../rung.js';
import { kernelBatchesPerRun, type KernelEncoder } from './attention-runner.js';

export interface AttentionBuffersOfCaller {
  /** batches × 3 × N × d float32 (STORAGE usage): Q, K, V of each batch. */
  readonly qkv: GPUBuffer;
  /** batches × N × d float32 (STORAGE usage): O of each batch. */
  readonly O: GPUBuffer;
}

export interface EncodedAttention {
  /** The most batches one `encode` may cover (the rung's scratch buffers and the binding limits bound it). */
  readonly maxBatches: number;
  /** Records the rung's passes for `batches` batches of `buffers` into `encoder`; the caller submits. */
  encode(encoder: GPUCommandEncoder, buffers: AttentionBuffersOfCaller, batches: number): void;
  /** Frees the rung's scratch buffers; the caller's buffers and device are left alone. */
  destroy(): void;
}

const NO_TIMESTAMPS = { writes: () => undefined };

/** Prepares `rung` for `shape` to encode up to `maxBatches` batches at a time into the caller's encoders. */
export async function prepareEncoded(rung: Rung, env: RunEnv, shape: Shape, maxBatches = shape.B): Promise<EncodedAttention> {
  const allowed = canRun(rung, shape, env);
  if (allowed !== true) throw new UnsupportedShapeError(`${rung.id}: ${allowed}`);
  if (!rung.prepareKernel || !env.gpu) throw new UnsupportedShapeError(`${rung.id}: not a GPU rung that can encode into a caller's command encoder`);
  const gpu = env.gpu;
  const kernel = await rung.prepareKernel(env, shape);
  const floats = matrixFloats(shape);
  const batchesAtOnce = kernelBatchesPerRun(gpu, shape, kernel, rung.id, maxBatches);
  const scratch: Record<string, GPUBuffer> = {};
  for (const [name, bytes] of Object.entries(kernel.scratchBytesPerBatch)) {
    scratch[name] = gpu.device.createBuffer({ label: `${rung.id} ${name}`, size: Math.max(16, Math.ceil((batchesAtOnce * bytes) / 4) * 4), usage: GPUBufferUsage.STORAGE });
  }
  /** Bind groups are made once per pair of caller buffers. */
  const bound = new Map<GPUBuffer, Map<GPUBuffer, KernelEncoder>>();
  return {
    maxBatches: batchesAtOnce,
    encode(encoder, { qkv, O }, batches) {
      if (!Number.isInteger(batches) || batches < 1 || batches > batchesAtOnce) {
        throw new RangeError(`${rung.id}: ${batches} batches of ${formatShape(shape)} in one encode; give 1 to ${batchesAtOnce}`);
      }
      const need = { qkv: batches * 12 * floats, O: batches * 4 * floats };
      if (qkv.size < need.qkv || O.size < need.O) {
        throw new RangeError(`${rung.id}: buffers too small for ${batches} batches (qkv ${qkv.size} of ${need.qkv} bytes, O ${O.size} of ${need.O})`);
      }
      let byO = bound.get(qkv);
      if (!byO) bound.set(qkv, (byO = new Map<GPUBuffer, KernelEncoder>()));
      let kernelEncoder = byO.get(O);
      if (!kernelEncoder) byO.set(O, (kernelEncoder = kernel.bind({ qkv, O, scratch }, batchesAtOnce)));
      kernelEncoder.encode(encoder, batches, NO_TIMESTAMPS);
    },
    destroy() {
      for (const byO of bound.values()) for (const kernelEncoder of byO.values()) kernelEncoder.destroy?.();
      bound.clear();
      for (const buffer of Object.values(scratch)) buffer.destroy();
    },
  };
}
