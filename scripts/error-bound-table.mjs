#!/usr/bin/env node
// How often ordinary data passes the proven float32 error bound at the bench shapes: for uniform ±1, uniform ±3 and
// standard normal data, the share of batches (up to 64 sampled per shape) whose bound exceeds the 5e-3 tolerance, for
// the rounding models of the default GPU rungs (lean-loop, split-softmax: each step's P̃V summed apart), of the other
// float32 GPU rungs (keys added one by one, tiles of 16) and of seq-attention. A batch over the tolerance is computed by
// the float64 cpu rung in a default run. Needs the packages built (npm run build). Prints a Markdown table.
// Usage: node scripts/error-bound-table.mjs
import { attentionErrorBound, blockedModel, sequentialModel } from '../packages/core/dist/index.js';
import { batchStatsRange } from '../packages/io/dist/index.js';

const TOLERANCE = 5e-3;
const SHAPES = [[13600, 128, 32], [10, 2048, 64], [500, 2048, 64], [4, 32768, 32], [2, 32768, 64], [26, 32768, 64], [4, 8192, 128]];
const SAMPLED = 64;
const LAG = 8;

let state = 12345;
const uniform01 = () => {
  state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
  return state / 2 ** 32;
};
const KINDS = {
  'uniform ±1': () => 2 * uniform01() - 1,
  'uniform ±3': () => 6 * uniform01() - 3,
  normal: () => Math.sqrt(-2 * Math.log(1 - uniform01())) * Math.cos(2 * Math.PI * uniform01()),
};

const rows = [];
for (const [B, N, d] of SHAPES) {
  const shape = { B, N, d };
  const models = {
    'lean-loop, split-softmax': blockedModel(d, d <= 32 ? 16 : 8, Math.ceil(N / 8), 1, LAG),
    'other float32 GPU rungs': sequentialModel(shape, 16, 1, LAG),
    'seq-attention': sequentialModel(shape, N),
  };
  for (const [kind, draw] of Object.entries(KINDS)) {
    const batch = new Float32Array(3 * N * d);
    const sampled = Math.min(B, SAMPLED);
    const over = Object.fromEntries(Object.keys(models).map((m) => [m, 0]));
    const worst = Object.fromEntries(Object.keys(models).map((m) => [m, 0]));
    for (let b = 0; b < sampled; b++) {
      for (let i = 0; i < batch.length; i++) batch[i] = draw();
      const [stats] = batchStatsRange(batch, 0, 1, N, d);
      for (const [name, model] of Object.entries(models)) {
        const bound = attentionErrorBound(stats, shape, model).total;
        if (bound > TOLERANCE) over[name] += 1;
        worst[name] = Math.max(worst[name], bound);
      }
    }
    const cells = Object.keys(models).map((m) => `${Math.round((100 * over[m]) / sampled)}% (${worst[m].toExponential(1)})`);
    rows.push(`| ${B}×${N}×${d} | ${kind} | ${sampled} | ${cells.join(' | ')} |`);
  }
}
console.log(`| shape | data | batches | lean-loop, split-softmax | other float32 GPU rungs | seq-attention |`);
console.log(`|---|---|---|---|---|---|`);
console.log(rows.join('\n'));
