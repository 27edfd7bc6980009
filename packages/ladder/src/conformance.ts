/**
 * One conformance check: a rung on one case against the float64 oracle, with the fp32 baseline (seq-attention)
 * error beside it. A GPU or fp32 rung passes when it meets the format's 5e-3 contract and stays within 2× the
 * baseline's error (or 1e-6 absolute, whichever is larger, for cases where the baseline is nearly exact).
 * A rung of reduced precision (f16 operands) is held to a plain computation at its own precision instead
 * (`plainF16Attention`): it passes when it stays within 2× that computation's error, whether or not that meets 5e-3.
 */
import { canRun, runAll, type RunEnv, type Rung, type RungDefinition } from '@fa/core';
import { compareOutputs, formatComparison, generateInput, type Comparison, type Shape } from '@fa/io';
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

/** x rounded to the nearest f16 (11 significant bits, subnormals below 2⁻¹⁴, ±Infinity beyond 65504). */
export function roundF16(x: number): number {
  if (x === 0 || !Number.isFinite(x)) return x;
  const exponent = Math.max(Math.floor(Math.log2(Math.abs(x))), -14);
  const ulp = 2 ** (exponent - 10);
  const rounded = Math.round(x / ulp) * ulp;
  return Math.abs(rounded) > 65504 ? Math.sign(rounded) * Number.POSITIVE_INFINITY : rounded;
}

/**
 * Attention computed the plain way at f16 precision, in float64 otherwise: Q·log2(e)/√d, K, V and the weights
 * P̃ = 2^(s − max) rounded to f16, the scores, the sums and the output exact. What an f16 matrix-unit rung should match.
 */
export function plainF16Attention(input: Float32Array, { B, N, d }: Shape): Float64Array {
  const size = N * d;
  const O = new Float64Array(B * size);
  const scale = Math.LOG2E / Math.sqrt(d);
  const rounded = Float64Array.from(input, (x, k) => roundF16(Math.floor(k / size) % 3 === 0 ? Math.fround(x * scale) : x));
  const S = new Float64Array(N);
  for (let b = 0; b < B; b++) {
    const q0 = 3 * b * size;
    const k0 = q0 + size;
    const v0 = k0 + size;
    for (let row = 0; row < N; row++) {
      let m = Number.NEGATIVE_INFINITY;
      for (let j = 0; j < N; j++) {
        let s = 0;
        for (let x = 0; x < d; x++) s += (rounded[q0 + row * d + x] as number) * (rounded[k0 + j * d + x] as number);
        S[j] = s;
        m = Math.max(m, s);
      }
      let l = 0;
      const out = O.subarray(b * size + row * d, b * size + row * d + d);
      for (let j = 0; j < N; j++) {
        const p = 2 ** ((S[j] as number) - m);
        l += p;
        const p16 = roundF16(p);
        for (let x = 0; x < d; x++) out[x] = (out[x] as number) + p16 * (rounded[v0 + j * d + x] as number);
      }
      for (let x = 0; x < d; x++) out[x] = (out[x] as number) / l;
    }
  }
  return O;
}

export interface ConformanceVerdict {
  /** The most error the rung may have: ERROR_RATIO_LIMIT × the baseline's, at least ERROR_FLOOR. */
  limit: number;
  withinBaseline: boolean;
  pass: boolean;
}

/**
 * Whether a rung's error passes (see the file comment): `baseline` is the plain f16 computation's comparison for a rung
 * of reduced precision, seq-attention's otherwise.
 */
export function conformanceVerdict(rung: Pick<RungDefinition, 'reducedPrecision'>, comparison: Comparison, baseline: Comparison): ConformanceVerdict {
  const limit = Math.max(ERROR_RATIO_LIMIT * baseline.maxAbsError, ERROR_FLOOR);
  const withinBaseline = comparison.maxAbsError <= limit;
  return { limit, withinBaseline, pass: (rung.reducedPrecision !== undefined || comparison.pass) && withinBaseline };
}

/** What every rung of a case is compared with: its input, the float64 oracle and the two baselines, made once. */
interface CaseData {
  input: Float32Array;
  oracle: Float64Array;
  /** seq-attention's comparison with the oracle (the fp32 baseline), once computed. */
  fp32?: Comparison;
  /** The plain f16 computation's comparison with the oracle, once computed. */
  f16?: Comparison;
}

const caseData = new WeakMap<ConformanceCase, CaseData>();

function dataOf(testCase: ConformanceCase): CaseData {
  let data = caseData.get(testCase);
  if (!data) {
    const input = generateInput(testCase);
    data = { input, oracle: attentionOracle(input, testCase.shape) };
    caseData.set(testCase, data);
  }
  return data;
}

export async function checkConformance(rung: Rung, testCase: ConformanceCase, env: RunEnv): Promise<ConformanceResult> {
  const { shape } = testCase;
  const allowed = canRun(rung, shape, env);
  if (allowed !== true) return { rung: rung.id, case: testCase.name, declined: allowed, pass: true, detail: `declined: ${allowed}` };
  const data = dataOf(testCase);
  const { input, oracle } = data;
  const outputOf = async (r: RungDefinition): Promise<Float32Array> => {
    const runner = await r.prepare(env, shape);
    try {
      return (await runAll(runner, input, shape)).output;
    } finally {
      await runner.dispose();
    }
  };
  const comparison = compareOutputs(await outputOf(rung), oracle, shape);
  const reduced = rung.reducedPrecision !== undefined;
  const baseline = reduced
    ? (data.f16 ??= compareOutputs(plainF16Attention(input, shape), oracle, shape))
    : rung.id === seqAttention.id
      ? (data.fp32 ??= comparison)
      : (data.fp32 ??= compareOutputs(await outputOf(seqAttention), oracle, shape));
  const { limit, withinBaseline, pass } = conformanceVerdict(rung, comparison, baseline);
  const detail = [
    `${rung.id} on ${testCase.name}: ${formatComparison(comparison)}`,
    `  ${reduced ? 'plain f16 baseline' : 'fp32 baseline (seq-attention)'} max error ${baseline.maxAbsError.toExponential(3)}; limit ${limit.toExponential(3)}${withinBaseline ? '' : ' EXCEEDED'}`,
  ].join('\n');
  return { rung: rung.id, case: testCase.name, comparison, baseline, pass, detail };
}
