/**
 * Every GPU rung through the CLI, each run a process of its own that compiles the rung's kernel cold (on the software
 * GPU, seconds to minutes per rung): against the float64 oracle, and byte for byte the same when the same input streams
 * in runs of 2, 2 and 1 batches. Part of `npm run test:conformance`; `npm test` runs the CLI's other GPU tests
 * (cli-gpu.test.ts) and every rung once through the library (packages/ladder/test/conformance-smoke.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, tempFolder } from './cli-helpers.js';
import { gpuMissing, gpuRungs, toleranceOf } from './cli-gpu-helpers.js';

const dir = tempFolder();

describe.skipIf(gpuMissing !== undefined)(`every GPU rung through hw4-cli${gpuMissing ? ` (skipped: ${gpuMissing})` : ''}`, () => {
  // d = 16: the head size the software GPU compiles fastest (docs/ci.md; at d = 32 lean-loop and split-softmax take
  // minutes each with Dawn's bounds checks on). The rungs at every head size are the ladder's conformance files.
  // N = 77, a multiple of no tile. One batch is 77·16·3 floats (14,784 bytes), so 0.03 MiB (31,457 bytes) holds two:
  // five batches stream in runs of 2, 2 and 1. Two processes per rung, each compiling cold.
  const input = join(dir, 'in.bin');
  cli(['gen', '--shape', '5,77,16', '--seed', '4', input, '-q']);

  it.each(gpuRungs.map((r) => r.id))('--impl %s matches the float64 oracle far inside 5e-3, and gives the same bytes when the input streams in runs of 2, 2 and 1 batches', (impl) => {
    const whole = join(dir, `${impl}.out`);
    const run = cli(['--impl', impl, input, whole]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/GPU \d+\.\d+ s/);
    const check = cli(['check', input, whole, '--tolerance', toleranceOf(impl)]);
    expect(check.code, check.stderr).toBe(0);
    const split = join(dir, `${impl}-split.out`);
    const streamed = cli(['--impl', impl, '-q', '--chunk-mb', '0.03', input, split]);
    expect(streamed.code, streamed.stderr).toBe(0);
    expect(readFileSync(split)).toEqual(readFileSync(whole));
  });
});
