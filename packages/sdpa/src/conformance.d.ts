/**
 * The awkward cases of the attention kernels and the check each one gets against the float64 oracle: the Node suite
 * (the software GPU), the browser suite (headless Chromium) and `hw4-cli sdpa --conformance` (any GPU, every kernel
 * it has) run them. They are grouped so that they share few pipelines: each distinct set of kernel constants is one
 * compile, minutes on a software GPU with a cold shader cache.
 */
import { type GpuContext, type SdpaDims, type SdpaOptions } from '@fa/core';
import type { TensorType } from './kernel-support.js';
import { type AttentionPlan, type GpuKernelId } from './prepare.js';
/** Deterministic values in [−range, range). */
export declare function values(count: number, seed: number, range?: number): Float32Array;
/** q, k and v of the dimensions (v of V's head size dv), deterministic from `seed`. */
export declare function tensors(dims: SdpaDims, seed: number): {
    q: Float32Array;
    k: Float32Array;
    v: Float32Array;
};
/** Largest |a − b|; equal values (−∞ and −∞ included) count 0, a non-finite difference Infinity. */
export declare function maxAbs(a: ArrayLike<number>, b: ArrayLike<number>): number;
/** float32's most negative value, −3.4028235e38: what Hugging Face's models add for padding. */
export declare const FLOAT32_LOWEST = -3.4028234663852886e+38;
/**
 * An additive [Lq, Lk] mask of values near float32's limits, row by row (rows past 6 take ordinary values in ±3):
 * 0: float32's most negative value on every key; 1: −3e38 on every key (a constant leaves the softmax unchanged, and
 * float32 absorbs the scores into it, as the plain computation does: equal weights); 2: +3e38 on keys 3 and Lk − 2 (they
 * share the row); 3: −∞ on key 7, float32's most negative value on key 9, 0 elsewhere; 4: −3e38 and −1e38 on alternate
 * keys (only the −1e38 keys count); 5: −1e30 on every key; 6: float32's most negative value on even keys, 0 on odd.
 */
export declare function limitsMask(Lq: number, Lk: number, seed?: number): Float32Array;
export interface Case {
    name: string;
    dims: SdpaDims;
    options?: SdpaOptions;
    /** The kernel the case runs on (the default choice otherwise). */
    kernel?: GpuKernelId;
    /**
     * Rows appended to each batch's cache on the GPU (`prepareCacheAppend`) before the attention, in the same encoder,
     * which then reads the advanced lengths: the case's cacheLengths are those before the append.
     */
    append?: number;
}
export declare const GROUPS: {
    name: string;
    cases: Case[];
}[];
export interface CaseCheck {
    /** The kernel that ran the case. */
    impl: string;
    /**
     * Largest error of O against float64, and the most it may be: 2× the plain computation's at the tensors' precision
     * (float32: `sdpaFloat32`, or 1e-6; f16: `sdpaFloat16Plain` with O rounded to f16, or 2^-11 of the largest |O|).
     */
    error: number;
    limit: number;
    /**
     * The same for the log-sum-exps, except that a row whose log-sum-exp passes ±2^20 (a mask's huge values) is allowed
     * 2^-20 of its size beyond that: the kernels' base-2 arithmetic (and their map of mask values past ±5.9e37) costs a
     * few float32 units in the last place there, where the plain computation adds the mask in natural units (`lseError`).
     */
    lseError: number;
    lseLimit: number;
}
/** Largest |L − L_exact| over the rows, less 2^-20·|L_exact| where |L_exact| > 2^20 (see CaseCheck); −∞ and −∞ count 0. */
export declare function lseError(got: ArrayLike<number>, exact: ArrayLike<number>): number;
export interface CheckOptions {
    /** The kernel to run it on instead of the case's own (or the default choice). */
    readonly kernel?: GpuKernelId;
    /** The tensors' element type (default f32): f16 tensors are the case's values rounded to f16. */
    readonly dtype?: TensorType;
    /**
     * The case's plan, from `planAttention(gpu, c.dims, { ...c.options, lse: true, dtype, kernel })` (a caller that
     * asked first whether the kernel runs the case): prepared as it is, not planned again. Its dtype and kernel are
     * the check's; `kernel` and `dtype` are then left out.
     */
    readonly plan?: AttentionPlan;
}
/** Runs one case on a GPU kernel and measures it against the oracle and the plain computation. */
export declare function checkCase(gpu: GpuContext, c: Case, how?: CheckOptions): Promise<CaseCheck>;
/** A copy of `buffer`'s first `bytes` bytes, read back. */
export declare function readBack(device: GPUDevice, buffer: GPUBuffer, bytes: number): Promise<ArrayBuffer>;
