// The optimized rungs, one folder each (NN-id/{id.wgsl, id.ts}); their order on the ladder is the ladder table's.
export { vec4 } from './08-vec4/vec4.js';
export { restructure } from './09-restructure/restructure.js';
export { coalesced } from './10-coalesced/coalesced.js';
export { lmRegisters } from './11-lm-registers/lm-registers.js';
export { bankFree } from './12-bank-free/bank-free.js';
export { qRegisters } from './13-q-registers/q-registers.js';
export { registerTiles } from './14-register-tiles/register-tiles.js';
export { prefetch } from './15-prefetch/prefetch.js';
export { rowSplit } from './18-row-split/row-split.js';
export { splitKeys } from './19-split-keys/split-keys.js';
export { leanLoop } from './20-lean-loop/lean-loop.js';
export { fourRows } from './21-four-rows/four-rows.js';
export { splitSoftmax } from './22-split-softmax/split-softmax.js';
// lean-loop's plan, for experiments that vary its override constants over it.
export { leanLoopPlanFor } from './plans/lean-loop.js';
