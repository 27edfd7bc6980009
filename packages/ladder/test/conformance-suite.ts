/**
 * The conformance suite: every rung on every case it is given (from cases.ts) against the float64 oracle. `npm test`
 * runs it on one case (conformance-smoke.test.ts: every rung once, at the head size the software GPU compiles
 * fastest); `npm run test:conformance` on every case, in two files, the cases of small and of large head sizes
 * (small-heads.conformance.test.ts, large-heads.conformance.test.ts), each in its own process, at the same time
 * (vitest.config.ts): the software GPU compiles each pipeline on one core, so two processes compile on two. A pipeline
 * belongs to one head size, so the two files never compile the same one. Each GPU rung runs on a device of its own
 * and head size (`deviceOfItsOwn`), which compiles each of its plan classes once. Each test's name starts with the
 * rung's id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeEntryPoints, pipelineCounts, unavailableReason, type RunEnv } from '@fa/core';
import { checkConformance, IMPLEMENTATIONS, type ConformanceCase } from '../src/index.js';
import { conformanceEnv, deviceOfItsOwn } from './gpu-env.js';

/**
 * Per case: the software GPU compiles each new pipeline (a rung's kernel with one set of override constants) at its
 * first dispatch, up to minutes for the largest kernels with its shader cache empty, more while other processes use
 * the cores. The device keeps what it compiled, so only a rung's first case of each plan class pays for it.
 */
const CASE_TIMEOUT_MS = 360_000;

/**
 * The most plan classes (sets of override constants, one compiled pipeline per entry point each) a rung may take at
 * one head size over the cases: N = 1 and one N besides, for the rungs whose tiles are balanced over N (cases.ts). On
 * the software GPU each class costs seconds to minutes of compilation (docs/ci.md); a case that brings a new class to
 * every rung fails here instead of slowing CI down unnoticed.
 */
export const MAX_PLAN_CLASSES_PER_HEAD_SIZE = 2;

/** The case `npm test` runs every rung on: N a multiple of no tile, B > 1, at d = 16 (docs/ci.md: the cheapest to compile). */
export const SMOKE_CASE = 'uniform B=2 N=77 d=16';

/**
 * Declares the suite on `cases`. `planClasses`: also check each GPU rung's plan classes per head size (worth it only
 * where a head size has several cases).
 */
export function describeConformance(cases: readonly ConformanceCase[], { planClasses = true }: { planClasses?: boolean } = {}): void {
  let env: RunEnv;
  let release: () => void = () => undefined;
  /** Pipelines compiled and requests served from them, over the rungs' devices. */
  const total = { compiled: 0, reused: 0 };

  beforeAll(async () => {
    ({ env, release } = await conformanceEnv());
  });
  afterAll(() => {
    if (env.gpu) {
      const checks = env.gpu.report.boundsChecks === false ? 'off' : 'on';
      console.log(`conformance (${cases.length} cases, bounds checks ${checks}): ${total.compiled} pipelines compiled, ${total.reused} reused`);
    }
    release();
  });

  describe.each(IMPLEMENTATIONS.map((rung) => ({ rung, id: rung.id })))('rung $id', ({ rung }) => {
    /**
     * A GPU rung's devices, one per head size (`deviceOfItsOwn`): each compiles the plan classes of one d, so none
     * compiles more than a few pipelines.
     */
    const devices = new Map<number, Promise<{ env: RunEnv; release: () => void }>>();
    const envFor = async ({ shape }: ConformanceCase): Promise<RunEnv> => {
      if (rung.kind !== 'gpu') return env;
      let device = devices.get(shape.d);
      if (!device) devices.set(shape.d, (device = deviceOfItsOwn(env)));
      return (await device).env;
    };
    afterAll(async () => {
      for (const device of devices.values()) {
        const { env: own, release: destroy } = await device;
        if (own.gpu) {
          const counts = pipelineCounts(own.gpu);
          total.compiled += counts.compiled.length;
          total.reused += counts.reused;
        }
        destroy();
      }
    });

    it.for(cases.map((c) => ({ c, name: c.name })))(`${rung.id}: $name`, { timeout: CASE_TIMEOUT_MS }, async ({ c }, context) => {
      const missing = unavailableReason(rung, env);
      if (missing !== undefined) {
        context.skip(`${rung.id} cannot run here: ${missing}`);
        return;
      }
      const result = await checkConformance(rung, c, await envFor(c));
      if (result.declined !== undefined) {
        await context.annotate(`declined: ${result.declined}`);
        context.skip(`${rung.id} declines ${c.name}: ${result.declined}`);
        return;
      }
      expect(result.pass, result.detail).toBe(true);
    });

    // A CPU rung compiles nothing: the test is not declared for it (a skip would say nothing).
    if (!planClasses || rung.kind !== 'gpu') return;
    it(`${rung.id}: compiles at most ${MAX_PLAN_CLASSES_PER_HEAD_SIZE} plan classes per head size`, async (context) => {
      if (devices.size === 0) {
        context.skip(`${rung.id} ran no case here: ${unavailableReason(rung, env) ?? 'it declined every case'}`);
        return;
      }
      const entryPoints = new Set((rung.kernels ?? []).flatMap((kernel) => computeEntryPoints(kernel.code))).size;
      for (const [d, device] of devices) {
        const { gpu } = (await device).env;
        const compiled = gpu ? pipelineCounts(gpu).compiled : [];
        expect(compiled.length, `${rung.id} at d = ${d} compiled:\n${compiled.join('\n')}`).toBeLessThanOrEqual(
          MAX_PLAN_CLASSES_PER_HEAD_SIZE * Math.max(1, entryPoints),
        );
      }
    });
  });
}
