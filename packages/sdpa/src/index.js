export { attention, dimsOf } from './attention.js';
/** Whether an implementation's float32 arithmetic could overflow on given values (a proven bound), and its refusal. */
export { float32OverflowReason, GPU_SCORE_LIMIT, SdpaOverflowError, tensorRange } from './float32-range.js';
export { chooseKernel, DECODE_MAX_LQ, gpuUnsupportedReason, planAttention, prepareAttention } from './prepare.js';
export { ATTENTION_DECODE_KERNEL, DECODE_MAX_ROWS, TUNING_KEYS } from './decode/attention-decode.js';
export { ATTENTION_FP32_KERNEL, attentionKernel } from './fp32/attention-fp32.js';
/** Score and mask functions in WGSL: their check (one line at the caller's line) and their values for the CPU computations. */
export { checkModFunctions } from './mods/mod-source.js';
export { evaluateMods } from './mods/mod-host.js';
export { ATTENTION_MATRIX_KERNEL } from './matrix/attention-matrix.js';
/** Why a GPU cannot run the matrix kernel at all (subgroup matrices, f16, subgroups of 32), or undefined when it can. */
export { matrixUnavailable } from '@fa/core';
export { floatToHalf, halfToFloat, floatsToHalves, halvesToFloats } from './f16.js';
export { SdpaArgumentError, sdpaProblem, validCacheLengths, MASK_MOD_SIGNATURE, SCORE_MOD_SIGNATURE } from '@fa/core';
export { APPEND_CACHE_KERNEL, lengthsAfter, prepareCacheAppend } from './cache/append-cache.js';
export { checkCase as checkSdpaCase, GROUPS as SDPA_CASE_GROUPS } from './conformance.js';
/** The product's float32 kernel as hw4-cli runs it on the hw4 format's layout. */
export { hw4AttentionFp32, hw4Placement, hw4Problem } from './hw4-adapter.js';
//# sourceMappingURL=index.js.map