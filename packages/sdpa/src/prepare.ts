/**
 * Attention planned once and prepared once for one problem (dimensions and options) on one GPU. `planAttention`
 * validates the problem and chooses the kernel and its plan (nothing compiled); `prepareAttention` compiles that plan
 * and uploads the masks, then runs on typed arrays (upload, dispatch, read back) or encodes into the caller's command
 * encoder on the caller's buffers, as often as wanted, until `dispose`.
 */
import { checked, describeValue, SdpaArgumentError, sdpaOptionsOf, sdpaProblem, UnsupportedShapeError, validCacheLengths, valueHeadSize, type GpuContext, type SdpaDims, type SdpaOptions, type SdpaProblem } from '@fa/core';
import { decodePlan, prepareDecodeKernel, type DecodePlan, type DecodeTuning } from './decode/attention-decode.js';
import { refuseOverflow } from './float32-range.js';
import { attentionKernel, fp32Plan } from './fp32/attention-fp32.js';
import { checkModFunctions } from './mods/mod-source.js';
import { matrixPlan } from './matrix/attention-matrix.js';
import { prepareTiledKernel, type TiledKernel, type TiledPlan } from './tiled-host.js';
import type { TensorBinding, TensorType } from './kernel-support.js';
import { checkGpu, checkPrepareOptions, checkRunOptions } from './validate-options.js';

/** Tensor data of a dtype: float32 values, or f16 values as their bits. */
export type TensorData = Float32Array | Uint16Array;

/** The caller's tensors on the GPU: STORAGE buffers of the prepared dtype in the problem's layout, whole tensors. */
export interface AttentionBuffers {
  readonly q: GPUBuffer;
  readonly k: GPUBuffer;
  readonly v: GPUBuffer;
  /** The output, shaped as q with V's head size dv last. */
  readonly out: GPUBuffer;
  /** [B, Hq, Lq] float32 log-sum-exps (float32 whatever the dtype), when prepared with `lse`. */
  readonly lse?: GPUBuffer;
  /**
   * B u32s, the valid keys of each batch's cache, when prepared with `cacheLengths` (whose values then only serve
   * `run`). The kernel reads them when it runs, so a caller advances them on the GPU (`prepareCacheAppend`) or with
   * writeBuffer, without preparing again.
   */
  readonly cacheLengths?: GPUBuffer;
}

export interface PrepareOptions extends SdpaOptions {
  /** Also compute each row's log-sum-exp. */
  readonly lse?: boolean;
  /**
   * The tensors' element type: 'f32' (default) or 'f16' (f16 pairs read as u32s and unpacked, so no shader-f16 is
   * needed; computed in float32 by attention-fp32 and attention-decode, on the matrix units by attention-matrix).
   */
  readonly dtype?: TensorType;
  /**
   * The kernel: 'attention-decode' (the query heads of a KV group together, keys split over workgroups),
   * 'attention-matrix' (tiles of query rows on the matrix units: f16 products for f16 tensors; for f32 tensors high and
   * low f16 parts, fp32-grade for values within f16's range, ±65504) or 'attention-fp32' (tiles of query rows, float32
   * arithmetic). By default: the decode kernel for Lq ≤ DECODE_MAX_LQ where it runs; otherwise, for f16 tensors,
   * attention-matrix where the GPU has subgroup matrices and the kernel takes the problem (f16 products summed in
   * float32, within 2× the error of a plain f16 computation, as PyTorch's fp16 kernels; 1.5-2.1× faster than
   * attention-fp32 on the bench's f16 model cases, docs/sdpa.md), else attention-fp32 (for f32 tensors always).
   */
  readonly kernel?: GpuKernelId;
  /**
   * The most bytes one tensor binding takes (default: the GPU's maxStorageBufferBindingSize). Larger tensors are split
   * over several dispatches of whole batches; a smaller value makes tests and experiments split small problems.
   */
  readonly maxBindingBytes?: number;
  /** Sizes set by an experiment instead of the plans (the bench reads them from FA_SDPA_TUNING). */
  readonly tuning?: DecodeTuning;
}

export type GpuKernelId = 'attention-fp32' | 'attention-matrix' | 'attention-decode';

/** Query rows per head up to which the decode kernel is the default. */
export const DECODE_MAX_LQ = 16;

/** The options a plan resolved: what the kernel computes and how its host runs it (the problem holds the rest). */
export interface PlannedOptions {
  /** The tensors' element type. */
  readonly dtype: TensorType;
  /** Whether each row's log-sum-exp is computed. */
  readonly lse: boolean;
  /** The kernel the options named; undefined for the default choice. */
  readonly kernel?: GpuKernelId;
  /** The most bytes one tensor binding takes, where the options lowered the GPU's limit. */
  readonly maxBindingBytes?: number;
  /** Sizes set instead of the plans'. */
  readonly tuning?: DecodeTuning;
}

/** The kernel chosen and its plan: tile sizes, constants, the source for the dtype. */
type ChosenKernel = { readonly kernel: 'attention-decode'; readonly kernelPlan: DecodePlan } | { readonly kernel: TiledPlan['id']; readonly kernelPlan: TiledPlan };

/**
 * A problem validated and planned for one GPU by `planAttention`: the problem, the kernel chosen, that kernel's plan
 * and the options resolved. `prepareAttention(gpu, plan)` compiles it and `attention(q, k, v, { plan })` runs it, each
 * validating and choosing nothing again. A plan is frozen, and only one made by planAttention is taken (a copy is not).
 */
export type AttentionPlan = {
  /** The problem, validated (@fa/core's sdpaProblem): dimensions, layout, scale, band, masks, cache lengths. */
  readonly problem: SdpaProblem;
  /** The GPU it was planned for (its features and limits); the plan is prepared on that GPU only. */
  readonly gpu: GpuContext;
  readonly options: PlannedOptions;
} & ChosenKernel;

/** The plans planAttention made: prepareAttention and attention take these only, so that none skips the checks. */
const PLANS = new WeakSet<object>();

/** The kernel's plan chosen for a problem, or the reasons none can run it. */
function chooseKernelPlan(problem: SdpaProblem, gpu: GpuContext, options: PlannedOptions): ChosenKernel | string {
  const { lse, dtype, kernel: wanted } = options;
  if (wanted === 'attention-decode' || (wanted === undefined && problem.dims.Lq <= DECODE_MAX_LQ)) {
    const plan = decodePlan(problem, gpu, lse, dtype, options.tuning);
    if (typeof plan !== 'string') return { kernel: 'attention-decode', kernelPlan: plan };
    if (wanted === 'attention-decode') return plan;
  }
  if (wanted === 'attention-matrix' || (wanted === undefined && dtype === 'f16')) {
    const plan = matrixPlan(problem, gpu, lse, dtype, options.tuning);
    if (typeof plan !== 'string') return { kernel: plan.id, kernelPlan: plan };
    if (wanted === 'attention-matrix') return plan;
  }
  const plan = fp32Plan(problem, gpu, lse, dtype, options.tuning);
  return typeof plan === 'string' ? plan : { kernel: plan.id, kernelPlan: plan };
}

export interface PreparedAttention {
  readonly problem: SdpaProblem;
  /** The kernel that runs it. */
  readonly impl: GpuKernelId;
  /** The plan it was prepared from. */
  readonly plan: AttentionPlan;
  /** Records the attention of the caller's buffers into `encoder` (one compute pass); the caller submits. */
  encode(encoder: GPUCommandEncoder, buffers: AttentionBuffers, timestampWrites?: GPUComputePassTimestampWrites): void;
  /**
   * Uploads q, k, v (of the prepared dtype, the problem's layout), runs, and reads the output (and log-sum-exps) back.
   * A problem prepared with cache lengths takes this run's lengths here (the prepared ones by default). Values on which
   * the kernel's float32 arithmetic could overflow are refused first (SdpaOverflowError, float32-range.ts); `encode`
   * reads no values, so its caller keeps them within that bound (`float32OverflowReason`).
   */
  run(q: TensorData, k: TensorData, v: TensorData, options?: { readonly cacheLengths?: ArrayLike<number> }): Promise<{ out: TensorData; lse?: Float32Array }>;
  /** Frees the kernel's own buffers; the caller's buffers and device are left alone. */
  dispose(): void;
  /** @deprecated use dispose() */
  destroy(): void;
}

/** The problem of the arguments, each checked at run time (validate-options.ts) before any GPU work; SdpaArgumentError otherwise. */
function checkedProblem(gpu: unknown, dims: SdpaDims, options: unknown): SdpaProblem {
  checkGpu(gpu);
  checkPrepareOptions(options);
  return sdpaProblem(dims, sdpaOptionsOf(options ?? {}));
}

/**
 * Validates the problem once (the GPU, the dimensions and every option, each refused in one SdpaArgumentError line)
 * and chooses the kernel and its plan for it on `gpu`, compiling nothing: the plan, which `prepareAttention(gpu, plan)`
 * compiles and `attention(q, k, v, { plan })` runs without validating or choosing again; or the reason no kernel can
 * run this problem here (the kernel named in `options`, or by default the decode kernel where it runs, then for f16
 * tensors attention-matrix where it runs, and attention-fp32 otherwise).
 */
export function planAttention(gpu: GpuContext, dims: SdpaDims, options: PrepareOptions = {}): AttentionPlan | string {
  return planProblem(gpu, checkedProblem(gpu, dims, options), options);
}

/**
 * planAttention on a problem the caller validated, with options it checked (attention() checks its own once): the
 * options resolved, the kernel chosen and planned, nothing checked again.
 */
export function planProblem(gpu: GpuContext, problem: SdpaProblem, options: PrepareOptions): AttentionPlan | string {
  const resolved: PlannedOptions = Object.freeze({
    dtype: options.dtype ?? 'f32',
    lse: options.lse === true,
    ...(options.kernel !== undefined ? { kernel: options.kernel } : {}),
    ...(options.maxBindingBytes !== undefined ? { maxBindingBytes: options.maxBindingBytes } : {}),
    ...(options.tuning !== undefined ? { tuning: Object.freeze({ ...options.tuning }) } : {}),
  });
  const chosen = chooseKernelPlan(problem, gpu, resolved);
  if (typeof chosen === 'string') return chosen;
  const plan: AttentionPlan = Object.freeze({ problem, gpu, options: resolved, ...chosen });
  PLANS.add(plan);
  return plan;
}

/** Whether `value` is a plan planAttention made. */
function isAttentionPlan(value: unknown): value is AttentionPlan {
  return typeof value === 'object' && value !== null && PLANS.has(value);
}

/** `plan` when planAttention made it; an SdpaArgumentError naming `where` otherwise (an object copied from a plan included). */
export function plannedOnly(plan: unknown, where: string): AttentionPlan {
  if (isAttentionPlan(plan)) return plan;
  throw new SdpaArgumentError(`${where} is ${describeValue(plan)}, not a plan made by planAttention; give what planAttention returned (a copy is not taken)`);
}

/**
 * The kernel `prepareAttention` would compile for this problem here (nothing is compiled); undefined when none can run
 * it (`gpuUnsupportedReason` says why). Each call validates and plans: to ask and then prepare, plan once with
 * `planAttention` and hand the plan to `prepareAttention(gpu, plan)`.
 */
export function chooseKernel(gpu: GpuContext, dims: SdpaDims, options: PrepareOptions = {}): GpuKernelId | undefined {
  const plan = planAttention(gpu, dims, options);
  return typeof plan === 'string' ? undefined : plan.kernel;
}

/**
 * Why the GPU kernel cannot run this problem here, or undefined when it can. Each call validates and plans: to ask
 * and then prepare, plan once with `planAttention` and hand the plan to `prepareAttention(gpu, plan)`.
 */
export function gpuUnsupportedReason(gpu: GpuContext, dims: SdpaDims, options: PrepareOptions = {}): string | undefined {
  const plan = planAttention(gpu, dims, options);
  return typeof plan === 'string' ? plan : undefined;
}

/**
 * Compiles the kernel of a plan from `planAttention(gpu, dims, options)` on the GPU it was made for, validating and
 * choosing nothing again: the form for a caller that asks first whether the GPU runs a problem (planAttention answers
 * with the plan or the reason), then prepares. The other form, `prepareAttention(gpu, dims, options)`, plans for
 * itself. Either throws UnsupportedShapeError when one batch is over the GPU's bytes per binding; `dispose()` frees
 * what it made.
 */
export function prepareAttention(gpu: GpuContext, plan: AttentionPlan): Promise<PreparedAttention>;
/**
 * Validates the problem and plans its kernel (`planAttention`, once), then compiles it on `gpu`; throws
 * UnsupportedShapeError with the reason when no kernel can run the problem here, or one batch is over the GPU's bytes
 * per binding. `prepareAttention(gpu, plan)` takes a plan made beforehand instead. `dispose()` frees what it made.
 */
export function prepareAttention(gpu: GpuContext, dims: SdpaDims, options?: PrepareOptions): Promise<PreparedAttention>;
export async function prepareAttention(gpu: GpuContext, dimsOrPlan: SdpaDims | AttentionPlan, options?: PrepareOptions): Promise<PreparedAttention> {
  if (isAttentionPlan(dimsOrPlan)) {
    checkGpu(gpu);
    if (options !== undefined) throw new SdpaArgumentError('prepareAttention(gpu, plan) takes no options: the plan holds them (give them to planAttention)');
    if (gpu.device !== dimsOrPlan.gpu.device) throw new SdpaArgumentError('the plan was made for another GPU; plan again with planAttention on this one');
    return preparePlanned(dimsOrPlan);
  }
  // An object that looks like a plan but is not one planAttention made (a copy, a spread) is refused, not read as dimensions.
  const given: unknown = dimsOrPlan;
  if (typeof given === 'object' && given !== null && 'kernelPlan' in given) plannedOnly(given, 'the plan');
  const plan = planAttention(gpu, dimsOrPlan, options);
  if (typeof plan === 'string') throw new UnsupportedShapeError(`${options?.kernel ?? 'attention-fp32'} cannot run this problem here: ${plan}`);
  return preparePlanned(plan);
}

/** The plan compiled on its GPU, and its runs of batches sized to the GPU's bytes per binding. */
async function preparePlanned(plan: AttentionPlan): Promise<PreparedAttention> {
  const { problem, gpu, options } = plan;
  const { lse: withLse, dtype } = options;
  // Score and mask functions: their WGSL checked first, so that an error is one line at the caller's line.
  if (problem.mods) await checkModFunctions(gpu, problem.mods, attentionKernel(dtype));
  const kernel: GpuKernel = plan.kernel === 'attention-decode' ? await prepareDecodeKernel(gpu, problem, plan.kernelPlan) : await prepareTiledKernel(gpu, problem, plan.kernelPlan, options.tuning?.prefillSplits);
  const { B, Hq, Hkv, Lq, Lk, d } = problem.dims;
  const dv = valueHeadSize(problem.dims);
  const size = dtype === 'f16' ? 2 : 4;
  // Bytes per batch of each tensor: K of head size d, V and the output of dv.
  const bytes = { q: Hq * Lq * d * size, kv: Hkv * Lk * d * size, v: Hkv * Lk * dv * size, out: Hq * Lq * dv * size, lse: Hq * Lq * 4 };
  const tensorBytes = Math.max(bytes.q, bytes.kv, bytes.v, bytes.out);
  const limit = Math.min(gpu.report.limits.maxStorageBufferBindingSize, gpu.report.limits.maxBufferSize, options.maxBindingBytes ?? Number.POSITIVE_INFINITY);
  const batchesPerRun = Math.min(B, Math.floor(limit / Math.max(tensorBytes, withLse ? bytes.lse : 0)));
  if (batchesPerRun < 1) {
    kernel.destroy();
    throw new UnsupportedShapeError(`one batch of this problem needs ${tensorBytes} bytes in one binding, over this GPU's ${limit}`);
  }
  // On the caller's buffers, a run of batches starts at an offset each binding takes: a multiple of the alignment.
  const alignment = gpu.device.limits.minStorageBufferOffsetAlignment;
  const encodedRun = alignedRun(batchesPerRun, [bytes.q, bytes.kv, ...(dv !== d ? [bytes.v, bytes.out] : []), ...(withLse ? [bytes.lse] : [])], alignment);
  const dispose = (): void => {
    kernel.destroy();
  };
  return {
    problem,
    impl: plan.kernel,
    plan,
    encode(encoder, buffers, timestampWrites) {
      const need = { q: B * bytes.q, k: B * bytes.kv, v: B * bytes.v, out: B * bytes.out, lse: B * bytes.lse };
      for (const name of ['q', 'k', 'v', 'out'] as const) {
        if (buffers[name].size < need[name]) throw new RangeError(`attention: buffer ${name} holds ${buffers[name].size} bytes; this problem needs ${need[name]}`);
      }
      if (withLse && (buffers.lse === undefined || buffers.lse.size < need.lse)) throw new RangeError(`attention: prepared with lse, so give an lse buffer of ${need.lse} bytes`);
      if (problem.cacheLengths && (buffers.cacheLengths === undefined || buffers.cacheLengths.size < 4 * B)) {
        throw new RangeError(`attention: prepared with cacheLengths, so give a cacheLengths buffer of ${4 * B} bytes (one u32 per batch)`);
      }
      const lengths = problem.cacheLengths ? { lengths: buffers.cacheLengths } : {};
      if (Math.max(need.q, need.k, need.v, need.out, withLse ? need.lse : 0) <= limit) {
        kernel.encode(encoder, { q: buffers.q, k: buffers.k, v: buffers.v, O: buffers.out, ...(buffers.lse ? { lse: buffers.lse } : {}), ...lengths }, 0, B, timestampWrites);
        return;
      }
      // Tensors over one binding: runs of whole batches, each bound as a range of the caller's buffers.
      if (encodedRun === 0) {
        throw new RangeError(
          `attention: a tensor is over this GPU's ${limit} bytes per binding, and no run of batches starts at offsets aligned to ${alignment} bytes (per batch: q ${bytes.q}, k ${bytes.kv}, v ${bytes.v}, out ${bytes.out} bytes); encode fewer batches at a time`,
        );
      }
      for (let batch0 = 0; batch0 < B; batch0 += encodedRun) {
        const n = Math.min(encodedRun, B - batch0);
        const range = (buffer: GPUBuffer, per: number): TensorBinding => ({ buffer, offset: batch0 * per, size: Math.min(Math.ceil((n * per) / 4) * 4, buffer.size - batch0 * per) });
        const writes = timestampWrites && passWrites(timestampWrites, batch0 === 0, batch0 + n >= B);
        kernel.encode(
          encoder,
          { q: range(buffers.q, bytes.q), k: range(buffers.k, bytes.kv), v: range(buffers.v, bytes.v), O: range(buffers.out, bytes.out), ...(buffers.lse ? { lse: range(buffers.lse, bytes.lse) } : {}), ...lengths },
          batch0,
          n,
          writes,
        );
      }
    },
    run: (q, k, v, runOptions) => {
      checkRunOptions(runOptions, problem.cacheLengths !== undefined);
      refuseOverflow(plan.kernel, problem, dtype, q, k, v); // values on which the kernel's float32 could overflow
      const cacheLengths = problem.cacheLengths ? validCacheLengths(runOptions?.cacheLengths ?? problem.cacheLengths, B, problem.dims.Lk) : undefined;
      return runArrays({ plan, kernel, batchesPerRun, cacheLengths, q, k, v });
    },
    dispose,
    destroy() {
      dispose();
    },
  };
}

/**
 * The most batches (at most `most`) whose bytes per tensor are each a multiple of `alignment`, so that every run starts
 * at an offset a binding takes; 0 when even `most` batches do not get there.
 */
export function alignedRun(most: number, bytesPerBatch: readonly number[], alignment: number): number {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  // n · bytes is a multiple of alignment when n is a multiple of alignment / gcd(bytes, alignment).
  const step = bytesPerBatch.reduce((lcm, bytes) => {
    const need = alignment / gcd(bytes, alignment);
    return (lcm * need) / gcd(lcm, need);
  }, 1);
  return Math.floor(most / step) * step;
}

/** The timestamp writes of one of several passes: the beginning on the first, the end on the last. */
function passWrites(writes: GPUComputePassTimestampWrites, first: boolean, last: boolean): GPUComputePassTimestampWrites | undefined {
  if (!first && !last) return undefined;
  return {
    querySet: writes.querySet,
    ...(first && writes.beginningOfPassWriteIndex !== undefined ? { beginningOfPassWriteIndex: writes.beginningOfPassWriteIndex } : {}),
    ...(last && writes.endOfPassWriteIndex !== undefined ? { endOfPassWriteIndex: writes.endOfPassWriteIndex } : {}),
  };
}

/** What both kernels offer: one compute pass for a run of batches, on buffers the caller binds. */
type GpuKernel = Pick<TiledKernel, 'encode' | 'destroy'>;

/** One run of typed arrays through a prepared kernel: what `runArrays` needs, in one object. */
interface ArraysRun {
  /** The plan prepared: the problem, its GPU, the dtype and whether log-sum-exps are computed. */
  readonly plan: AttentionPlan;
  readonly kernel: GpuKernel;
  /** Batches per dispatch, within the GPU's bytes per binding. */
  readonly batchesPerRun: number;
  /** This run's valid keys per batch, checked, when the problem has cache lengths. */
  readonly cacheLengths: readonly number[] | undefined;
  readonly q: TensorData;
  readonly k: TensorData;
  readonly v: TensorData;
}

/** Runs typed arrays through the kernel, `batchesPerRun` batches at a time, on buffers of its own. */
async function runArrays({ plan, kernel, batchesPerRun, cacheLengths, q, k, v }: ArraysRun): Promise<{ out: TensorData; lse?: Float32Array }> {
  const { problem, gpu } = plan;
  const { dtype, lse: withLse } = plan.options;
  const { B, Hq, Hkv, Lq, Lk, d } = problem.dims;
  const dv = valueHeadSize(problem.dims);
  const Type = dtype === 'f16' ? Uint16Array : Float32Array;
  const counts = { q: Hq * Lq * d, kv: Hkv * Lk * d, v: Hkv * Lk * dv, out: Hq * Lq * dv, lse: Hq * Lq };
  for (const [name, data, per] of [['q', q, counts.q], ['k', k, counts.kv], ['v', v, counts.v]] as const) {
    if (!(data instanceof Type)) throw new TypeError(`attention: ${name} is a ${data.constructor.name}; prepared for ${dtype} tensors, give a ${Type.name}`);
    if (data.length !== B * per) throw new RangeError(`attention: ${name} holds ${data.length} values; this problem needs ${B * per}`);
  }
  const { device } = gpu;
  const size = Type.BYTES_PER_ELEMENT;
  const make = (label: string, bytes: number, usage: number): GPUBuffer => device.createBuffer({ label, size: Math.max(16, Math.ceil(bytes / 4) * 4), usage });
  const STORAGE_IN = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
  const STORAGE_OUT = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC;
  const READ = GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST;
  const buffers = {
    q: make('attention q', batchesPerRun * counts.q * size, STORAGE_IN),
    k: make('attention k', batchesPerRun * counts.kv * size, STORAGE_IN),
    v: make('attention v', batchesPerRun * counts.v * size, STORAGE_IN),
    O: make('attention out', batchesPerRun * counts.out * size, STORAGE_OUT),
    ...(withLse ? { lse: make('attention lse', batchesPerRun * counts.lse * 4, STORAGE_OUT) } : {}),
    ...(cacheLengths ? { lengths: make('attention cache lengths', 4 * B, STORAGE_IN) } : {}),
  };
  if (buffers.lengths && cacheLengths) device.queue.writeBuffer(buffers.lengths, 0, Uint32Array.from(cacheLengths));
  const readOut = make('attention out readback', batchesPerRun * counts.out * size, READ);
  const readLse = make('attention lse readback', withLse ? batchesPerRun * counts.lse * 4 : 16, READ);
  const out = new Type(B * counts.out);
  const lse = withLse ? new Float32Array(B * counts.lse) : undefined;
  /** Copies `target.length` elements from a mapped readback buffer. */
  const read = async (from: GPUBuffer, target: TensorData): Promise<void> => {
    const bytes = Math.ceil(target.byteLength / 4) * 4;
    await from.mapAsync(GPUMapMode.READ, 0, bytes);
    new Uint8Array(target.buffer, target.byteOffset, target.byteLength).set(new Uint8Array(from.getMappedRange(0, bytes), 0, target.byteLength));
    from.unmap();
  };
  try {
    for (let batch0 = 0; batch0 < B; batch0 += batchesPerRun) {
      const n = Math.min(batchesPerRun, B - batch0);
      const slice = <A extends TensorData>(data: A, per: number): A => data.subarray(batch0 * per, (batch0 + n) * per) as A;
      const upload = (buffer: GPUBuffer, data: TensorData): void => {
        // writeBuffer copies a multiple of 4 bytes; an odd count of f16 values goes through a padded copy.
        const padded = data.byteLength % 4 === 0 ? data : new Uint8Array(Math.ceil(data.byteLength / 4) * 4);
        if (padded !== data) (padded as Uint8Array).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
        device.queue.writeBuffer(buffer, 0, padded.buffer, padded.byteOffset, padded.byteLength);
      };
      await checked(gpu, `attention on batches ${batch0} to ${batch0 + n - 1}`, () => {
        upload(buffers.q, slice(q, counts.q));
        upload(buffers.k, slice(k, counts.kv));
        upload(buffers.v, slice(v, counts.v));
        const encoder = device.createCommandEncoder({ label: 'attention' });
        kernel.encode(encoder, buffers, batch0, n);
        encoder.copyBufferToBuffer(buffers.O, 0, readOut, 0, Math.ceil((n * counts.out * size) / 4) * 4);
        if (buffers.lse) encoder.copyBufferToBuffer(buffers.lse, 0, readLse, 0, n * counts.lse * 4);
        device.queue.submit([encoder.finish()]);
      });
      await read(readOut, slice(out, counts.out));
      if (lse) await read(readLse, slice(lse, counts.lse));
    }
  } finally {
    for (const buffer of [...Object.values(buffers), readOut, readLse]) buffer.destroy();
  }
  return { out, ...(lse ? { lse } : {}) };
}
