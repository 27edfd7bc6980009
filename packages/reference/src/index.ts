export { attentionOracle, attentionOracleRows, sampleRows, type RowRef } from './oracle.js';
export { seqAttention, seqAttentionKernel } from './seq-attention.js';
export { seqFlash, seqFlashKernel, SEQ_FLASH_BLOCKS, type FlashBlocks } from './seq-flash.js';
export { cpu } from './cpu.js';
export { attendRowBlock } from './cpu-kernel.js';
export { singleThreadRunner, type BatchKernel } from './single-thread.js';
