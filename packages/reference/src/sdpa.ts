/**
 * Scaled-dot-product attention on the CPU, in the notation of the FlashAttention papers, for problems described by
 * @fa/core's `sdpaProblem` (heads, grouped KV heads, Lq ≠ Lk, bands, element and block masks, both layouts). For each
 * batch b, query head h and query row i, with M_ij the mask term of `maskTerm` (0, an additive value, or −∞), in
 * FlashAttention-2's and FlexAttention's order:
 *   s_ij = scale · q_i·k_j
 *   s_ij = c · tanh(s_ij / c)                      with a softcap c
 *   s_ij = s_ij − slope_h · |i + Lk − Lq − j|      with ALiBi slopes (`alibiDistance`)
 *   S_ij = s_ij + M_ij                             (the additive mask, then the exclusions: M_ij = −∞)
 *   m_i  = max(max_j S_ij, sink_h)                 (sink_h only with sinks)
 *   P̃_ij = exp(S_ij − m_i),   ℓ_i = Σ_j P̃_ij + exp(sink_h − m_i)
 *   O_i  = Σ_j P̃_ij v_j / ℓ_i,   L_i = m_i + log ℓ_i   (the log-sum-exp)
 * A row that sees no key (no finite S_ij) gives O_i = 0 and L_i = −∞, or L_i = sink_h with sinks (log e^{sink_h}:
 * the formula above with no key).
 *
 * - `sdpaOracle`: float64 throughout; what every implementation is compared with.
 * - `sdpaFloat32`: the same computation in float32 (Math.fround after every operation, as seq-attention): the baseline
 *   of a float32 kernel's error, and the CPU path of the attention function (which sends values on which this float32
 *   arithmetic could overflow to the oracle instead: @fa/sdpa's float32-range.ts).
 * - `sdpaFloat16Plain`: the same computation with its inputs and weights rounded to f16: the baseline of an f16 kernel.
 * Score and mask functions (WGSL) enter as their values evaluated on a GPU (`mods`, sdpa-mods.ts): s becomes
 * score_mod(f32(s)) before the softcap, and mask_mod = false excludes the key; each computation refuses a problem
 * with functions but no values in one line.
 */
import { alibiDistance, bandOf, kvHeadOf, maskTerm, rowOffset, SdpaArgumentError, valueHeadSize, type SdpaProblem } from '@fa/core';
import { heldScore, modIndex, modValuesFor, type ModValues } from './sdpa-mods.js';

const f = Math.fround;

/** Throws a one-line SdpaArgumentError unless q, k and v hold the values the problem's dimensions need. */
function checkLengths(problem: SdpaProblem, q: ArrayLike<number>, k: ArrayLike<number>, v: ArrayLike<number>): void {
  const { B, Hq, Hkv, Lq, Lk, d } = problem.dims;
  const want = { q: B * Hq * Lq * d, k: B * Hkv * Lk * d, v: B * Hkv * Lk * valueHeadSize(problem.dims) };
  for (const [name, values] of [['q', q], ['k', k], ['v', v]] as const) {
    if (values.length !== want[name]) throw new SdpaArgumentError(`${name} holds ${values.length} values but the problem needs ${want[name]}`);
  }
}

/** Whether a key's score needs the mask term looked up (an element or block mask), beyond the band. */
const hasMasks = (problem: SdpaProblem): boolean => problem.mask !== undefined || problem.blockMask !== undefined;

/** Where one (b, h, i) row of q and O starts, and where its KV head's keys and values start. */
interface RowPlace {
  /** Offset of q_i. */
  readonly q: number;
  /** Offset of O_i (rows of dv values, in q's layout). */
  readonly o: number;
  /** Offset of k_0 of the row's KV head. */
  readonly kv0: number;
  /** Distance between consecutive keys of that head. */
  readonly kvStride: number;
  /** Offset of v_0 of the row's KV head (rows of dv values). */
  readonly v0: number;
  /** Distance between consecutive value rows of that head. */
  readonly vStride: number;
}

function rowPlace(problem: SdpaProblem, b: number, h: number, i: number): RowPlace {
  const { Hq, Hkv, Lq, Lk, d } = problem.dims;
  const dv = valueHeadSize(problem.dims);
  const kvHead = kvHeadOf(problem.dims, h);
  const kv0 = rowOffset(problem.layout, Hkv, Lk, d, b, kvHead, 0);
  const kvStride = Lk > 1 ? rowOffset(problem.layout, Hkv, Lk, d, b, kvHead, 1) - kv0 : d;
  const v0 = rowOffset(problem.layout, Hkv, Lk, dv, b, kvHead, 0);
  const vStride = Lk > 1 ? rowOffset(problem.layout, Hkv, Lk, dv, b, kvHead, 1) - v0 : dv;
  return { q: rowOffset(problem.layout, Hq, Lq, d, b, h, i), o: rowOffset(problem.layout, Hq, Lq, dv, b, h, i), kv0, kvStride, v0, vStride };
}

/** Values of the output: B·Hq·Lq rows of dv. */
const outputLength = (problem: SdpaProblem): number => problem.dims.B * problem.dims.Hq * problem.dims.Lq * valueHeadSize(problem.dims);

/** Index of L_i for (b, h, i): the log-sum-exps are [B, Hq, Lq] in either layout. */
const lseIndex = (problem: SdpaProblem, b: number, h: number, i: number): number => (b * problem.dims.Hq + h) * problem.dims.Lq + i;

/**
 * The float64 oracle. Output in q's layout ([B, Hq, Lq, dv] for 'bhsd', [B, Lq, Hq, dv] for 'bshd'); log-sum-exps
 * [B, Hq, Lq] in natural log.
 */
export function sdpaOracle(problem: SdpaProblem, q: Float32Array, k: Float32Array, v: Float32Array, mods?: ModValues): { out: Float64Array; lse: Float64Array } {
  const steps = sdpaOracleSteps(problem, q, k, v, mods);
  let step = steps.next();
  while (step.done !== true) step = steps.next();
  return step.value;
}

/** `sdpaOracle` in steps: pauses before each query row (sdpa-async.ts hands the thread back between rows). */
export function* sdpaOracleSteps(problem: SdpaProblem, q: Float32Array, k: Float32Array, v: Float32Array, mods?: ModValues): Generator<void, { out: Float64Array; lse: Float64Array }, undefined> {
  checkLengths(problem, q, k, v);
  const values = modValuesFor(problem, mods);
  const { B, Hq, Lq, Lk } = problem.dims;
  const out = new Float64Array(outputLength(problem));
  const lse = new Float64Array(B * Hq * Lq);
  const S = new Float64Array(Lk);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < Hq; h++) {
      for (let i = 0; i < Lq; i++) {
        yield;
        lse[lseIndex(problem, b, h, i)] = oracleRow(problem, q, k, v, b, h, i, S, out, rowPlace(problem, b, h, i).o, values);
      }
    }
  }
  return { out, lse };
}

/**
 * Row (b, h, i) of the oracle alone, O_i as dv values: for checking a few rows of a problem too large for the whole
 * oracle.
 */
export function sdpaOracleRow(problem: SdpaProblem, q: Float32Array, k: Float32Array, v: Float32Array, b: number, h: number, i: number, mods?: ModValues): Float64Array {
  checkLengths(problem, q, k, v);
  const out = new Float64Array(valueHeadSize(problem.dims));
  oracleRow(problem, q, k, v, b, h, i, new Float64Array(problem.dims.Lk), out, 0, modValuesFor(problem, mods));
  return out;
}

/** One row O_i of the oracle, written into `out` from `at`; returns L_i. */
function oracleRow(problem: SdpaProblem, q: Float32Array, k: Float32Array, v: Float32Array, b: number, h: number, i: number, S: Float64Array, out: Float64Array, at: number, mods?: ModValues): number {
  const { Lk, d } = problem.dims;
  const dv = valueHeadSize(problem.dims);
  const place = rowPlace(problem, b, h, i);

  const { softcap } = problem;
  const slope = problem.alibiSlopes?.[h];
  const sink = problem.sinks?.[h];

  // S_i = scale · q_i Kᵀ, softcapped, less the ALiBi distances, plus M_i; and m_i = max_j S_ij
  let m = Number.NEGATIVE_INFINITY;
  for (let j = 0; j < Lk; j++) {
    const term = maskTerm(problem, b, h, i, j);
    const e = modIndex(problem, b, h, i, j);
    if (term === Number.NEGATIVE_INFINITY || mods?.visible?.[e] === 0) {
      S[j] = Number.NEGATIVE_INFINITY;
      continue;
    }
    const kj = place.kv0 + j * place.kvStride;
    let dot = 0;
    for (let x = 0; x < d; x++) dot += (q[place.q + x] as number) * (k[kj + x] as number);
    let s = dot * problem.scale;
    if (mods?.scores) s = heldScore(mods.scores[e] as number); // score_mod of f32(s), evaluated on a GPU
    if (softcap !== undefined) s = softcap * Math.tanh(s / softcap);
    if (slope !== undefined) s -= slope * alibiDistance(problem, b, i, j);
    S[j] = s + term;
    if ((S[j] as number) > m) m = S[j] as number;
  }
  for (let x = 0; x < dv; x++) out[at + x] = 0;
  // No key visible: O_i = 0, L_i = −∞, or log e^{sink_h} = sink_h with a sink.
  if (m === Number.NEGATIVE_INFINITY) return sink ?? Number.NEGATIVE_INFINITY;
  if (sink !== undefined) m = Math.max(m, sink);

  // P̃_ij = exp(S_ij − m_i), ℓ_i = Σ_j P̃_ij (+ exp(sink_h − m_i))
  let l = 0;
  for (let j = 0; j < Lk; j++) {
    S[j] = Math.exp((S[j] as number) - m);
    l += S[j] as number;
  }
  if (sink !== undefined) l += Math.exp(sink - m);

  // O_i = Σ_j (P̃_ij / ℓ_i) v_j
  for (let j = 0; j < Lk; j++) {
    const p = (S[j] as number) / l;
    if (p === 0) continue;
    const vj = place.v0 + j * place.vStride;
    for (let x = 0; x < dv; x++) out[at + x] = (out[at + x] as number) + p * (v[vj + x] as number);
  }
  return m + Math.log(l);
}

/** q_i·k_j in float32, summed in order: Σ_x fround(q[qi + x]·k[kj + x]). */
function dotF32(q: Float32Array, qi: number, k: Float32Array, kj: number, d: number): number {
  let s = 0;
  for (let x = 0; x < d; x++) s = f(s + f((q[qi + x] as number) * (k[kj + x] as number)));
  return s;
}

/** O += p·v_j in float32 (dv values). */
function addScaledF32(O: Float32Array, p: number, v: Float32Array, vj: number, dv: number): void {
  for (let x = 0; x < dv; x++) O[x] = f((O[x] as number) + f(p * (v[vj + x] as number)));
}

/**
 * The plain float32 computation (Math.fround after every operation): a full row of scores, its maximum, exp, the
 * sum, P̃·V, the division. Output in q's layout, log-sum-exps [B, Hq, Lq]. Keys outside a row's band are not visited.
 */
export function sdpaFloat32(problem: SdpaProblem, q: Float32Array, k: Float32Array, v: Float32Array, mods?: ModValues): { out: Float32Array; lse: Float32Array } {
  const steps = sdpaFloat32Steps(problem, q, k, v, mods);
  let step = steps.next();
  while (step.done !== true) step = steps.next();
  return step.value;
}

/**
 * `sdpaFloat32` in steps: pauses before each query row, so that a caller may hand the thread back between rows
 * (sdpa-async.ts); the result is the generator's return value.
 */
export function* sdpaFloat32Steps(problem: SdpaProblem, q: Float32Array, k: Float32Array, v: Float32Array, mods?: ModValues): Generator<void, { out: Float32Array; lse: Float32Array }, undefined> {
  checkLengths(problem, q, k, v);
  const values = modValuesFor(problem, mods);
  const { B, Hq, Lq, Lk, d } = problem.dims;
  const dv = valueHeadSize(problem.dims);
  const out = new Float32Array(outputLength(problem));
  const lse = new Float32Array(B * Hq * Lq);
  const scale = f(problem.scale);
  const cap = problem.softcap === undefined ? undefined : f(problem.softcap);
  const masked = hasMasks(problem);
  const S = new Float32Array(Lk);
  const Oi = new Float32Array(dv);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < Hq; h++) {
      for (let i = 0; i < Lq; i++) {
        yield;
        const { q: qi, o: oi, kv0, kvStride, v0, vStride } = rowPlace(problem, b, h, i);
        const { first, last } = bandOf(problem, b, i);
        const slope = problem.alibiSlopes?.[h];
        const sink = problem.sinks?.[h];

        // S_i = scale · q_i Kᵀ, softcapped, less the ALiBi distances, plus M_i over the band; and m_i
        let m = Number.NEGATIVE_INFINITY;
        for (let j = first; j <= last; j++) {
          const term = masked ? maskTerm(problem, b, h, i, j) : 0;
          const e = modIndex(problem, b, h, i, j);
          if (term === Number.NEGATIVE_INFINITY || values?.visible?.[e] === 0) {
            S[j] = Number.NEGATIVE_INFINITY;
            continue;
          }
          let s = values?.scores ? f(heldScore(values.scores[e] as number)) : f(dotF32(q, qi, k, kv0 + j * kvStride, d) * scale);
          if (cap !== undefined) s = f(cap * f(Math.tanh(f(s / cap))));
          if (slope !== undefined) s = f(s - f(slope * alibiDistance(problem, b, i, j)));
          s = f(s + term);
          S[j] = s;
          if (s > m) m = s;
        }
        const at = lseIndex(problem, b, h, i);
        if (m === Number.NEGATIVE_INFINITY) {
          out.fill(0, oi, oi + dv); // no key visible
          lse[at] = sink ?? Number.NEGATIVE_INFINITY; // log e^{sink_h} with a sink
          continue;
        }
        if (sink !== undefined) m = Math.max(m, sink);

        // P̃_ij = exp(S_ij − m_i), ℓ_i = Σ_j P̃_ij (+ exp(sink_h − m_i))
        let l = 0;
        for (let j = first; j <= last; j++) {
          const p = f(Math.exp(f((S[j] as number) - m)));
          S[j] = p;
          l = f(l + p);
        }
        if (sink !== undefined) l = f(l + f(Math.exp(f(sink - m))));

        // O_i = (P̃_i V) / ℓ_i
        Oi.fill(0);
        for (let j = first; j <= last; j++) {
          const p = S[j] as number;
          if (p !== 0) addScaledF32(Oi, p, v, v0 + j * vStride, dv);
        }
        for (let x = 0; x < dv; x++) out[oi + x] = f((Oi[x] as number) / l);
        lse[at] = f(m + f(Math.log(l)));
      }
    }
  }
  return { out, lse };
}

/** x rounded to the nearest f16 (11 significant bits, subnormals below 2⁻¹⁴, ±Infinity beyond 65504), as @fa/ladder's. */
function roundF16(x: number): number {
  if (x === 0 || !Number.isFinite(x)) return x;
  const exponent = Math.max(Math.floor(Math.log2(Math.abs(x))), -14);
  const ulp = 2 ** (exponent - 10);
  const rounded = Math.round(x / ulp) * ulp;
  return Math.abs(rounded) > 65504 ? Math.sign(rounded) * Number.POSITIVE_INFINITY : rounded;
}

/**
 * Attention computed the plain way at f16 precision, float64 otherwise, as @fa/ladder's `plainF16Attention` does for
 * the hw4 layout: q·scale·log2(e), k, v and the weights P̃ = 2^(S − m) rounded to f16; the scores (with the mask term in
 * base 2), the sums and the output exact. What an f16 kernel should match. Output in q's layout; `lse` [B, Hq, Lq]
 * from those scores. The softcap, ALiBi and sinks as the oracle takes them, in base 2 (the softcap in natural units:
 * s·ln 2, c·tanh(s/c), back to base 2), a sink in ℓ_i only.
 */
export function sdpaFloat16Plain(problem: SdpaProblem, q: Float32Array, k: Float32Array, v: Float32Array, mods?: ModValues): { out: Float64Array; lse: Float64Array } {
  checkLengths(problem, q, k, v);
  const values = modValuesFor(problem, mods);
  const { B, Hq, Lq, Lk, d } = problem.dims;
  const dv = valueHeadSize(problem.dims);
  const scale2 = problem.scale * Math.LOG2E;
  const { softcap } = problem;
  const q16 = Float64Array.from(q, (x) => roundF16(f(x * scale2)));
  const k16 = Float64Array.from(k, roundF16);
  const v16 = Float64Array.from(v, roundF16);
  const out = new Float64Array(outputLength(problem));
  const lse = new Float64Array(B * Hq * Lq).fill(Number.NEGATIVE_INFINITY);
  const S = new Float64Array(Lk);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < Hq; h++) {
      for (let i = 0; i < Lq; i++) {
        const { q: qi, o: oi, kv0, kvStride, v0, vStride } = rowPlace(problem, b, h, i);
        const slope = problem.alibiSlopes?.[h];
        const sink = problem.sinks?.[h];

        // S_i = q̂_i Kᵀ (softcapped, less the ALiBi distances) + M_i, all in base 2, and m_i
        let m = Number.NEGATIVE_INFINITY;
        for (let j = 0; j < Lk; j++) {
          const term = maskTerm(problem, b, h, i, j);
          const e = modIndex(problem, b, h, i, j);
          if (term === Number.NEGATIVE_INFINITY || values?.visible?.[e] === 0) {
            S[j] = Number.NEGATIVE_INFINITY;
            continue;
          }
          const kj = kv0 + j * kvStride;
          let s = 0;
          for (let x = 0; x < d; x++) s += (q16[qi + x] as number) * (k16[kj + x] as number);
          if (values?.scores) s = heldScore(values.scores[e] as number) * Math.LOG2E; // score_mod, in base 2
          if (softcap !== undefined) s = softcap * Math.tanh((s * Math.LN2) / softcap) * Math.LOG2E;
          if (slope !== undefined) s -= slope * alibiDistance(problem, b, i, j) * Math.LOG2E;
          S[j] = s + term * Math.LOG2E;
          m = Math.max(m, S[j] as number);
        }
        const at = (b * Hq + h) * Lq + i;
        if (m === Number.NEGATIVE_INFINITY) {
          if (sink !== undefined) lse[at] = sink; // log e^{sink_h}
          continue; // no key visible: O_i stays 0
        }
        const sink2 = sink === undefined ? undefined : sink * Math.LOG2E;
        if (sink2 !== undefined) m = Math.max(m, sink2);

        // ℓ_i = Σ_j 2^(S_ij − m_i) exact; O_i = Σ_j f16(2^(S_ij − m_i)) v_j / ℓ_i
        let l = 0;
        for (let j = 0; j < Lk; j++) {
          const p = 2 ** ((S[j] as number) - m);
          if (p === 0) continue;
          l += p;
          const p16 = roundF16(p);
          const vj = v0 + j * vStride;
          for (let x = 0; x < dv; x++) out[oi + x] = (out[oi + x] as number) + p16 * (v16[vj + x] as number);
        }
        if (sink2 !== undefined) l += 2 ** (sink2 - m);
        for (let x = 0; x < dv; x++) out[oi + x] = (out[oi + x] as number) / l;
        lse[at] = (m + Math.log2(l)) * Math.LN2;
      }
    }
  }
  return { out, lse };
}
