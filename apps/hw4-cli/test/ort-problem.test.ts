/**
 * Which bench cases ONNX Runtime's attention operators are timed on: only those its model expresses exactly, so that
 * its time is of the same attention as ours.
 */
import { describe, expect, it } from 'vitest';
import { onnxProblem } from '../src/bench/ort.js';

const dims = { B: 1, Hq: 16, Hkv: 8, Lq: 256, Lk: 256, d: 64 };

describe('onnxProblem', () => {
  it('takes a causal prefill with grouped heads', () => {
    expect(onnxProblem(dims, { causal: true }, 'f16')).toMatchObject({ B: 1, Hq: 16, Hkv: 8, L: 256, d: 64, causal: true, dtype: 'f16' });
  });
  it('declines softcap, ALiBi and sinks, which its model does not give the operator, in one line', () => {
    const why = 'softcap, ALiBi and sinks are not given to its operators here; not timed';
    expect(onnxProblem(dims, { causal: true, softcap: 50 }, 'f16')).toBe(why);
    expect(onnxProblem(dims, { causal: true, sinks: new Float32Array(16) }, 'f16')).toBe(why);
    expect(onnxProblem(dims, { alibiSlopes: new Float32Array(16) }, 'f16')).toBe(why);
  });
});
