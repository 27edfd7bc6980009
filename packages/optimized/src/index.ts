// The optimized rungs, one folder each (NN-id/{id.wgsl, id.ts}); their order on the ladder is the ladder table's.
export { vec4 } from './08-vec4/vec4.js';
export { restructure } from './09-restructure/restructure.js';
export { coalesced } from './10-coalesced/coalesced.js';
export { lmRegisters } from './11-lm-registers/lm-registers.js';
export { bankFree } from './12-bank-free/bank-free.js';
export { qRegisters } from './13-q-registers/q-registers.js';
export { registerTiles, registerTilesFor, registerTilesPlan, type RegisterTiles } from './14-register-tiles/register-tiles.js';
export { prefetch } from './15-prefetch/prefetch.js';
export {
  rowSplit,
  rowSplitTilesFor,
  rowSplitPlan,
  rowGroupTilesFor,
  rowSplitTiles,
  rowSplitBytes,
  ROW_SPLIT_LAYOUT,
  type RowSplitTiles,
  type RowGroupLayout,
} from './18-row-split/row-split.js';
export { splitKeys, keySplits } from './19-split-keys/split-keys.js';
export { leanLoop, keysPerStep } from './20-lean-loop/lean-loop.js';
export { fourRows, fourRowsTilesFor } from './21-four-rows/four-rows.js';
export { splitSoftmax } from './22-split-softmax/split-softmax.js';
