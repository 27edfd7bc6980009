import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unavailableReason, type RunEnv } from '@fa/core';
import { CONFORMANCE_CASES, checkConformance, LADDER } from '../src/index.js';
import { conformanceEnv } from './gpu-env.js';

let env: RunEnv;
let release: () => void = () => undefined;

beforeAll(async () => {
  ({ env, release } = await conformanceEnv());
});
afterAll(() => {
  release();
});

/**
 * Per case: the software GPU compiles each new set of kernel constants (a case's shape) at its first dispatch, 20-40 s
 * for the largest kernels with its shader cache empty, several times that while other test files use both cores.
 */
const CASE_TIMEOUT_MS = 360_000;

describe.each(LADDER.map((rung) => ({ rung, id: rung.id })))('rung $id', ({ rung }) => {
  it.for(CONFORMANCE_CASES.map((c) => ({ c, name: c.name })))('$name', { timeout: CASE_TIMEOUT_MS }, async ({ c }, context) => {
    const missing = unavailableReason(rung, env);
    if (missing !== undefined) {
      context.skip(`${rung.id} cannot run here: ${missing}`);
      return;
    }
    const result = await checkConformance(rung, c, env);
    if (result.declined !== undefined) {
      await context.annotate(`declined: ${result.declined}`);
      context.skip(`${rung.id} declines ${c.name}: ${result.declined}`);
      return;
    }
    expect(result.pass, result.detail).toBe(true);
  });
});
