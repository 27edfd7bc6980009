import { describe, expect, it } from 'vitest';
import type { Rung } from '@fa/core';
import { chunkStats, generateInput, type Shape } from '@fa/io/node';
import { findRung } from '@fa/ladder';
import { chooseForAccuracy, errorBound, fp32Risk, type AccuracyPolicy } from '../src/accuracy.js';
import { ExitError } from '../src/exit-codes.js';

const cpu = findRung('cpu') as Rung;
/** Stands for the default GPU rung of a real GPU: any float32 rung. */
const fp32 = { ...(findRung('seq-flash') as Rung), id: 'some-gpu-rung', kind: 'gpu' } as Rung;
const env = { threads: 1 };
const policy = (named: boolean, allowInaccurate = false, tolerance = 5e-3): AccuracyPolicy => ({ env, chosen: fp32, named, allowInaccurate, tolerance, accurate: cpu });

function risk(kind: 'uniform' | 'large', shape: Shape): ReturnType<typeof fp32Risk> {
  return fp32Risk(chunkStats(generateInput({ shape, kind, seed: 1 }), shape.B, shape), shape);
}

describe('accuracy routing (defect 2)', () => {
  const shape = { B: 2, N: 256, d: 32 };

  it('leaves ordinary data (±3) on the chosen float32 rung, with no note', () => {
    const r = risk('uniform', shape);
    expect(errorBound(fp32, r, env)?.total).toBeLessThan(1e-3);
    expect(chooseForAccuracy(policy(false), r)).toEqual({ rung: fp32 });
  });

  it('sends the default run on ±40 data, N ≥ 256, d ≥ 32, to the float64 cpu rung with a one-line note', () => {
    const r = risk('large', shape);
    expect(errorBound(fp32, r, env)?.total).toBeGreaterThan(5e-3);
    const choice = chooseForAccuracy(policy(false), r);
    expect(choice.rung.id).toBe('cpu');
    expect(choice.note).toMatch(/^hw4-cli: note: some-gpu-rung cannot promise the tolerance 0.005 on this input: its scores reach about .*\(a proven bound\); computing with the float64 cpu rung$/);
  });

  it('stops a named float32 rung with exit 2, unless --allow-inaccurate', () => {
    const r = risk('large', shape);
    const error = (() => {
      try {
        chooseForAccuracy(policy(true), r);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ExitError);
    expect((error as ExitError).exitCode).toBe(2);
    expect(chooseForAccuracy(policy(true, true), r)).toMatchObject({ rung: fp32, note: expect.stringMatching(/--allow-inaccurate/) as unknown });
  });

  it('flags products beyond float32 as overflow, and skips batches whose K or V are not finite', () => {
    const base = { maxAbsV: 1, nonFiniteQRows: [], nonFiniteKV: false };
    expect(fp32Risk([{ ...base, maxQNorm: 1e20, maxKNorm: 1e20 }], shape).overflow).toBe(true);
    expect(fp32Risk([{ ...base, maxQNorm: 1e20, maxKNorm: 1e20, nonFiniteKV: true }], shape)).toMatchObject({ overflow: false, batches: [] });
    expect(chooseForAccuracy({ ...policy(false), chosen: cpu }, fp32Risk([{ ...base, maxQNorm: 1e20, maxKNorm: 1e20 }], shape))).toEqual({ rung: cpu });
  });

  it('refuses a rung with f16 operands on values beyond 65504, named or not, even with --allow-inaccurate', () => {
    // Only the range is tested here: a tolerance no rounding error reaches.
    const policy = (named: boolean, allowInaccurate = false): AccuracyPolicy => ({ env, chosen: fp32, named, allowInaccurate, tolerance: Number.POSITIVE_INFINITY, accurate: cpu });
    const f16 = { ...fp32, id: 'some-f16-rung', reducedRange: 'f16' } as Rung;
    const base = { maxQNorm: 1, maxKNorm: 1, maxAbsV: 1, nonFiniteQRows: [], nonFiniteKV: false };
    expect(fp32Risk([{ ...base, maxKNorm: 6e4 }], shape).f16Overflow).toBe(false);
    const inRange = fp32Risk([{ ...base, maxAbsV: 6e4 }], shape);
    expect(inRange.f16Overflow).toBe(false);
    expect(chooseForAccuracy({ ...policy(true), chosen: f16 }, inRange)).toEqual({ rung: f16 });
    const beyond = fp32Risk([{ ...base, maxAbsV: 7e4 }], shape);
    expect(beyond).toMatchObject({ f16Overflow: true, overflow: false });
    expect(() => chooseForAccuracy({ ...policy(true, true), chosen: f16 }, beyond)).toThrow(/some-f16-rung keeps its operands as f16, and this input's values may exceed f16's range/);
    expect(chooseForAccuracy({ ...policy(false), chosen: f16 }, beyond)).toMatchObject({ rung: cpu, note: expect.stringMatching(/f16's range.*float64 cpu rung$/) as unknown });
    // Q is scaled by log2(e)/√d before it is rounded: at d = 32 a row norm of 2e5 is still in range.
    expect(fp32Risk([{ ...base, maxQNorm: 2e5 }], shape).f16Overflow).toBe(false);
    expect(fp32Risk([{ ...base, maxQNorm: 3e5 }], shape).f16Overflow).toBe(true);
    // A float32 rung does not care about f16's range.
    expect(chooseForAccuracy(policy(true), beyond)).toEqual({ rung: fp32 });
    // A default run on an f16-range rung hands such chunks to the fastest full-range rung, not to float64.
    expect(chooseForAccuracy({ ...policy(false), chosen: f16, fullRange: fp32 }, beyond)).toEqual({
      rung: fp32,
      note: expect.stringMatching(/^hw4-cli: note: this input's values may exceed f16's range .*; computing with some-gpu-rung$/) as unknown,
    });
    expect(chooseForAccuracy({ ...policy(false), chosen: f16, fullRange: fp32 }, inRange)).toEqual({ rung: f16 });
  });

  it('sends chunks beyond f16 that are also beyond the float32 tolerance from an f16-range rung to the float64 rung', () => {
    const f16 = { ...fp32, id: 'some-f16-rung', reducedRange: 'f16' } as Rung;
    const large = risk('large', shape);
    const both = { ...large, f16Overflow: true };
    expect(chooseForAccuracy({ ...policy(false), chosen: f16, fullRange: fp32 }, both)).toMatchObject({ rung: cpu, note: expect.stringMatching(/cannot promise the tolerance.*float64 cpu rung$/) as unknown });
  });
});
