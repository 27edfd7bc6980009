/**
 * Rung 2, seq-flash: Algorithm 1 of the FlashAttention paper (Dao et al., 2022), loop for loop, on one CPU thread in
 * float32 arithmetic. Changed from seq-attention: scores are never held as a full row of N; K and V are visited in
 * tiles K_j, V_j of Bc rows (outer loop) and Q in tiles Q_i of Br rows (inner loop), with a running row maximum m and
 * running row sum ℓ that rescale the partial output O_i when a later tile raises the maximum (the online softmax).
 * On a CPU this is not faster; it is the algorithm every GPU rung implements, written where it can be read.
 *
 * m starts at −∞, not FLT_MIN as the assignment's C code had it: FLT_MIN is the smallest *positive* float, so for a
 * row whose scores are all very negative the "maximum" stays ≈ 0, exp(S − 0) underflows to 0 for every key, ℓ = 0,
 * and O = 0/0 = NaN (see the `negative-scores` data kind).
 */
import { sequentialModel, type RungDefinition } from '@fa/core';
import { singleThreadRunner, wholeBatch, type BatchKernel, type SteppedKernel } from './single-thread.js';

const f = Math.fround;

/** Block sizes: the paper derives them from the on-chip memory M as Bc = ⌈M/4d⌉, Br = min(⌈M/4d⌉, d). */
export interface FlashBlocks {
  Br: number;
  Bc: number;
}

export const SEQ_FLASH_BLOCKS: FlashBlocks = { Br: 32, Bc: 32 };

/**
 * `initialMax` is where the running maximum m starts: −∞ (correct). Passing FLT_MIN reproduces the assignment's bug,
 * for the test and the doc page that show it.
 */
export function seqFlashKernel(blocks?: FlashBlocks, initialMax?: number): BatchKernel {
  return wholeBatch(seqFlashSteps(blocks, initialMax));
}

/** The kernel one tile pair (Q_i, K_j) at a time (a step is a tile pair). */
function seqFlashSteps({ Br, Bc }: FlashBlocks = SEQ_FLASH_BLOCKS, initialMax = Number.NEGATIVE_INFINITY): SteppedKernel {
  return function* (Q, K, V, O, { N, d }) {
    const scale = f(1 / Math.sqrt(d));
    const Tr = Math.ceil(N / Br);
    const Tc = Math.ceil(N / Bc);
    // line 2: O = 0, ℓ = 0, m = −∞ (in "HBM": the arrays of the whole problem)
    O.fill(0);
    const l = new Float32Array(N);
    const m = new Float32Array(N).fill(initialMax);
    // on-chip scratch: S_ij / P̃_ij of one tile pair
    const S = new Float32Array(Br * Bc);
    for (let j = 0; j < Tc; j++) {
      // line 6: K_j, V_j are rows [j·Bc, j·Bc + cols) of K and V
      const kv0 = j * Bc;
      const cols = Math.min(Bc, N - kv0);
      for (let i = 0; i < Tr; i++) {
        const q0 = i * Br;
        const rows = Math.min(Br, N - q0);
        for (let r = 0; r < rows; r++) {
          const row = q0 + r;
          // line 9: S_ij = Q_i K_jᵀ · scale
          // line 10: m̃_ij = rowmax(S_ij), P̃_ij = exp(S_ij − m̃_ij), ℓ̃_ij = rowsum(P̃_ij)
          let mTilde = Number.NEGATIVE_INFINITY;
          for (let c = 0; c < cols; c++) {
            let s = 0;
            for (let x = 0; x < d; x++) s = f(s + f((Q[row * d + x] as number) * (K[(kv0 + c) * d + x] as number)));
            s = f(s * scale);
            S[r * Bc + c] = s;
            if (s > mTilde) mTilde = s;
          }
          let lTilde = 0;
          for (let c = 0; c < cols; c++) {
            const p = f(Math.exp(f((S[r * Bc + c] as number) - mTilde)));
            S[r * Bc + c] = p;
            lTilde = f(lTilde + p);
          }
          // line 11: m_new = max(m_i, m̃_ij), ℓ_new = e^(m_i − m_new) ℓ_i + e^(m̃_ij − m_new) ℓ̃_ij
          const mi = m[row] as number;
          const li = l[row] as number;
          const mNew = Math.max(mi, mTilde);
          const alpha = f(Math.exp(f(mi - mNew)));
          const beta = f(Math.exp(f(mTilde - mNew)));
          const lNew = f(f(alpha * li) + f(beta * lTilde));
          // line 12: O_i = diag(ℓ_new)⁻¹ (diag(ℓ_i) e^(m_i − m_new) O_i + e^(m̃_ij − m_new) P̃_ij V_j)
          for (let x = 0; x < d; x++) {
            let pv = 0;
            for (let c = 0; c < cols; c++) pv = f(pv + f((S[r * Bc + c] as number) * (V[(kv0 + c) * d + x] as number)));
            const previous = f(f(li * alpha) * (O[row * d + x] as number));
            O[row * d + x] = f(f(previous + f(beta * pv)) / lNew);
          }
          // line 13: ℓ_i = ℓ_new, m_i = m_new
          l[row] = lNew;
          m[row] = mNew;
        }
        yield;
      }
    }
  };
}

export const seqFlash: RungDefinition = {
  id: 'seq-flash',
  parent: 'seq-attention',
  kind: 'cpu',
  title: 'FlashAttention Algorithm 1 on one CPU thread (float32)',
  delta: 'Tiles K/V (outer loop) and Q (inner loop) with a running max m and sum ℓ, so no full row of scores exists.',
  rounding: (shape) => sequentialModel(shape, SEQ_FLASH_BLOCKS.Bc),
  supports: () => true,
  prepare: (_env, shape) => Promise.resolve(singleThreadRunner(seqFlashSteps(), shape)),
};
