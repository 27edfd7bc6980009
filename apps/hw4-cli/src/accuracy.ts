/**
 * Whether a float32 rung can meet the tolerance on an input, from statistics gathered while reading it.
 *
 * A score s = q·k/√d is at most ‖q‖·‖k‖/√d (Cauchy–Schwarz). A float32 rung rounds the score, and the partial sums
 * of its dot product, to about ε·|s| (ε = 2⁻²³), and an error δ in the scores moves each output by at most about
 * δ·max|V|. So ε · max‖q‖ · max‖k‖/√d · max|V| estimates the float32 error from above: on uniform data of ranges
 * 3 to 40 and d = 32 to 128 it measured 1.7 to 9 times the real error of seq-flash, and about 3 times that of the
 * GPU rungs on ±40 (±3 data: about 1e-5, far inside 5e-3; ±40: 2e-2 to 4e-2, beyond it). Products
 * beyond float32's range (‖q‖·‖k‖, or N·max|V| in an unnormalized sum) overflow to Inf.
 *
 * The default run moves such batches to the float64 `cpu` rung with a one-line note; a rung named with --impl stops
 * with an error instead of writing a file beyond the tolerance, unless --allow-inaccurate.
 *
 * Rungs that keep their operands as f16 (`reducedRange`) overflow past 65504. A row's norm bounds each of its values,
 * so max‖q‖·log₂(e)/√d (Q is scaled before it is rounded), max‖k‖ and max|v| at most 65504 keep every operand finite;
 * beyond that such a rung is refused, named or not, even with --allow-inaccurate (its output would hold Inf or NaN).
 */
import type { Rung } from '@fa/core';
import { FLOAT32_MAX, type BatchStats, type Shape } from '@fa/io/node';
import { EXIT, ExitError } from './exit-codes.js';

const FLOAT32_EPSILON = 2 ** -23;
/** The largest finite f16. */
export const F16_MAX = 65504;

/** Rungs that compute in float64 and meet the tolerance on any finite input whose answer is representable. */
export const ACCURATE_RUNG_IDS: ReadonlySet<string> = new Set(['cpu']);

export interface Fp32Risk {
  /** Upper bound on |score| over the batches: max‖q‖·max‖k‖/√d. */
  maxScore: number;
  /** Largest |v|. */
  maxAbsV: number;
  /** Estimated float32 error of O (see the file comment). */
  error: number;
  /** A float32 product or sum may overflow to Inf. */
  overflow: boolean;
  /** Some value of Q·log₂(e)/√d, K or V may be beyond f16's range (see the file comment). */
  f16Overflow: boolean;
}

/** The float32 risk of a run of batches; batches whose K or V hold NaN/Inf are skipped (their O is NaN anyway). */
export function fp32Risk(stats: readonly BatchStats[], shape: Shape): Fp32Risk {
  const risk: Fp32Risk = { maxScore: 0, maxAbsV: 0, error: 0, overflow: false, f16Overflow: false };
  for (const s of stats) {
    if (s.nonFiniteKV) continue;
    const product = s.maxQNorm * s.maxKNorm;
    const score = product / Math.sqrt(shape.d);
    risk.maxScore = Math.max(risk.maxScore, score);
    risk.maxAbsV = Math.max(risk.maxAbsV, s.maxAbsV);
    risk.error = Math.max(risk.error, FLOAT32_EPSILON * score * s.maxAbsV);
    if (product > FLOAT32_MAX || s.maxAbsV * shape.N > FLOAT32_MAX) risk.overflow = true;
    if ((s.maxQNorm * Math.LOG2E) / Math.sqrt(shape.d) > F16_MAX || s.maxKNorm > F16_MAX || s.maxAbsV > F16_MAX) risk.f16Overflow = true;
  }
  return risk;
}

/** Whether the risk rules float32 out for this tolerance. */
export function fp32Fails(risk: Fp32Risk, tolerance: number): boolean {
  return risk.overflow || risk.error > tolerance;
}

/** The input's problem for float32, in its own terms (one clause). */
export function describeRisk(risk: Fp32Risk): string {
  if (risk.overflow) {
    return `its values are so large that float32 products overflow (scores up to about ${risk.maxScore.toPrecision(2)}, |V| up to ${risk.maxAbsV.toPrecision(2)}; float32 ends at 3.4e38)`;
  }
  return `its scores reach about ${risk.maxScore.toPrecision(2)} and |V| ${risk.maxAbsV.toPrecision(2)}, so float32 rounding may cost up to about ${risk.error.toPrecision(2)}`;
}

export interface AccuracyChoice {
  /** The rung to compute these batches with. */
  rung: Rung;
  /** A one-line note for the user when the choice differs from what was asked, or the risk was accepted. */
  note?: string;
}

export interface AccuracyPolicy {
  /** The rung picked by --impl or by default. */
  chosen: Rung;
  /** Whether --impl named it (then it is never replaced). */
  named: boolean;
  /** --allow-inaccurate: run a named float32 rung even where it may miss the tolerance. */
  allowInaccurate: boolean;
  tolerance: number;
  /** The accurate rung the default run falls back to. */
  accurate: Rung;
  /**
   * For a default run on a rung of f16 range (`reducedRange`): the fastest rung without that limit, which takes the
   * chunks whose values may leave the range (the float64 `accurate` rung when absent).
   */
  fullRange?: Rung;
}

/**
 * The rung for a run of batches with this risk: the chosen one when it can meet the tolerance (or is accurate), the
 * accurate one instead when the default was chosen; for a named rung an ExitError (exit 2), unless allowInaccurate.
 */
export function chooseForAccuracy(policy: AccuracyPolicy, risk: Fp32Risk): AccuracyChoice {
  const { chosen, tolerance } = policy;
  if (chosen.reducedRange !== undefined && risk.f16Overflow) {
    const why = `this input's values may exceed f16's range (Q·log2(e)/√d, K or V beyond ${F16_MAX})`;
    if (!policy.named && policy.fullRange !== undefined && policy.fullRange.reducedRange === undefined) {
      const next = chooseForAccuracy({ ...policy, chosen: policy.fullRange, fullRange: undefined }, risk);
      return next.rung === policy.fullRange ? { rung: next.rung, note: `hw4-cli: note: ${why}; computing with ${next.rung.id}` } : next;
    }
    if (!policy.named) return { rung: policy.accurate, note: `hw4-cli: note: ${why}; computing with the float64 ${policy.accurate.id} rung` };
    throw new ExitError(
      `rung ${chosen.id} keeps its operands as f16, and ${why}; use --impl ${policy.accurate.id} (float64) or a float32 rung; no output was written`,
      EXIT.usage,
    );
  }
  if (ACCURATE_RUNG_IDS.has(chosen.id) || !fp32Fails(risk, tolerance)) return { rung: chosen };
  if (!policy.named) {
    return { rung: policy.accurate, note: `hw4-cli: note: large values in this input: ${describeRisk(risk)}, beyond the tolerance ${tolerance}; computing with the float64 ${policy.accurate.id} rung` };
  }
  if (policy.allowInaccurate) {
    return { rung: chosen, note: `hw4-cli: note: --allow-inaccurate: ${chosen.id} computes in float32 and this input may exceed the tolerance ${tolerance}: ${describeRisk(risk)}` };
  }
  throw new ExitError(
    `rung ${chosen.id} computes in float32 and cannot promise the tolerance ${tolerance} on this input: ${describeRisk(risk)}; ` +
      `use --impl ${policy.accurate.id} (float64) or leave --impl out, or add --allow-inaccurate to run it anyway; no output was written`,
    EXIT.usage,
  );
}
