/**
 * Score and mask functions (@fa/core's `scoreMod`, `maskMod`) on the CPU. They are WGSL, which the CPU cannot run, so
 * the CPU computations take their values evaluated on a GPU (@fa/sdpa's `evaluateMods`): for every (b, h, i, j) of
 * [B, Hq, Lq, Lk], score_mod of the float64 score s = scale·q_i·k_j rounded to float32 (`sdpaScores`), and mask_mod.
 * The oracle then goes on in float64 from the function's float32 result, held within ±MOD_SCORE_LIMIT as the kernel
 * holds it; the float32 computation takes the same values (its own s differs from the oracle's rounded s by a few
 * float32 units, as the kernel's does). A problem with functions and no values is refused in one line.
 */
import { kvHeadOf, MOD_SCORE_LIMIT, rowOffset, SdpaArgumentError, type SdpaProblem } from '@fa/core';

/** The functions' values over [B, Hq, Lq, Lk] (row-major), as a GPU computed them. */
export interface ModValues {
  /** score_mod(f32(s), b, h, i, j), when the problem has a score function. */
  readonly scores?: Float32Array;
  /** mask_mod(b, h, i, j) as 1 or 0, when it has a mask function. */
  readonly visible?: Uint8Array;
}

/** The values the CPU computations read for a problem: none without functions; a one-line refusal when missing. */
export function modValuesFor(problem: SdpaProblem, values: ModValues | undefined): ModValues | undefined {
  const { mods } = problem;
  if (!mods) return undefined;
  const { B, Hq, Lq, Lk } = problem.dims;
  const count = B * Hq * Lq * Lk;
  const complete = values !== undefined && (!mods.scoreMod || values.scores?.length === count) && (!mods.maskMod || values.visible?.length === count);
  if (!complete) throw new SdpaArgumentError('score and mask functions are WGSL, which the CPU cannot run: give a GPU (their values are evaluated there), or leave scoreMod and maskMod out');
  return values;
}

/** Index of (b, h, i, j) in [B, Hq, Lq, Lk]. */
export function modIndex(problem: SdpaProblem, b: number, h: number, i: number, j: number): number {
  const { Hq, Lq, Lk } = problem.dims;
  return ((b * Hq + h) * Lq + i) * Lk + j;
}

/** A score function's result as the kernels take it: held within ±MOD_SCORE_LIMIT, −∞ kept (it excludes the key). */
export function heldScore(x: number): number {
  return x === Number.NEGATIVE_INFINITY ? x : Math.min(MOD_SCORE_LIMIT, Math.max(-MOD_SCORE_LIMIT, x));
}

/** Every score s = scale·q_i·k_j in float64, [B, Hq, Lq, Lk]: what a score function is evaluated on for the oracle. */
export function sdpaScores(problem: SdpaProblem, q: Float32Array, k: Float32Array): Float64Array {
  const { B, Hq, Hkv, Lq, Lk, d } = problem.dims;
  const scores = new Float64Array(B * Hq * Lq * Lk);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < Hq; h++) {
      const kvHead = kvHeadOf(problem.dims, h);
      for (let i = 0; i < Lq; i++) {
        const qi = rowOffset(problem.layout, Hq, Lq, d, b, h, i);
        for (let j = 0; j < Lk; j++) {
          const kj = rowOffset(problem.layout, Hkv, Lk, d, b, kvHead, j);
          let dot = 0;
          for (let x = 0; x < d; x++) dot += (q[qi + x] as number) * (k[kj + x] as number);
          scores[modIndex(problem, b, h, i, j)] = dot * problem.scale;
        }
      }
    }
  }
  return scores;
}
