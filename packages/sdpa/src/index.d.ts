export { attention, dimsOf, type AttentionOptions, type AttentionResult, type SdpaTensor } from './attention.js';
/** Whether an implementation's float32 arithmetic could overflow on given values (a proven bound), and its refusal. */
export { float32OverflowReason, GPU_SCORE_LIMIT, SdpaOverflowError, tensorRange, type SdpaImplementation, type TensorRange } from './float32-range.js';
export { chooseKernel, DECODE_MAX_LQ, gpuUnsupportedReason, planAttention, prepareAttention, type AttentionBuffers, type AttentionPlan, type GpuKernelId, type PlannedOptions, type PrepareOptions, type PreparedAttention, type TensorData } from './prepare.js';
export { ATTENTION_DECODE_KERNEL, DECODE_MAX_ROWS, TUNING_KEYS, type DecodeTuning } from './decode/attention-decode.js';
export { ATTENTION_FP32_KERNEL, attentionKernel } from './fp32/attention-fp32.js';
/** Score and mask functions in WGSL: their check (one line at the caller's line) and their values for the CPU computations. */
export { checkModFunctions } from './mods/mod-source.js';
export { evaluateMods } from './mods/mod-host.js';
export { ATTENTION_MATRIX_KERNEL } from './matrix/attention-matrix.js';
/** Why a GPU cannot run the matrix kernel at all (subgroup matrices, f16, subgroups of 32), or undefined when it can. */
export { matrixUnavailable } from '@fa/core';
export type { TensorType } from './kernel-support.js';
export { floatToHalf, halfToFloat, floatsToHalves, halvesToFloats } from './f16.js';
export { SdpaArgumentError, sdpaProblem, validCacheLengths, type SdpaBlockMask, type SdpaDims, type SdpaLayout, type SdpaMask, type SdpaOptions, type SdpaProblem, type GpuModBuffer, type SdpaModBuffer, type SdpaMods, MASK_MOD_SIGNATURE, SCORE_MOD_SIGNATURE } from '@fa/core';
export { APPEND_CACHE_KERNEL, lengthsAfter, prepareCacheAppend, type CacheAppendBuffers, type CacheAppendDims, type CacheAppendOptions, type PreparedCacheAppend } from './cache/append-cache.js';
export { checkCase as checkSdpaCase, GROUPS as SDPA_CASE_GROUPS, type Case as SdpaCase, type CaseCheck as SdpaCaseCheck, type CheckOptions as SdpaCheckOptions } from './conformance.js';
/** The product's float32 kernel as hw4-cli runs it on the hw4 format's layout. */
export { hw4AttentionFp32, hw4Placement, hw4Problem } from './hw4-adapter.js';
