/**
 * One conformance check: a rung on one case against the float64 oracle, with the fp32 baseline (seq-attention)
 * error beside it. A GPU or fp32 rung passes when it meets the format's 5e-3 contract and stays within 2× the
 * baseline's error (or 1e-6 absolute, whichever is larger, for cases where the baseline is nearly exact).
 */
import { canRun, runAll, type RunEnv, type Rung, type RungDefinition } from '@fa/core';
import { compareOutputs, formatComparison, generateInput, type Comparison } from '@fa/io';
import { attentionOracle, seqAttention } from '@fa/reference';
import type { ConformanceCase } from './cases.js';

export const ERROR_RATIO_LIMIT = 2;
export const ERROR_FLOOR = 1e-6;

export interface ConformanceResult {
  rung: string;
  case: string;
  /** Why the rung declined the case, when it did. */
  declined?: string;
  comparison?: Comparison;
  baseline?: Comparison;
  pass: boolean;
  /** What a person reads on failure. */
  detail: string;
}

export async function checkConformance(rung: Rung, testCase: ConformanceCase, env: RunEnv): Promise<ConformanceResult> {
  const { shape } = testCase;
  const allowed = canRun(rung, shape, env);
  if (allowed !== true) return { rung: rung.id, case: testCase.name, declined: allowed, pass: true, detail: `declined: ${allowed}` };
  const input = generateInput(testCase);
  const oracle = attentionOracle(input, shape);
  const outputOf = async (r: RungDefinition): Promise<Float32Array> => {
    const runner = await r.prepare(env, shape);
    try {
      return (await runAll(runner, input, shape)).output;
    } finally {
      await runner.dispose();
    }
  };
  const comparison = compareOutputs(await outputOf(rung), oracle, shape);
  const baseline = rung.id === seqAttention.id ? comparison : compareOutputs(await outputOf(seqAttention), oracle, shape);
  const limit = Math.max(ERROR_RATIO_LIMIT * baseline.maxAbsError, ERROR_FLOOR);
  const withinBaseline = comparison.maxAbsError <= limit;
  const pass = comparison.pass && withinBaseline;
  const detail = [
    `${rung.id} on ${testCase.name}: ${formatComparison(comparison)}`,
    `  fp32 baseline (seq-attention) max error ${baseline.maxAbsError.toExponential(3)}; limit ${limit.toExponential(3)}${withinBaseline ? '' : ' EXCEEDED'}`,
  ].join('\n');
  return { rung: rung.id, case: testCase.name, comparison, baseline, pass, detail };
}
