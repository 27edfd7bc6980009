import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAll, type RunEnv } from '@fa/core';
import { compareOutputs, generateInput } from '@fa/io';
import { attentionOracle } from '@fa/reference';
import { findRung } from '../src/index.js';
import { conformanceEnv } from './gpu-env.js';

let env: RunEnv;
let release: () => void = () => undefined;

beforeAll(async () => {
  ({ env, release } = await conformanceEnv());
});
afterAll(() => {
  release();
});

describe('a GPU runner sized to a chunk', () => {
  it.for(['naive', 'prefetch'])('%s allocates for maxBatchesPerRun batches and still runs every batch right', async (id, context) => {
    const rung = findRung(id);
    if (!rung || !env.gpu || rung.supports({ B: 5, N: 33, d: 32 }, env) !== true) {
      context.skip(`${id} cannot run here`);
      return;
    }
    const shape = { B: 5, N: 33, d: 32 };
    const input = generateInput({ shape, seed: 3 });
    const runner = await rung.prepare(env, shape, { maxBatchesPerRun: 2 });
    try {
      expect(runner.maxBatchesPerRun).toBe(2);
      const { output } = await runAll(runner, input, shape);
      expect(compareOutputs(output, attentionOracle(input, shape), shape).pass).toBe(true);
    } finally {
      await runner.dispose();
    }
  });
});
