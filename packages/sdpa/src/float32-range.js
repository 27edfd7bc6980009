/**
 * Float32 overflow from finite inputs: whether an implementation's float32 arithmetic can overflow on these q, k, v
 * and this scale, decided before it runs from a few numbers read in one pass over the tensors, with a proof that holds
 * for every way its roundings can go (docs/sdpa.md, "Large values"). Where it can, `attention` computes in float64 on
 * the CPU (the oracle of @fa/reference) with a note, or, for a named kernel, refuses with SdpaOverflowError.
 *
 * An additive mask enters only the CPU path's decision (s + M_ij is one float32 addition there); the GPU kernels take
 * the mask in base 2 with values past ±2^126 (in base 2) brought monotonically within ±(2^127 − 2^110) by the host
 * (tiled-host.ts, `maskBase2`), so no finite mask value can make them overflow, as the proof below counts. A softcap
 * bounds the scores by c, ALiBi adds at most max|slope|·(Lq + Lk) to their range, and sinks enter the softmax beside
 * them: each is counted below. A score function's results are held within ±2^64, and counted as a score of that size.
 */
import { MOD_SCORE_LIMIT, SdpaArgumentError, valueHeadSize } from '@fa/core';
import { sdpaOracleAsync } from '@fa/reference';
import { floatsToHalves, halfToFloat, halvesToFloats } from './f16.js';
import { ATTENTION_FP32_KERNEL } from './fp32/attention-fp32.js';
import { ATTENTION_MATRIX_KERNEL } from './matrix/attention-matrix.js';
/** The largest finite float32, (2 − 2^-23)·2^127. */
export const FLOAT32_MAX = 3.4028234663852886e38;
/** The largest finite f16. */
export const F16_MAX = 65504;
/** The most |s|·log2(e) the GPU kernels take: their masked scores and sentinels are sized around it (see below). */
export const GPU_SCORE_LIMIT = 2 ** 100;
/**
 * A problem refused because an implementation's float32 arithmetic could overflow on its values: one line, naming the
 * problem and the fix (an SdpaArgumentError, so callers that report bad arguments report it too).
 */
export class SdpaOverflowError extends SdpaArgumentError {
    impl;
    reason;
    name = 'SdpaOverflowError';
    constructor(
    /** The implementation that refused, or undefined when the result itself is beyond float32 (a log-sum-exp). */
    impl, 
    /** What could overflow, in terms of the input. */
    reason, message = `${impl ?? 'attention'} could overflow float32 on these values: ${reason}; leave the implementation to the default choice (which computes such values in float64) or scale the inputs down`) {
        super(message);
        this.impl = impl;
        this.reason = reason;
    }
}
let halfTable;
/** The float32 value of every f16 bit pattern, made once. */
function halves() {
    halfTable ??= Float32Array.from({ length: 65536 }, (_, bits) => halfToFloat(bits));
    return halfTable;
}
/** Largest |x| and largest row norm of `data` in rows of d, over finite values; float64 sums (no overflow: d·(3.4e38)² ≪ 1.8e308). */
function rowsRange(data, d) {
    const table = data instanceof Uint16Array ? halves() : undefined;
    let maxNorm2 = 0;
    let maxAbs = 0;
    for (let row = 0; row < data.length; row += d) {
        let norm2 = 0;
        for (let x = row; x < row + d; x++) {
            const value = table ? table[data[x]] : data[x];
            const a = Math.abs(value);
            if (!(a <= FLOAT32_MAX))
                continue; // NaN, ±∞
            norm2 += a * a;
            if (a > maxAbs)
                maxAbs = a;
        }
        if (norm2 > maxNorm2)
            maxNorm2 = norm2;
    }
    return { maxNorm: Math.sqrt(maxNorm2), maxAbs };
}
/** One pass over each tensor (f32 values, or f16 bits): the numbers `float32OverflowReason` needs; v in rows of dv (default d). */
export function tensorRange(q, k, v, d, dv = d) {
    const qr = rowsRange(q, d);
    const kr = rowsRange(k, d);
    return { maxQNorm: qr.maxNorm, maxAbsQ: qr.maxAbs, maxKNorm: kr.maxNorm, maxAbsK: kr.maxAbs, maxAbsV: rowsRange(v, dv).maxAbs };
}
/** γ_n = nu/(1 − nu), u = 2^-24: the relative error of n float32 roundings (Infinity once nu ≥ 1). */
function gamma(n) {
    const nu = n * 2 ** -24;
    return nu < 1 ? nu / (1 - nu) : Number.POSITIVE_INFINITY;
}
/** Where float32's rounding to nearest passes its largest value, 2^128 − 2^103: anything smaller rounds to at most F. */
const ROUNDS_TO_FLOAT32_MAX = 2 ** 128 - 2 ** 103;
/** The largest |M_ij| of an additive mask's finite values (one pass over the mask as given, before broadcasting); 0 without one. */
function largestMaskValue(problem) {
    const mask = problem.mask;
    if (mask?.kind !== 'additive')
        return 0;
    let largest = 0;
    for (let e = 0; e < mask.data.length; e++) {
        const a = Math.abs(mask.data[e]);
        if (a > largest && a !== Number.POSITIVE_INFINITY)
            largest = a;
    }
    return largest;
}
/** The most ALiBi takes from a score: max|slope_h|·(Lq + Lk), above every distance |i + Lk − Lq − j|; 0 without slopes. */
function alibiRange(problem) {
    const slopes = problem.alibiSlopes;
    if (!slopes)
        return 0;
    let largest = 0;
    for (const slope of slopes)
        largest = Math.max(largest, Math.abs(slope));
    return largest * (problem.dims.Lq + problem.dims.Lk);
}
/** The largest |sink_h|; 0 without sinks. */
function largestSink(problem) {
    let largest = 0;
    for (const sink of problem.sinks ?? [])
        largest = Math.max(largest, Math.abs(sink));
    return largest;
}
/** τ of a kernel's lazy rescale (its `const TAU`): a weight P̃ = 2^(s − m_i) may reach 2^τ. */
function tauOf(code, label) {
    const match = /const TAU: f32 = ([0-9.]+);/.exec(code);
    if (!match)
        throw new Error(`${label} declares no const TAU; the overflow bound needs it`);
    return Number(match[1]);
}
/** τ of the tiled kernels, read from their source: the decode kernel and the CPU path move m_i at every new maximum. */
const LAZY_TAU = { 'attention-fp32': tauOf(ATTENTION_FP32_KERNEL.code, 'attention-fp32'), 'attention-matrix': tauOf(ATTENTION_MATRIX_KERNEL.code, 'attention-matrix') };
/**
 * Why `impl`'s float32 arithmetic could overflow on values of this range, or undefined when it cannot (a proof, not an
 * estimate). Notation: F = 3.4028235e38, the largest float32; u = 2^-24; Q̄, K̄ the largest row norms of q and k,
 * Q_a, K_a, V̄ the largest |q|, |k|, |v|; c = |scale|; L = Lk; τ the weight bound of a lazy rescale (P̃ ≤ 2^τ);
 * C the softcap; A = max|slope_h|·(Lq + Lk), the most ALiBi takes from a score (every distance |i + Lk − Lq − j| is
 * below Lq + Lk); Σ̄ = max|sink_h|.
 * A float32 sum or product of terms whose magnitudes add up to at most X, computed with at most n roundings on the path
 * of any term (in any order), is at most X·(1 + γ_n), γ_n = nu/(1 − nu) (Higham, §3.1); with n = L + d + 64 (d the
 * larger of q's and v's head sizes, d and dv), which covers every path below, that is finite while
 * X ≤ F_n = F / max(2, 1 + γ_n), F/2 up to 2^23 − d − 64 keys. Hence:
 *
 * 1. Scores. Every partial sum of a dot product Σ_x q_x k_x, in any order, with or without fused multiply-adds, is at
 *    most Σ|q_x k_x| ≤ Q̄K̄ (Cauchy–Schwarz) before rounding. The CPU path sums q·k, then multiplies by the scale: it
 *    needs Q̄K̄ ≤ F_n and c·Q̄K̄ ≤ F_n. The GPU kernels first multiply q by c·log2(e) (|q̂| ≤ c·log2(e)·Q_a, which must
 *    be finite: ≤ F_n), then sum q̂·k: their scores in base 2 are at most c·log2(e)·Q̄K̄, which must be ≤ 2^100
 *    (GPU_SCORE_LIMIT) for step 2. The matrix kernel with f32 tensors splits q̂, k and v into f16 parts, so each must be
 *    within ±65504 (the high part of |x| ≤ 65504 is ≤ 65504); with f16 tensors it multiplies Q·Kᵀ (≤ Q̄K̄, f16 values)
 *    by c·log2(e) afterwards, the same score bound. (The matrix units state no accuracy; this assumes their sums stay
 *    within a factor 2 of the exact ones' magnitude, as float32 sums of at most 2^22 roundings do.)
 *    With an additive mask, the CPU path adds M_ij to s in one rounding: |s| ≤ c·Q̄K̄·(1 + γ_{d+2}), |M_ij| ≤ M̄ (the
 *    largest finite |mask value|), and a sum below 2^128 − 2^103 rounds to at most F, so it needs
 *    c·Q̄K̄·(1 + γ_{d+2}) + M̄ < 2^128 − 2^103. (The GPU kernels need nothing of the mask: step 2.)
 *    Softcap and ALiBi come after the product, before the mask. A softcapped score is C·tanh(s/C), at most C (the
 *    CPU path's s/C may round to ±∞ for a tiny C: tanh gives ±1 there, no NaN), and ALiBi adds at most A: the score
 *    before the mask is at most S₁ = (C, or c·Q̄K̄ without a softcap, + A) up to the roundings of that path, at most
 *    d + 6 of them. CPU: with ALiBi or a mask, S₁·(1 + γ_{d+6}) + M̄ < 2^128 − 2^103. GPU, in base 2: S₁·log2(e)
 *    ≤ 2^100, so the scores they take into step 2 stay below 2^101 as before (the softcap's factor c·log2(e) is then
 *    a finite float32, and its capIn ≤ 2^26 keeps s·capIn finite: kernel-support.ts).
 * 2. Softmax. GPU: a masked score is t = s + g with |s| ≤ 2^100·(1 + γ_n) < 2^101 and |g| ≤ 2^127 − 2^110 (the
 *    host's mask), so |t| < 2^127 − 2^109; the running maximum m_i starts at LOWEST = −2^127 (−3e38 in the decode
 *    kernel, which has no mask: |t| < 2^101 there). Every difference of two of t, m_i and LOWEST is then below
 *    2^128 − 2^109 < F (3e38 + 2^101 < F), so exp2 never sees an overflow, let alone ∞ − ∞, and a finite score is
 *    never taken for LOWEST. CPU: S_ij and m_i are finite by step 1, S_ij − m_i ≤ 0, and exp of a difference that
 *    rounds to −∞ (two scores of opposite signs near ±F) is 0, as IEEE arithmetic gives it.
 *    Sinks: a row's sink σ_h enters as one more term of its softmax, 2^(σ_h − m_i) (e^(σ_h − m_i) on the CPU), where
 *    m_i becomes the larger of the keys' maximum and σ_h. GPU: Σ̄·log2(e) ≤ 2^100, so σ_h in base 2 is a score like
 *    the others for step 2's differences (the kernels hold 2^(σ − m_i) at 2^126 where they divide by it, and take
 *    the log-sum-exp from max(m_i, σ)); CPU: σ_h is a finite float32, and the differences are as above.
 * 3. Sums. Each weight is P̃ ≤ 2^τ (τ = 8 for the tiled kernels' lazy rescale, 0 for the decode kernel and the CPU,
 *    whose m_i is the maximum so far), and every rescale or merge factor is ≤ 1. So ℓ_i ≤ 2^τ·L (plus a sink's weight,
 *    at most 2^126 where a kernel divides by it, 1 on the CPU) and every partial sum
 *    of the unnormalized O = Σ P̃·v (a step's sum, the running sum, a flush, the merge of key ranges) is at most
 *    2^τ·L·V̄ in magnitude: it must be ≤ F_n.
 * 4. Output. O_i = Σ w_j v_j with w_j ≥ 0, Σ w_j = 1 up to rounding, so |O_i| ≤ 2·V̄ < F by step 3; with f16
 *    tensors V̄ ≤ 65504, and the kernels clamp O to ±65504 as they store it (an IEEE rounding of anything below 65520
 *    gives 65504 anyway), so f16 outputs stay finite. The log-sum-exp is at most |m_i| + log ℓ_i in base 2 or natural
 *    units: finite by steps 2 and 3 (the GPU kernels undo the mask's compression into at most F, `naturalLse`).
 */
export function float32OverflowReason(impl, range, problem, dtype) {
    const limit = FLOAT32_MAX / Math.max(2, 1 + gamma(problem.dims.Lk + Math.max(problem.dims.d, valueHeadSize(problem.dims)) + 64));
    const c = Math.abs(problem.scale);
    const L = problem.dims.Lk;
    const dot = range.maxQNorm * range.maxKNorm;
    const g = (x) => x.toPrecision(2);
    const tau = impl === 'attention-fp32' || impl === 'attention-matrix' ? LAZY_TAU[impl] : 0;
    // Softcap and ALiBi: the score before the mask is at most S₁ (step 1), named as the input gives it.
    const alibi = alibiRange(problem);
    // A score function's results are held within ±MOD_SCORE_LIMIT (2^64) before the softcap.
    const modded = problem.mods?.scoreMod !== undefined;
    const capped = problem.softcap ?? (modded ? Math.max(c * dot, MOD_SCORE_LIMIT) : c * dot);
    const s1 = capped + alibi;
    const s1Text = `${problem.softcap !== undefined ? 'softcap' : modded ? 'max(|scale|·max‖q‖·max‖k‖, 2^64)' : '|scale|·max‖q‖·max‖k‖'}${alibi > 0 ? ' + max|slope|·(Lq + Lk)' : ''}`;
    const scoreTerms = problem.softcap !== undefined || alibi > 0 || modded;
    if (impl === 'cpu-fp32') {
        if (dot > limit)
            return `max‖q‖·max‖k‖ reaches ${g(dot)}, over ${g(limit)} (its dot products could overflow)`;
        if (c * dot > limit)
            return `|scale|·max‖q‖·max‖k‖ reaches ${g(c * dot)}, over ${g(limit)} (its scores could overflow)`;
        const mask = largestMaskValue(problem);
        if (scoreTerms) {
            const masked = s1 * (1 + gamma(problem.dims.d + 6)) + mask;
            if ((alibi > 0 || mask > 0) && masked >= ROUNDS_TO_FLOAT32_MAX) {
                return `${s1Text}${mask > 0 ? ' + max|mask|' : ''} reaches ${g(masked)}, past float32's ${g(FLOAT32_MAX)} (its scores could overflow)`;
            }
        }
        else {
            const masked = c * dot * (1 + gamma(problem.dims.d + 2)) + mask;
            if (mask > 0 && masked >= ROUNDS_TO_FLOAT32_MAX)
                return `|scale|·max‖q‖·max‖k‖ + max|mask| reaches ${g(masked)}, past float32's ${g(FLOAT32_MAX)} (s + mask could overflow)`;
        }
    }
    else {
        const qHat = c * Math.LOG2E * range.maxAbsQ;
        if (impl === 'attention-matrix' && dtype === 'f32') {
            const most = Math.max(qHat, range.maxAbsK, range.maxAbsV);
            if (most > F16_MAX)
                return `|scale|·log2(e)·max|q|, max|k| or max|v| reaches ${g(most)}, beyond f16's ${F16_MAX} (it splits f32 tensors into f16 parts)`;
        }
        if (qHat > limit)
            return `|scale|·log2(e)·max|q| reaches ${g(qHat)}, over ${g(limit)}`;
        if (c * Math.LOG2E * dot > GPU_SCORE_LIMIT)
            return `|scale|·log2(e)·max‖q‖·max‖k‖ reaches ${g(c * Math.LOG2E * dot)}, over the ${g(GPU_SCORE_LIMIT)} (2^100) its scores may reach`;
        if (scoreTerms && s1 * Math.LOG2E > GPU_SCORE_LIMIT)
            return `(${s1Text})·log2(e) reaches ${g(s1 * Math.LOG2E)}, over the ${g(GPU_SCORE_LIMIT)} (2^100) its scores may reach`;
        const sink = largestSink(problem);
        if (sink * Math.LOG2E > GPU_SCORE_LIMIT)
            return `max|sink|·log2(e) reaches ${g(sink * Math.LOG2E)}, over the ${g(GPU_SCORE_LIMIT)} (2^100) its scores may reach`;
    }
    const sum = 2 ** tau * L * range.maxAbsV;
    if (sum > limit)
        return `${tau > 0 ? `2^${tau}·` : ''}Lk·max|v| reaches ${g(sum)}, over ${g(limit)} (its running sum of P̃·V could overflow)`;
    return undefined;
}
/**
 * A prepared kernel's check of the arrays it is given (PreparedAttention.run): SdpaOverflowError when `impl` could
 * overflow on them. Arrays of another type than the prepared one are left to run's own check.
 */
export function refuseOverflow(impl, problem, dtype, q, k, v) {
    const Type = dtype === 'f16' ? Uint16Array : Float32Array;
    if (!(q instanceof Type && k instanceof Type && v instanceof Type))
        return;
    const reason = float32OverflowReason(impl, tensorRange(q, k, v, problem.dims.d, valueHeadSize(problem.dims)), problem, dtype);
    if (reason !== undefined)
        throw new SdpaOverflowError(impl, reason);
}
/**
 * The float64 oracle's result (@fa/reference's sdpaOracle) in the tensors' type, for values on which float32 could
 * overflow. O_i is a weighted mean of the rows of v, so it rounds to a finite float32 (or f16, for f16 tensors) wherever
 * v is one. A log-sum-exp beyond float32's range cannot be returned: SdpaOverflowError.
 */
export async function float64Attention(problem, q, k, v, withLse, mods) {
    const floats = (x) => (x instanceof Uint16Array ? halvesToFloats(x) : x);
    const exact = await sdpaOracleAsync(problem, floats(q), floats(k), floats(v), mods);
    const out = Float32Array.from(exact.out);
    const result = { out: q instanceof Uint16Array ? floatsToHalves(out) : out };
    if (!withLse)
        return result;
    const beyond = exact.lse.findIndex((x) => Number.isFinite(x) && Math.abs(x) > FLOAT32_MAX);
    if (beyond >= 0) {
        const value = exact.lse[beyond].toPrecision(3);
        throw new SdpaOverflowError(undefined, `the log-sum-exp of row ${beyond} of [B, Hq, Lq] is ${value}`, `the log-sum-exp of row ${beyond} of [B, Hq, Lq] is ${value}, beyond float32's range; leave out the log-sum-exps (returnLse) or scale the scores down`);
    }
    return { ...result, lse: Float32Array.from(exact.lse) };
}
//# sourceMappingURL=float32-range.js.map