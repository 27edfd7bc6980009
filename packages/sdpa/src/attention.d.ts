/**
 * attention(q, k, v, options): scaled-dot-product attention on typed arrays, with PyTorch's semantics and
 * FlashAttention-2's alignment (@fa/core's sdpa/problem.ts). On a GPU it runs the kernel that fits the problem (f16
 * tensors stay f16 in memory); without one, or for a problem the kernel declines, the
 * plain float32 CPU computation of @fa/reference, and says why in `note`. Values on which that float32 arithmetic could
 * overflow (float32-range.ts, decided in one pass over q, k and v) are computed with the float64 oracle on the CPU,
 * with a note; a kernel named with `kernel` refuses them instead (SdpaOverflowError). The problem is validated once
 * and the kernel planned once (`planProblem`), and that plan is what gets prepared; a caller that planned already
 * (`planAttention`, to ask first whether the GPU runs the problem) hands its plan in with `{ plan }`.
 */
import { type GpuContext, type SdpaDims, type SdpaLayout, type SdpaOptions } from '@fa/core';
import { type AttentionPlan, type GpuKernelId } from './prepare.js';
/** A tensor: float32 values, or f16 values as their bits (dtype 'f16'), and its shape of four dimensions. */
export interface SdpaTensor {
    readonly data: Float32Array | Uint16Array;
    readonly shape: readonly number[];
}
export interface AttentionOptions extends SdpaOptions {
    /** The GPU to run on (@fa/core/node's `acquireNodeGpu`, or `gpuContextFromDevice` in a browser); without it, the CPU. */
    readonly gpu?: GpuContext;
    /** Also return each row's log-sum-exp, [B, Hq, Lq]. */
    readonly returnLse?: boolean;
    /** The GPU kernel (`PrepareOptions.kernel`); by default the one that fits the problem. */
    readonly kernel?: GpuKernelId;
    /**
     * A plan from `planAttention` for these tensors (their dimensions in the plan's layout, Float32Array tensors for
     * dtype 'f32' and Uint16Array for 'f16'; log-sum-exps when planned with `lse`): run on the plan's GPU with nothing
     * validated or chosen again. The plan holds the options, so none is given beside it but, optionally, its `gpu`.
     */
    readonly plan?: AttentionPlan;
}
export interface AttentionResult {
    /** Typed as q, shaped as q with V's head size last: [B, Hq, Lq, dv] ('bhsd') or [B, Lq, Hq, dv] ('bshd'). */
    readonly out: SdpaTensor;
    readonly lse?: Float32Array;
    /**
     * What computed it: a GPU kernel ('attention-fp32', 'attention-matrix', 'attention-decode'), 'cpu-fp32', or
     * 'cpu-fp64' (the float64 oracle, for values on which float32 could overflow).
     */
    readonly impl: string;
    /** Why the GPU kernel did not run it, when a GPU was given, or why it was computed in float64. */
    readonly note?: string;
}
/**
 * The dimensions q, k and v describe in `layout` (dv from v's last dimension, where it differs from d); a one-line
 * SdpaArgumentError when they disagree.
 */
export declare function dimsOf(q: SdpaTensor, k: SdpaTensor, v: SdpaTensor, layout?: SdpaLayout): SdpaDims;
/**
 * Attention of q, k and v: on `options.gpu` with the kernel that fits (or `options.kernel`), on the CPU otherwise or
 * where the kernel declines the problem (with a `note`); with `options.plan`, the plan of `planAttention` on its GPU.
 */
export declare function attention(q: SdpaTensor, k: SdpaTensor, v: SdpaTensor, options?: AttentionOptions): Promise<AttentionResult>;
