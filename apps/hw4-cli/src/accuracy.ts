/**
 * Whether a float32 rung can meet the tolerance on an input, from statistics gathered while reading it.
 *
 * Each rung that computes in float32 declares how it rounds (`rounding`, a RoundingModel), and @fa/core's
 * `attentionErrorBound` turns that model and the input's largest row norms of Q and K and largest |v| into a proven
 * upper bound on the error of O (docs/error-bound.md derives it: the dot-product bound γ·Σ|q_x k_x| on each score, the
 * exponentials at WGSL's stated accuracy, the rescale factors, and the rounding of the running sums of O and ℓ, all
 * taken the worst way at once). A rung with no model, or whose bound passes the tolerance, may miss it. Products beyond
 * float32's range (‖q‖·‖k‖, or N·max|V| in an unnormalized sum) overflow to Inf.
 *
 * The default run moves such batches to the next rung that can promise the tolerance (the float64 `cpu` rung at the
 * end) with a one-line note; a rung named with --impl stops with an error instead of writing a file beyond the
 * tolerance, unless --allow-inaccurate.
 *
 * Rungs that keep their operands as f16 (`reducedRange`) overflow past 65504. A row's norm bounds each of its values,
 * so max‖q‖·log₂(e)/√d (Q is scaled before it is rounded), max‖k‖ and max|v| at most 65504 keep every operand finite;
 * beyond that such a rung is refused, named or not, even with --allow-inaccurate (its output would hold Inf or NaN).
 */
import { attentionErrorBound, type ErrorBound, type RunEnv, type Rung } from '@fa/core';
import { FLOAT32_MAX, type BatchStats, type Shape } from '@fa/io/node';
import { EXIT, ExitError } from './exit-codes.js';

/** The largest finite f16. */
export const F16_MAX = 65504;

/** Rungs that compute in float64 and meet the tolerance on any finite input whose answer is representable. */
export const ACCURATE_RUNG_IDS: ReadonlySet<string> = new Set(['cpu']);

export interface Fp32Risk {
  readonly shape: Shape;
  /** Statistics of the batches computed (those whose K and V are finite: the others' O is NaN anyway). */
  readonly batches: readonly BatchStats[];
  /** Upper bound on |score| over the batches: max‖q‖·max‖k‖/√d. */
  readonly maxScore: number;
  /** Largest |v|. */
  readonly maxAbsV: number;
  /** A float32 product or sum may overflow to Inf. */
  readonly overflow: boolean;
  /** Some value of Q·log₂(e)/√d, K or V may be beyond f16's range (see the file comment). */
  readonly f16Overflow: boolean;
}

/** The float32 risk of a run of batches; batches whose K or V hold NaN/Inf are skipped (their O is NaN anyway). */
export function fp32Risk(stats: readonly BatchStats[], shape: Shape): Fp32Risk {
  const batches = stats.filter((s) => !s.nonFiniteKV);
  let maxScore = 0;
  let maxAbsV = 0;
  let overflow = false;
  let f16Overflow = false;
  for (const s of batches) {
    const product = s.maxQNorm * s.maxKNorm;
    maxScore = Math.max(maxScore, product / Math.sqrt(shape.d));
    maxAbsV = Math.max(maxAbsV, s.maxAbsV);
    if (product > FLOAT32_MAX || s.maxAbsV * shape.N > FLOAT32_MAX) overflow = true;
    if ((s.maxQNorm * Math.LOG2E) / Math.sqrt(shape.d) > F16_MAX || s.maxKNorm > F16_MAX || s.maxAbsV > F16_MAX) f16Overflow = true;
  }
  return { shape, batches, maxScore, maxAbsV, overflow, f16Overflow };
}

/**
 * The proven bound on the error of `rung` over these batches (the worst batch's), or undefined when the rung declares
 * no rounding model for this shape here.
 */
export function errorBound(rung: Rung, risk: Fp32Risk, env: RunEnv): ErrorBound | undefined {
  const model = rung.rounding?.(risk.shape, env);
  if (model === undefined) return undefined;
  let worst: ErrorBound = { maxScore: 0, weights: 0, sums: 0, rest: 0, total: 0 };
  for (const s of risk.batches) {
    const bound = attentionErrorBound(s, risk.shape, model);
    if (bound.total > worst.total) worst = bound;
  }
  return worst;
}

/** The input's problem for a float32 rung, in its own terms (one clause). */
export function describeRisk(risk: Fp32Risk, bound?: ErrorBound): string {
  if (risk.overflow) {
    return `its values are so large that float32 products overflow (scores up to about ${risk.maxScore.toPrecision(2)}, |V| up to ${risk.maxAbsV.toPrecision(2)}; float32 ends at 3.4e38)`;
  }
  if (bound === undefined) return 'no bound on its float32 rounding error is proven for this rung';
  return `its scores reach about ${risk.maxScore.toPrecision(2)} and |V| ${risk.maxAbsV.toPrecision(2)}, so float32 rounding may cost up to ${bound.total.toPrecision(2)} (a proven bound)`;
}

export interface AccuracyChoice {
  /** The rung to compute these batches with. */
  rung: Rung;
  /** A one-line note for the user when the choice differs from what was asked, or the risk was accepted. */
  note?: string;
}

export interface AccuracyPolicy {
  /** Where the rungs run (their rounding models may depend on the adapter's plan). */
  env: RunEnv;
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
  if (ACCURATE_RUNG_IDS.has(chosen.id)) return { rung: chosen };
  const bound = risk.overflow ? undefined : errorBound(chosen, risk, policy.env);
  if (bound !== undefined && bound.total <= tolerance) return { rung: chosen };
  if (!policy.named) {
    // A default rung without a proven bound here hands over silently to the fastest rung of full range that has one.
    if (policy.fullRange !== undefined && policy.fullRange.reducedRange === undefined) {
      return chooseForAccuracy({ ...policy, chosen: policy.fullRange, fullRange: undefined }, risk);
    }
    return { rung: policy.accurate, note: `hw4-cli: note: ${chosen.id} cannot promise the tolerance ${tolerance} on this input: ${describeRisk(risk, bound)}; computing with the float64 ${policy.accurate.id} rung` };
  }
  if (policy.allowInaccurate) {
    return { rung: chosen, note: `hw4-cli: note: --allow-inaccurate: ${chosen.id} computes in float32 and this input may exceed the tolerance ${tolerance}: ${describeRisk(risk, bound)}` };
  }
  throw new ExitError(
    `rung ${chosen.id} computes in float32 and cannot promise the tolerance ${tolerance} on this input: ${describeRisk(risk, bound)}; ` +
      `use --impl ${policy.accurate.id} (float64) or leave --impl out, or add --allow-inaccurate to run it anyway; no output was written`,
    EXIT.usage,
  );
}
