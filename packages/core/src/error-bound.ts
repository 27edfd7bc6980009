/**
 * A proven upper bound on the error of attention computed in floating point, from the rung's rounding model and
 * statistics of the input (the largest row norms of Q and K and the largest |v|). docs/error-bound.md derives it.
 *
 * The bound covers every rounding the model names, whichever way each one goes, including inputs built so that they
 * all go the same way. It holds for any kernel whose arithmetic fits its `RoundingModel`:
 * - each score is a dot product of d terms summed in any order (with or without fused multiply-adds), then multiplied
 *   by at most a few rounded constants (1/√d, log₂e): at most `scoreChain` roundings (d + 8 covers that);
 * - each weight is exp or exp2 of a rounded difference between a score and a running maximum, computed to WGSL's
 *   stated accuracy (3 + 2|x| ULP), the maximum lagging the true running maximum by at most `lag` (base 2);
 * - O and ℓ are running sums of the weights (times v for O) that share every rescale factor, each rescale factor
 *   computed like a weight; at most `rescales` factors on the path of any key's weight to the result, and at most
 *   `sumChain` roundings of one running sum (additions, rescale products, the merge of key ranges) along that path;
 * - one final division (or a reciprocal and a product).
 */
import type { Shape } from '@fa/io';

/** Unit roundoff of float32 with round-to-nearest: half the distance from 1 to the next float32. */
const FLOAT32_UNIT_ROUNDOFF = 2 ** -24;

/** How a rung rounds, in the terms of the bound above (all counts for one shape). */
export interface RoundingModel {
  /** Relative error of one operation: FLOAT32_UNIT_ROUNDOFF for IEEE float32 arithmetic. */
  readonly unitRoundoff: number;
  /** Most roundings in the computation of one score. */
  readonly scoreChain: number;
  /**
   * Most roundings of additions on the path of one key's term (p·v, or p) into the final O or ℓ: the additions of the
   * running sum it joins and of every sum it is later added into (a step's sum, the running sum, the merge of ranges).
   */
  readonly sumPath: number;
  /** Most rescale factors (exp of a difference of maxima, or a merge weight) applied to one key's term. */
  readonly rescales: number;
  /**
   * How far (base 2) a weight's exponent may exceed 0 because the running maximum moves only when passed by more
   * than this (a lazy rescale's τ); 0 when it always moves. With lag > 0 there are also at most range/lag + 2 rescales.
   */
  readonly lag: number;
}

/** What the bound needs to know about the input (one batch, or the worst over several). */
export interface ErrorBoundInput {
  /** Largest Euclidean norm of a row of Q. */
  readonly maxQNorm: number;
  /** Largest Euclidean norm of a row of K. */
  readonly maxKNorm: number;
  /** Largest |v|. */
  readonly maxAbsV: number;
}

/** The bound's terms, each an upper bound on absolute error in O; `total` is their sum. */
export interface ErrorBound {
  /** Bound on |score| (natural units): max‖q‖·max‖k‖/√d. */
  readonly maxScore: number;
  /** From the perturbed weights (scores, exponentials, rescale factors): max|v|·(e^D − 1). */
  readonly weights: number;
  /** From rounding the running sums of O and ℓ: max|v|·2γ(sumChain)/(1 − γ(sumChain)). */
  readonly sums: number;
  /** From the final division and from weights that underflow to 0. */
  readonly rest: number;
  readonly total: number;
}

/** γ(n) = n·u/(1 − n·u): the relative error of n roundings of unit roundoff u (Infinity once n·u ≥ 1). */
function gamma(n: number, u: number): number {
  const nu = n * u;
  return nu < 1 ? nu / (1 - nu) : Number.POSITIVE_INFINITY;
}

/** The smallest positive normal float32: weights below it may be flushed to 0. */
const FLOAT32_MIN_NORMAL = 2 ** -126;

/** A proven bound on max |Ô − O| over one batch (docs/error-bound.md, section "The bound"). */
export function attentionErrorBound(input: ErrorBoundInput, { N, d }: Pick<Shape, 'N' | 'd'>, model: RoundingModel): ErrorBound {
  const u = model.unitRoundoff;
  const V = input.maxAbsV;
  const S = (input.maxQNorm * input.maxKNorm) / Math.sqrt(d);
  // Scores: |ŝ − s| ≤ γ(scoreChain)·Σ|q_x k_x|/√d ≤ γ·S (Cauchy–Schwarz), in natural or base-2 units alike.
  const scoreError = gamma(model.scoreChain, u) * S;
  // Exponents in base 2: |x| ≤ 2·log₂e·(S + scoreError) + lag; the subtraction rounds once, exp2 is good to
  // (3 + 2|x|) ULP ≤ (3 + 2|x|)·2u relative; a relative error η is a log-perturbation of at most η/(1 − η).
  const maxExponent = 2 * Math.LOG2E * (S + scoreError) + model.lag;
  const logPerturbation = (eta: number): number => (eta < 1 ? eta / (1 - eta) : Number.POSITIVE_INFINITY);
  const weightExp = logPerturbation((3 + 2 * maxExponent) * 2 * u) + u * maxExponent * Math.LN2;
  // Rescale factors: each one computed like a weight, their exponents summing to at most the range of the maximum;
  // with a lag, the maximum moves by more than the lag each time.
  const rescales = model.lag > 0 ? Math.min(model.rescales, Math.ceil(maxExponent / model.lag) + 2) : model.rescales;
  const rescaleExp = logPerturbation(rescales * 6 * u) + (2 * 2 + 1) * u * maxExponent;
  // D bounds the spread of log(ŵ_j/w_j) over keys: two score errors and two exponentials (the key's and the
  // maximum's), and the rescale factors one key's path carries and another's does not.
  const D = 2 * (scoreError + weightExp) + rescaleExp;
  const weights = V * Math.expm1(D);
  // Each rescale product is one more rounding of the running sums.
  const g = gamma(model.sumPath + rescales, u);
  const sums = (V * 2 * g) / (1 - g);
  const rest = V * (3 * u * (1 + 2 * g) + 2 * N * (rescales + 1) * FLOAT32_MIN_NORMAL);
  const total = weights + sums + rest;
  return { maxScore: S, weights, sums, rest, total: Number.isNaN(total) ? Number.POSITIVE_INFINITY : total };
}

/**
 * The model of a float32 kernel that adds each key's term into one running sum per row (FlashAttention-2's loop), or
 * normalizes O after each tile (FlashAttention-1's, four roundings per tile), with tiles of `keyTile` keys, one or two
 * rescale factors per tile, and `ranges` key ranges merged at the end.
 */
export function sequentialModel({ N, d }: Pick<Shape, 'N' | 'd'>, keyTile: number, ranges = 1, lag = 0): RoundingModel {
  const tiles = Math.ceil(N / keyTile);
  return { unitRoundoff: FLOAT32_UNIT_ROUNDOFF, scoreChain: d + 8, sumPath: N + 4 * tiles + ranges + 2, rescales: 2 * tiles + 1, lag };
}

/**
 * The model of a float32 kernel that sums each step's terms P̃·V (and P̃) in a fresh accumulator before adding it to
 * the running O (and ℓ): a term passes through at most `stepTerms` additions in its step's sum, then one addition into
 * the running sum per step after it (at most `steps`), then the merge of `ranges` key ranges.
 */
export function blockedModel(d: number, stepTerms: number, steps: number, ranges: number, lag: number): RoundingModel {
  return { unitRoundoff: FLOAT32_UNIT_ROUNDOFF, scoreChain: d + 8, sumPath: stepTerms + steps + ranges + 3, rescales: steps + ranges + 1, lag };
}
