export { attention, dimsOf, type AttentionOptions, type AttentionResult, type SdpaTensor } from './attention.js';
export { prepareAttention, gpuUnsupportedReason, type AttentionBuffers, type PrepareOptions, type PreparedAttention, type TensorData } from './prepare.js';
export { ATTENTION_FP32_KERNEL, attentionKernel, type TensorType } from './fp32/attention-fp32.js';
export { floatToHalf, halfToFloat, floatsToHalves, halvesToFloats } from './f16.js';
export { SdpaArgumentError, sdpaProblem, type SdpaBlockMask, type SdpaDims, type SdpaLayout, type SdpaMask, type SdpaOptions, type SdpaProblem } from '@fa/core';
