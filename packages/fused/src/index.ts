export { fused } from './05-fused/fused.js';
export { fusedMaxsmem } from './06-fused-maxsmem/fused-maxsmem.js';
export { fusedSplitQ } from './07-fused-split-q/fused-split-q.js';
// The family's tile plans, also those of the optimized rungs 8-12 (copies of rung 7's kernel).
export { largestTilesPlan, splitQPlan, splitQTileStudy, tileBytes, tilesPlan, type Tiles } from './tiles.js';
