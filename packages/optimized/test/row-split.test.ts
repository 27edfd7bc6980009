/**
 * Rung 18's plan: how many invocations share a row pair for each head size, and the reasons it declines; and its
 * output against the float64 oracle at head sizes whose d/4 the row group does not divide (padded rows of K_j, V_j).
 * Rung 19 (split-keys, row-split's kernel over S key ranges): how many ranges for a grid, and its output with one
 * range, where it writes O itself instead of through the combine pass. Rungs 20-22 (lean-loop: 16 keys per step
 * where H = 1; four-rows: four rows per group, H doubled; split-softmax: each invocation of a pair the softmax of one
 * row, m and ℓ of the other from its partner) on the same padded and single-range cases, with H = 1, 2 and 4. (The
 * conformance suite checks every rung on the common awkward cases, where the key-splitting rungs use several ranges.)
 */
import { afterAll, describe, expect, it } from 'vitest';
import { canRun, keySplits, rowSplitTilesFor, runAll, type GpuContext, type RungDefinition, type RunEnv } from '@fa/core';
import { compareOutputs, generateInput, type Shape } from '@fa/io';
import { attentionOracle, seqAttention } from '@fa/reference';
import { conformanceEnv, deviceOfItsOwn } from '../../ladder/test/gpu-env.js';
import { pretendEnv } from '../../ladder/test/pretend-gpu.js';
import { fourRowsTilesFor } from '../src/21-four-rows/four-rows.js';
import { fourRows, leanLoop, rowSplit, splitKeys, splitSoftmax } from '../src/index.js';
import { keysPerStep } from '../src/plans/lean-loop.js';

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

const gpuOf = (subgroupMinSize: number, workgroupBytes = 49152): GpuContext =>
  pretendEnv({ subgroupMinSize, limits: { maxComputeWorkgroupStorageSize: workgroupBytes } }).gpu as GpuContext;

describe('row-split', () => {
  it('splits a row over the fewest invocations whose share fits 8 vec4 registers', () => {
    const H = (d: number) => {
      const tiles = rowSplitTilesFor({ B: 1, N: 4096, d }, gpuOf(32));
      return typeof tiles === 'string' ? tiles : tiles.H;
    };
    expect([4, 16, 32, 36, 44, 64, 80, 96, 100, 128].map(H)).toEqual([1, 1, 1, 2, 2, 2, 4, 4, 4, 4]);
    expect(rowSplitTilesFor({ B: 1, N: 4096, d: 64 }, gpuOf(32))).toEqual({ H: 2, BC: 32, WG: 128, prefetch: false });
    expect(rowSplitTilesFor({ B: 1, N: 128, d: 32 }, gpuOf(32))).toEqual({ H: 1, BC: 16, WG: 64, prefetch: true });
  });

  it('declines with the reason: subgroups too small for the split, too little workgroup memory, no subgroups', () => {
    expect(rowSplitTilesFor({ B: 1, N: 64, d: 128 }, gpuOf(2))).toMatch(/d = 128 does not split into at most 2 parts/);
    expect(rowSplitTilesFor({ B: 1, N: 64, d: 64 }, gpuOf(32, 8192))).toMatch(/16\.0 KiB of workgroup memory, over this GPU's 8\.00 KiB/);
    expect(canRun(rowSplit, { B: 1, N: 64, d: 36 }, pretendEnv({}))).toBe(true);
    expect(canRun(rowSplit, { B: 1, N: 64, d: 64 }, pretendEnv({ features: [] }))).toMatch(/subgroups/);
  });
});

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
    'and the rungs built on it are within 2× the fp32 sequential rung of the oracle, $label',
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

describe('split-keys', () => {
  it('splits the keys only while the grid is short of 640 workgroups, into at most 8 ranges of at least one tile', () => {
    expect(keySplits(160, 64)).toBe(4); // 10×2048×64 on an H100: 160 row blocks
    expect(keySplits(512, 1024)).toBe(2);
    expect(keySplits(640, 1024)).toBe(1);
    expect(keySplits(13600, 8)).toBe(1);
    expect(keySplits(1, 1000)).toBe(8);
    expect(keySplits(1, 3)).toBe(3);
  });

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
    'with one key range (a grid of 640 row blocks) writes O itself, within 2× the fp32 sequential rung, $label',
    async ({ shape }) => {
      const baseline = await errorOf(seqAttention, shape);
      for (const rung of [splitKeys, leanLoop, fourRows, splitSoftmax]) {
        const error = await errorOf(rung, shape);
        expect(error, `${rung.id} ${error}, seq-attention ${baseline}`).toBeLessThanOrEqual(Math.max(2 * baseline, 1e-6));
      }
    },
  );
});

describe('lean-loop and four-rows', () => {
  it('lean-loop steps over 16 keys only where a row group is one invocation (no shuffles)', () => {
    expect([1, 2, 4].map(keysPerStep)).toEqual([16, 8, 8]);
  });

  it('four-rows splits a row over the fewest invocations whose share fits 4 vec4 registers, and declines past the subgroup', () => {
    const H = (d: number) => {
      const tiles = fourRowsTilesFor({ B: 1, N: 4096, d }, gpuOf(32));
      return typeof tiles === 'string' ? tiles : tiles.H;
    };
    expect([4, 16, 20, 32, 36, 64, 68, 100, 128].map(H)).toEqual([1, 1, 2, 2, 4, 4, 8, 8, 8]);
    expect(fourRowsTilesFor({ B: 1, N: 64, d: 128 }, gpuOf(4))).toMatch(/d = 128 does not split into at most 4 parts of at most 4 vec4s/);
    expect(canRun(fourRows, { B: 1, N: 64, d: 64 }, pretendEnv({ features: [] }))).toMatch(/subgroups/);
  });
});
