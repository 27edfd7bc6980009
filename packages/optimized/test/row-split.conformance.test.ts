/**
 * Rungs 18-22 on the GPU against the float64 oracle where the conformance cases do not reach: rows padded at head
 * sizes whose d/4 the row group does not divide (K_j, V_j rows padded), for row-split (18) and the rungs built on it
 * (split-keys 19, over several key ranges through combine; lean-loop 20, 16 keys per step where H = 1; four-rows 21,
 * four rows per group, H doubled; split-softmax 22, each invocation of a pair the softmax of one row), with H = 1, 2
 * and 4; and split-keys and the rungs above it with one key range, where they write O themselves. Part of
 * `npm run test:conformance` (each rung and head size compiles cold on the software GPU); the plans are
 * row-split.test.ts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { canRun, runAll, type RungDefinition, type RunEnv } from '@fa/core';
import { compareOutputs, generateInput, type Shape } from '@fa/io';
import { attentionOracle, seqAttention } from '@fa/reference';
import { conformanceEnv, deviceOfItsOwn } from '../../ladder/test/gpu-env.js';
import { fourRows, leanLoop, rowSplit, splitKeys, splitSoftmax } from '../src/index.js';

const { env, release } = await conformanceEnv();
/** A device for each GPU rung and head size (`deviceOfItsOwn`), made at its first shape and kept for the others. */
const devices = new Map<string, Promise<{ env: RunEnv; release: () => void }>>();
afterAll(async () => {
  for (const device of devices.values()) (await device).release();
  release();
});

async function envOf(rung: RungDefinition, { d }: Shape): Promise<RunEnv> {
  if (rung.kind !== 'gpu') return env;
  let device = devices.get(`${rung.id} ${d}`);
  if (!device) devices.set(`${rung.id} ${d}`, (device = deviceOfItsOwn(env)));
  return (await device).env;
}

/** The output of `rung` on uniform ±3 data, compared with the float64 oracle. */
async function errorOf(rung: RungDefinition, shape: Shape) {
  const input = generateInput({ shape, seed: shape.N * 101 + shape.d });
  const runner = await rung.prepare(await envOf(rung, shape), shape);
  try {
    const { output } = await runAll(runner, input, shape);
    return compareOutputs(output, attentionOracle(input, shape), shape).maxAbsError;
  } finally {
    await runner.dispose();
  }
}

const probe = canRun(rowSplit, { B: 1, N: 64, d: 64 }, env);
describe.skipIf(probe !== true)(`row-split with padded rows${probe === true ? '' : ` (skipped: ${probe})`}`, () => {
  const padded: Shape[] = [
    { B: 2, N: 77, d: 36 }, // H = 2, rows of 9 vec4s padded to 10 (four-rows: H = 4, padded to 12)
    { B: 2, N: 33, d: 100 }, // H = 4, rows of 25 vec4s padded to 28 (four-rows: H = 8, padded to 32)
    { B: 3, N: 77, d: 20 }, // H = 1 with 16 keys per step in lean-loop, N not a multiple of 16 (four-rows: H = 2, 5 → 6)
  ];
  it.each(padded.map((shape) => ({ shape, label: `B=${shape.B} N=${shape.N} d=${shape.d}` })))(
    'row-split, split-keys, lean-loop, four-rows and split-softmax are within 2× the fp32 sequential rung of the oracle, $label',
    async ({ shape }) => {
      const baseline = await errorOf(seqAttention, shape);
      // split-keys and the rungs above it run the same padded rows over several key ranges here, through combine.
      for (const rung of [rowSplit, splitKeys, leanLoop, fourRows, splitSoftmax]) {
        const error = await errorOf(rung, shape);
        expect(error, `${rung.id} ${error}, seq-attention ${baseline}`).toBeLessThanOrEqual(Math.max(2 * baseline, 1e-6));
      }
    },
  );
});

describe('split-keys and the rungs above it', () => {
  const probeSplit = canRun(splitKeys, { B: 1, N: 64, d: 64 }, env);
  // 640 batches of one row block each: one key range. d = 20, 36, 100: H = 1, 2, 4 (with subgroups of at least 4), the
  // head sizes of the padded cases above, so that each rung runs the pipeline compiled for them (the number of key
  // ranges is a uniform).
  const singleRange: Shape[] = [
    { B: 640, N: 10, d: 20 },
    { B: 640, N: 9, d: 36 },
    { B: 640, N: 5, d: 100 },
  ];
  it.skipIf(probeSplit !== true).each(singleRange.map((shape) => ({ shape, label: `B=${shape.B} N=${shape.N} d=${shape.d}` })))(
    `split-keys, lean-loop, four-rows and split-softmax with one key range (a grid of 640 row blocks) write O themselves, within 2× the fp32 sequential rung, $label${probeSplit === true ? '' : ` (skipped: ${probeSplit})`}`,
    async ({ shape }) => {
      const baseline = await errorOf(seqAttention, shape);
      for (const rung of [splitKeys, leanLoop, fourRows, splitSoftmax]) {
        const error = await errorOf(rung, shape);
        expect(error, `${rung.id} ${error}, seq-attention ${baseline}`).toBeLessThanOrEqual(Math.max(2 * baseline, 1e-6));
      }
    },
  );
});
