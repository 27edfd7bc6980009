/**
 * The float64 oracle the tests compare every rung against. Not a rung: it is the plain algorithm in double
 * precision, with the row maximum subtracted before exp, so its own error is far below any float32 rung's.
 */
import { matrixFloats, type Shape } from '@fa/io';

/**
 * O = softmax(Q Kᵀ / √d) V in float64 for `batches` consecutive batches of `input` (Q, K, V per batch).
 * Returns batches·N·d doubles.
 */
export function attentionOracle(input: Float32Array, shape: Shape, batches = shape.B): Float64Array {
  const { N, d } = shape;
  const size = matrixFloats(shape);
  const scale = 1 / Math.sqrt(d);
  const O = new Float64Array(batches * size);
  const S = new Float64Array(N);
  for (let b = 0; b < batches; b++) {
    const q = b * 3 * size;
    const k = q + size;
    const v = k + size;
    const o = b * size;
    for (let i = 0; i < N; i++) {
      let m = Number.NEGATIVE_INFINITY;
      for (let j = 0; j < N; j++) {
        let s = 0;
        for (let x = 0; x < d; x++) s += (input[q + i * d + x] as number) * (input[k + j * d + x] as number);
        s *= scale;
        S[j] = s;
        if (s > m) m = s;
      }
      let l = 0;
      for (let j = 0; j < N; j++) {
        const p = Math.exp((S[j] as number) - m);
        S[j] = p;
        l += p;
      }
      for (let j = 0; j < N; j++) {
        const p = (S[j] as number) / l;
        for (let x = 0; x < d; x++) O[o + i * d + x] = (O[o + i * d + x] as number) + p * (input[v + j * d + x] as number);
      }
    }
  }
  return O;
}
