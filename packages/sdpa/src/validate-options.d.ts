/**
 * Run-time checks of @fa/sdpa's options, for the callers the types do not reach (JavaScript, casts): PrepareOptions
 * (planAttention, prepareAttention, chooseKernel, gpuUnsupportedReason), AttentionOptions (attention, with or without
 * a plan), the options of a prepared attention's `run`, and CacheAppendOptions (prepareCacheAppend). Each checks its
 * own keys and values and leaves those of SdpaOptions to @fa/core's checkSdpaOptions; a refusal is one
 * SdpaArgumentError line naming the option, what was given and what to give. Nothing here touches the GPU, so a wrong
 * option is refused before anything compiles.
 */
import { type GpuContext, type SdpaOptions } from '@fa/core';
import type { AttentionOptions } from './attention.js';
import type { CacheAppendOptions } from './cache/append-cache.js';
import type { PrepareOptions } from './prepare.js';
/** The GPU argument: a GpuContext (@fa/core/node's acquireNodeGpu, or gpuContextFromDevice in a browser). */
export declare function checkGpu(gpu: unknown, name?: string): asserts gpu is GpuContext;
/** PrepareOptions: SdpaOptions and lse, dtype, kernel, maxBindingBytes, tuning. */
export declare function checkPrepareOptions(options: unknown): asserts options is PrepareOptions | undefined;
/** AttentionOptions: SdpaOptions and gpu, returnLse, kernel (and plan, which `checkPlannedAttentionOptions` checks). */
export declare function checkAttentionOptions(options: unknown): asserts options is AttentionOptions | undefined;
/**
 * AttentionOptions with a plan: the plan and, optionally, the GPU; any other option is refused, since the plan holds
 * them (whether the plan is one planAttention made, attention checks).
 */
export declare function checkPlannedAttentionOptions(options: object): asserts options is AttentionOptions;
/** The options of a prepared attention's run: cacheLengths, only where it was prepared with cache lengths. */
export declare function checkRunOptions(options: unknown, preparedWithCacheLengths: boolean): asserts options is {
    readonly cacheLengths?: ArrayLike<number>;
} | undefined;
/** CacheAppendOptions: layout and dtype. */
export declare function checkCacheAppendOptions(options: unknown): asserts options is CacheAppendOptions | undefined;
/** attention()'s options, checked: the SdpaOptions sdpaProblem takes, and those with the kernel prepareAttention takes. */
export declare function attentionOptionsOf(options: unknown): {
    readonly sdpa: SdpaOptions;
    readonly prepare: PrepareOptions;
};
