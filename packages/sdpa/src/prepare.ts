/**
 * Attention prepared once for one problem (dimensions and options) on one GPU: the kernel compiled and the masks
 * uploaded, then run on typed arrays (upload, dispatch, read back) or encoded into the caller's command encoder on the
 * caller's buffers, as often as wanted, until `destroy`.
 */
import { checked, Readback, sdpaProblem, UnsupportedShapeError, type GpuContext, type SdpaDims, type SdpaOptions, type SdpaProblem } from '@fa/core';
import { fp32Plan, prepareFp32Kernel, type Fp32Kernel } from './fp32/attention-fp32.js';

/** The caller's tensors on the GPU: float32 STORAGE buffers in the problem's layout, whole tensors. */
export interface AttentionBuffers {
  readonly q: GPUBuffer;
  readonly k: GPUBuffer;
  readonly v: GPUBuffer;
  /** The output, shaped as q. */
  readonly out: GPUBuffer;
  /** [B, Hq, Lq] float32 log-sum-exps, when prepared with `lse`. */
  readonly lse?: GPUBuffer;
}

export interface PrepareOptions extends SdpaOptions {
  /** Also compute each row's log-sum-exp. */
  readonly lse?: boolean;
}

export interface PreparedAttention {
  readonly problem: SdpaProblem;
  /** The kernel that runs it. */
  readonly impl: string;
  /** Records the attention of the caller's buffers into `encoder` (one compute pass); the caller submits. */
  encode(encoder: GPUCommandEncoder, buffers: AttentionBuffers, timestampWrites?: GPUComputePassTimestampWrites): void;
  /** Uploads q, k, v (float32, the problem's layout), runs, and reads the output (and log-sum-exps) back. */
  run(q: Float32Array, k: Float32Array, v: Float32Array): Promise<{ out: Float32Array; lse?: Float32Array }>;
  /** Frees the kernel's own buffers; the caller's buffers and device are left alone. */
  destroy(): void;
}

/** Why the GPU kernel cannot run this problem here, or undefined when it can. */
export function gpuUnsupportedReason(gpu: GpuContext, dims: SdpaDims, options: PrepareOptions = {}): string | undefined {
  const plan = fp32Plan(sdpaProblem(dims, options), gpu, options.lse === true);
  return typeof plan === 'string' ? plan : undefined;
}

/** Compiles the kernel for this problem on `gpu`; throws UnsupportedShapeError with the reason when it cannot. */
export async function prepareAttention(gpu: GpuContext, dims: SdpaDims, options: PrepareOptions = {}): Promise<PreparedAttention> {
  const problem = sdpaProblem(dims, options);
  const withLse = options.lse === true;
  const plan = fp32Plan(problem, gpu, withLse);
  if (typeof plan === 'string') throw new UnsupportedShapeError(`attention-fp32 cannot run this problem here: ${plan}`);
  const kernel = await prepareFp32Kernel(gpu, problem, plan);
  const { B, Hq, Hkv, Lq, Lk, d } = problem.dims;
  const bytes = { q: Hq * Lq * d * 4, kv: Hkv * Lk * d * 4, lse: Hq * Lq * 4 };
  const limit = Math.min(gpu.report.limits.maxStorageBufferBindingSize, gpu.report.limits.maxBufferSize);
  const batchesPerRun = Math.min(B, Math.floor(limit / Math.max(bytes.q, bytes.kv)));
  if (batchesPerRun < 1) {
    kernel.destroy();
    throw new UnsupportedShapeError(`one batch of this problem needs ${Math.max(bytes.q, bytes.kv)} bytes in one binding, over this GPU's ${limit}`);
  }
  return {
    problem,
    impl: 'attention-fp32',
    encode(encoder, buffers, timestampWrites) {
      const need = { q: B * bytes.q, k: B * bytes.kv, v: B * bytes.kv, out: B * bytes.q, lse: B * bytes.lse };
      for (const name of ['q', 'k', 'v', 'out'] as const) {
        if (buffers[name].size < need[name]) throw new RangeError(`attention: buffer ${name} holds ${buffers[name].size} bytes; this problem needs ${need[name]}`);
        if (need[name] > limit) throw new RangeError(`attention: tensor ${name} of ${need[name]} bytes is over this GPU's ${limit} per binding; encode fewer batches at a time`);
      }
      if (withLse && (buffers.lse === undefined || buffers.lse.size < need.lse)) throw new RangeError(`attention: prepared with lse, so give an lse buffer of ${need.lse} bytes`);
      kernel.encode(encoder, { q: buffers.q, k: buffers.k, v: buffers.v, O: buffers.out, ...(buffers.lse ? { lse: buffers.lse } : {}) }, 0, B, timestampWrites);
    },
    run: (q, k, v) => runArrays(gpu, problem, kernel, batchesPerRun, withLse, q, k, v),
    destroy() {
      kernel.destroy();
    },
  };
}

/** Runs typed arrays through the kernel, `batchesPerRun` batches at a time, on buffers of its own. */
async function runArrays(
  gpu: GpuContext,
  problem: SdpaProblem,
  kernel: Fp32Kernel,
  batchesPerRun: number,
  withLse: boolean,
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
): Promise<{ out: Float32Array; lse?: Float32Array }> {
  const { B, Hq, Hkv, Lq, Lk, d } = problem.dims;
  const floats = { q: Hq * Lq * d, kv: Hkv * Lk * d, lse: Hq * Lq };
  for (const [name, data, per] of [['q', q, floats.q], ['k', k, floats.kv], ['v', v, floats.kv]] as const) {
    if (data.length !== B * per) throw new RangeError(`attention: ${name} holds ${data.length} floats; this problem needs ${B * per}`);
  }
  const { device } = gpu;
  const make = (label: string, count: number, usage: number): GPUBuffer => device.createBuffer({ label, size: Math.max(16, count * 4), usage });
  const STORAGE_IN = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
  const STORAGE_OUT = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC;
  const buffers = {
    q: make('attention q', batchesPerRun * floats.q, STORAGE_IN),
    k: make('attention k', batchesPerRun * floats.kv, STORAGE_IN),
    v: make('attention v', batchesPerRun * floats.kv, STORAGE_IN),
    O: make('attention out', batchesPerRun * floats.q, STORAGE_OUT),
    ...(withLse ? { lse: make('attention lse', batchesPerRun * floats.lse, STORAGE_OUT) } : {}),
  };
  const readOut = new Readback(gpu, batchesPerRun * floats.q * 4);
  const readLse = withLse ? new Readback(gpu, batchesPerRun * floats.lse * 4) : undefined;
  const out = new Float32Array(B * floats.q);
  const lse = withLse ? new Float32Array(B * floats.lse) : undefined;
  try {
    for (let batch0 = 0; batch0 < B; batch0 += batchesPerRun) {
      const n = Math.min(batchesPerRun, B - batch0);
      const slice = (data: Float32Array, per: number): Float32Array => data.subarray(batch0 * per, (batch0 + n) * per);
      await checked(gpu, `attention on batches ${batch0} to ${batch0 + n - 1}`, () => {
        device.queue.writeBuffer(buffers.q, 0, slice(q, floats.q));
        device.queue.writeBuffer(buffers.k, 0, slice(k, floats.kv));
        device.queue.writeBuffer(buffers.v, 0, slice(v, floats.kv));
        const encoder = device.createCommandEncoder({ label: 'attention' });
        kernel.encode(encoder, buffers, batch0, n);
        readOut.encode(encoder, buffers.O, n * floats.q * 4);
        if (readLse && buffers.lse) readLse.encode(encoder, buffers.lse, n * floats.lse * 4);
        device.queue.submit([encoder.finish()]);
      });
      await readOut.read(slice(out, floats.q));
      if (readLse && lse) await readLse.read(slice(lse, floats.lse));
    }
  } finally {
    for (const buffer of Object.values(buffers)) buffer.destroy();
    readOut.destroy();
    readLse?.destroy();
  }
  return { out, ...(lse ? { lse } : {}) };
}
