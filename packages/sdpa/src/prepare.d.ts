/**
 * Attention planned once and prepared once for one problem (dimensions and options) on one GPU. `planAttention`
 * validates the problem and chooses the kernel and its plan (nothing compiled); `prepareAttention` compiles that plan
 * and uploads the masks, then runs on typed arrays (upload, dispatch, read back) or encodes into the caller's command
 * encoder on the caller's buffers, as often as wanted, until `dispose`.
 */
import { type GpuContext, type SdpaDims, type SdpaOptions, type SdpaProblem } from '@fa/core';
import { type DecodePlan, type DecodeTuning } from './decode/attention-decode.js';
import { type TiledPlan } from './tiled-host.js';
import type { TensorType } from './kernel-support.js';
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
export declare const DECODE_MAX_LQ = 16;
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
type ChosenKernel = {
    readonly kernel: 'attention-decode';
    readonly kernelPlan: DecodePlan;
} | {
    readonly kernel: TiledPlan['id'];
    readonly kernelPlan: TiledPlan;
};
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
    run(q: TensorData, k: TensorData, v: TensorData, options?: {
        readonly cacheLengths?: ArrayLike<number>;
    }): Promise<{
        out: TensorData;
        lse?: Float32Array;
    }>;
    /** Frees the kernel's own buffers; the caller's buffers and device are left alone. */
    dispose(): void;
    /** @deprecated use dispose() */
    destroy(): void;
}
/**
 * Validates the problem once (the GPU, the dimensions and every option, each refused in one SdpaArgumentError line)
 * and chooses the kernel and its plan for it on `gpu`, compiling nothing: the plan, which `prepareAttention(gpu, plan)`
 * compiles and `attention(q, k, v, { plan })` runs without validating or choosing again; or the reason no kernel can
 * run this problem here (the kernel named in `options`, or by default the decode kernel where it runs, then for f16
 * tensors attention-matrix where it runs, and attention-fp32 otherwise).
 */
export declare function planAttention(gpu: GpuContext, dims: SdpaDims, options?: PrepareOptions): AttentionPlan | string;
/**
 * planAttention on a problem the caller validated, with options it checked (attention() checks its own once): the
 * options resolved, the kernel chosen and planned, nothing checked again.
 */
export declare function planProblem(gpu: GpuContext, problem: SdpaProblem, options: PrepareOptions): AttentionPlan | string;
/** `plan` when planAttention made it; an SdpaArgumentError naming `where` otherwise (an object copied from a plan included). */
export declare function plannedOnly(plan: unknown, where: string): AttentionPlan;
/**
 * The kernel `prepareAttention` would compile for this problem here (nothing is compiled); undefined when none can run
 * it (`gpuUnsupportedReason` says why). Each call validates and plans: to ask and then prepare, plan once with
 * `planAttention` and hand the plan to `prepareAttention(gpu, plan)`.
 */
export declare function chooseKernel(gpu: GpuContext, dims: SdpaDims, options?: PrepareOptions): GpuKernelId | undefined;
/**
 * Why the GPU kernel cannot run this problem here, or undefined when it can. Each call validates and plans: to ask
 * and then prepare, plan once with `planAttention` and hand the plan to `prepareAttention(gpu, plan)`.
 */
export declare function gpuUnsupportedReason(gpu: GpuContext, dims: SdpaDims, options?: PrepareOptions): string | undefined;
/**
 * Compiles the kernel of a plan from `planAttention(gpu, dims, options)` on the GPU it was made for, validating and
 * choosing nothing again: the form for a caller that asks first whether the GPU runs a problem (planAttention answers
 * with the plan or the reason), then prepares. The other form, `prepareAttention(gpu, dims, options)`, plans for
 * itself. Either throws UnsupportedShapeError when one batch is over the GPU's bytes per binding; `dispose()` frees
 * what it made.
 */
export declare function prepareAttention(gpu: GpuContext, plan: AttentionPlan): Promise<PreparedAttention>;
/**
 * Validates the problem and plans its kernel (`planAttention`, once), then compiles it on `gpu`; throws
 * UnsupportedShapeError with the reason when no kernel can run the problem here, or one batch is over the GPU's bytes
 * per binding. `prepareAttention(gpu, plan)` takes a plan made beforehand instead. `dispose()` frees what it made.
 */
export declare function prepareAttention(gpu: GpuContext, dims: SdpaDims, options?: PrepareOptions): Promise<PreparedAttention>;
/**
 * The most batches (at most `most`) whose bytes per tensor are each a multiple of `alignment`, so that every run starts
 * at an offset a binding takes; 0 when even `most` batches do not get there.
 */
export declare function alignedRun(most: number, bytesPerBatch: readonly number[], alignment: number): number;
export {};
