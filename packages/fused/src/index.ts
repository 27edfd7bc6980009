export { fused, fusedMaxsmem, fusedSplitQ, fusedTilesFor } from './fused.js';
export * from './tiles.js';
