/**
 * The conformance suite: every rung on every case it is given (from cases.ts) against the float64 oracle. Two test
 * files run it on the cases of small and of large head sizes, each in its own process on its own GPU device, at the
 * same time (vitest.config.ts): the software GPU compiles each pipeline on one core, so two devices compile on two.
 * A pipeline belongs to one head size, so the two files never compile the same one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeEntryPoints, pipelineCounts, unavailableReason, type RunEnv } from '@fa/core';
import { checkConformance, LADDER, type ConformanceCase } from '../src/index.js';
import { conformanceEnv } from './gpu-env.js';

/**
 * Per case: the software GPU compiles each new pipeline (a rung's kernel with one set of override constants) at its
 * first dispatch, up to minutes for the largest kernels with its shader cache empty, more while other processes use
 * the cores. The device keeps what it compiled, so only a rung's first case of each plan class pays for it.
 */
const CASE_TIMEOUT_MS = 360_000;

/**
 * The most plan classes (sets of override constants, one compiled pipeline per entry point each) a rung may take over
 * the cases: the head sizes, N = 1 and, for rungs whose tiles are balanced over N, one N per head size (two at
 * d = 32). On the software GPU each class costs seconds to minutes of compilation, so the cases keep to these
 * (cases.ts); a new case that brings a new class to every rung fails here instead of slowing CI down unnoticed.
 */
export const MAX_PLAN_CLASSES = 8;

export function describeConformance(cases: readonly ConformanceCase[]): void {
  let env: RunEnv;
  let release: () => void = () => undefined;

  beforeAll(async () => {
    ({ env, release } = await conformanceEnv());
  });
  afterAll(() => {
    if (env.gpu) {
      const { compiled, reused } = pipelineCounts(env.gpu);
      console.log(`conformance (${cases.length} cases): ${compiled.length} pipelines compiled, ${reused} reused`);
    }
    release();
  });

  describe.each(LADDER.map((rung) => ({ rung, id: rung.id })))('rung $id', ({ rung }) => {
    /** Pipelines the device had compiled when this rung's cases began. */
    let before = 0;
    beforeAll(() => {
      before = env.gpu ? pipelineCounts(env.gpu).compiled.length : 0;
    });

    it.for(cases.map((c) => ({ c, name: c.name })))('$name', { timeout: CASE_TIMEOUT_MS }, async ({ c }, context) => {
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

    it.runIf(rung.kind === 'gpu')(`compiles at most ${MAX_PLAN_CLASSES} plan classes over the cases`, (context) => {
      if (!env.gpu || unavailableReason(rung, env) !== undefined) {
        context.skip(`${rung.id} cannot run here`);
        return;
      }
      const compiled = pipelineCounts(env.gpu).compiled.slice(before);
      const entryPoints = new Set((rung.kernels ?? []).flatMap((kernel) => computeEntryPoints(kernel.code))).size;
      expect(compiled.length, `${rung.id} compiled:\n${compiled.join('\n')}`).toBeLessThanOrEqual(MAX_PLAN_CLASSES * Math.max(1, entryPoints));
    });
  });
}
