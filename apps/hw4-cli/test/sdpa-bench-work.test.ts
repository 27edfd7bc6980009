/** The work the bench's TFLOP/s counts: the visible share of the scores, as FlexAttention's benchmarks count it. */
import { describe, expect, it } from 'vitest';
import { SDPA_BENCH_CASES } from '../src/bench/sdpa.js';
import { visibleShare } from '../src/sdpa/bench.js';

const named = (start: string) => {
  const found = SDPA_BENCH_CASES.find((c) => c.name.startsWith(start));
  if (!found) throw new Error(`no bench case named "${start}…"`);
  return found;
};

describe('visibleShare', () => {
  it('counts all scores of a dense case and half of a causal square one', () => {
    expect(visibleShare(named('GPT-2 prefill, no mask'))).toBe(1);
    expect(visibleShare(named('GPT-2 prefill, causal'))).toBe(0.5);
  });
  it('counts 1/(2n) for n packed documents, causal within each, and half for causal written as a mask function', () => {
    expect(visibleShare(named('8 packed documents'))).toBe(1 / 16);
    expect(visibleShare(named('causal as a mask function'))).toBe(0.5);
  });
  it('counts the kept blocks under a block mask', () => {
    const c = named('block-sparse');
    const data = Array.from(c.options.blockMask?.data ?? []);
    expect(visibleShare(c)).toBe(data.filter((kept) => kept).length / data.length);
    expect(visibleShare(c)).toBeGreaterThan(0.4);
    expect(visibleShare(c)).toBeLessThan(0.6);
  });
});
