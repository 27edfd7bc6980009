/**
 * Rung 1, seq-attention: the plain algorithm on one CPU thread, in float32 arithmetic (Math.fround after every
 * operation, as the assignment's C code computes it). For each query row i:
 *   S_i = Q_i Kᵀ / √d   (a full row of N scores)
 *   P_i = exp(S_i − max S_i) / Σ exp(S_i − max S_i)
 *   O_i = P_i V
 * It is the baseline every rung is measured against, for speed and for error: an fp32 rung should stay within
 * about 2× this rung's error against the float64 oracle.
 */
import { sequentialModel, type RungDefinition } from '@fa/core';
import { singleThreadRunner, wholeBatch, type BatchKernel, type SteppedKernel } from './single-thread.js';

const f = Math.fround;

/** The kernel one query row at a time (a step is a row). */
const seqAttentionSteps: SteppedKernel = function* (Q, K, V, O, { N, d }) {
  const scale = f(1 / Math.sqrt(d));
  const S = new Float32Array(N);
  const Oi = new Float32Array(d);
  for (let i = 0; i < N; i++) {
    // S_i = Q_i Kᵀ · scale, and its maximum
    let m = Number.NEGATIVE_INFINITY;
    for (let j = 0; j < N; j++) {
      let s = 0;
      for (let x = 0; x < d; x++) s = f(s + f((Q[i * d + x] as number) * (K[j * d + x] as number)));
      s = f(s * scale);
      S[j] = s;
      if (s > m) m = s;
    }
    // P_i = exp(S_i − m) (unnormalised), l = Σ P_i
    let l = 0;
    for (let j = 0; j < N; j++) {
      const p = f(Math.exp(f((S[j] as number) - m)));
      S[j] = p;
      l = f(l + p);
    }
    // O_i = (P_i V) / l
    Oi.fill(0);
    for (let j = 0; j < N; j++) {
      const p = S[j] as number;
      for (let x = 0; x < d; x++) Oi[x] = f((Oi[x] as number) + f(p * (V[j * d + x] as number)));
    }
    for (let x = 0; x < d; x++) O[i * d + x] = f((Oi[x] as number) / l);
    yield;
  }
};

export const seqAttentionKernel: BatchKernel = wholeBatch(seqAttentionSteps);

export const seqAttention: RungDefinition = {
  id: 'seq-attention',
  parent: null,
  kind: 'cpu',
  title: 'Sequential attention on one CPU thread (float32)',
  delta: 'The starting point: a full row of N scores per query, max-subtracted softmax, then P·V.',
  rounding: (shape) => sequentialModel(shape, shape.N),
  supports: () => true,
  prepare: (_env, shape) => Promise.resolve(singleThreadRunner(seqAttentionSteps, shape)),
};
