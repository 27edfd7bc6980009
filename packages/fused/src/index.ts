export { fused, FUSED_KERNEL, fusedPlan } from './05-fused/fused.js';
export { fusedMaxsmem } from './06-fused-maxsmem/fused-maxsmem.js';
export { fusedSplitQ, largestTilesPlan, splitQPlan } from './07-fused-split-q/fused-split-q.js';
export * from './tiles.js';
