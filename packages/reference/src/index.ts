/**
 * @fa/reference: the float64 oracle and the sequential CPU rungs, for Node and browsers. The `cpu` rung (worker
 * threads) is in '@fa/reference/node'.
 */
export { attentionOracle, attentionOracleRows, compareRows, outputRows, sampleRows, type RowRef } from './oracle.js';
export { seqAttention, seqAttentionKernel } from './seq-attention.js';
export { seqFlash, seqFlashKernel, SEQ_FLASH_BLOCKS, type FlashBlocks } from './seq-flash.js';
export { attendRowBlock } from './cpu-kernel.js';
export { singleThreadRunner, type BatchKernel } from './single-thread.js';
export { sdpaFloat16Plain, sdpaFloat32, sdpaOracle, sdpaOracleRow } from './sdpa.js';
export { sdpaFloat32Async, sdpaOracleAsync } from './sdpa-async.js';
export { heldScore, modIndex, sdpaScores, type ModValues } from './sdpa-mods.js';
