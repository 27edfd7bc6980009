/**
 * sdpaFloat32Async: the same values as sdpaFloat32, bit for bit, on the cases with bands, masks, grouped heads and
 * either layout; the event loop served while a large problem computes; arguments refused as sdpaFloat32 refuses them.
 */
import { describe, expect, it } from 'vitest';
import { sdpaProblem, SdpaArgumentError, type SdpaDims, type SdpaOptions } from '@fa/core';
import { sdpaFloat32, sdpaFloat32Async } from '../src/index.js';

/** Deterministic values in [−range, range). */
function values(count: number, seed: number, range = 1): Float32Array {
  let state = seed >>> 0;
  return Float32Array.from({ length: count }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state / 2 ** 32) * 2 * range - range;
  });
}

const dims = (B: number, Hq: number, Hkv: number, Lq: number, Lk: number, d: number): SdpaDims => ({ B, Hq, Hkv, Lq, Lk, d });
const flags = (count: number, keep: (e: number) => boolean): Uint8Array => Uint8Array.from({ length: count }, (_, e) => (keep(e) ? 1 : 0));

const CASES: { name: string; dims: SdpaDims; options?: Omit<SdpaOptions, 'layout'> }[] = [
  { name: 'GQA, Lq ≠ Lk', dims: dims(2, 4, 2, 33, 47, 32) },
  { name: 'causal, Lq > Lk (rows that see no key)', dims: dims(1, 3, 1, 40, 24, 16), options: { causal: true } },
  { name: 'window and an additive mask', dims: dims(1, 2, 2, 30, 30, 64), options: { window: [5, 3], mask: { kind: 'additive', data: values(30, 3, 2).map((x, e) => (e % 5 === 3 ? -Infinity : x)), shape: [30] } } },
  {
    name: 'block mask and a bool mask',
    dims: dims(2, 2, 1, 25, 31, 8),
    options: {
      blockMask: { rows: 8, keys: 8, data: flags(16, (e) => e !== 5 && e < 12), shape: [4, 4] },
      mask: { kind: 'bool', data: flags(31, (e) => e % 4 !== 0), shape: [31] },
    },
  },
];

describe('sdpaFloat32Async', () => {
  describe.each(['bhsd', 'bshd'] as const)('layout %s', (layout) => {
    it.for(CASES)('gives sdpaFloat32\'s values bit for bit: $name', async ({ dims: caseDims, options = {} }, { expect }) => {
      const { B, Hq, Hkv, Lq, Lk, d } = caseDims;
      const [q, k, v] = [values(B * Hq * Lq * d, 1, 2), values(B * Hkv * Lk * d, 2, 2), values(B * Hkv * Lk * d, 3, 2)];
      const problem = sdpaProblem(caseDims, { ...options, layout });
      const plain = sdpaFloat32(problem, q, k, v);
      const stepped = await sdpaFloat32Async(problem, q, k, v);
      expect(stepped.out).toEqual(plain.out);
      expect(stepped.lse).toEqual(plain.lse);
    });
  });

  it('serves the event loop every few milliseconds while a large problem computes', async () => {
    // About a second of float32 work on one thread: 8 heads of 512 × 512 keys, d = 64.
    const problem = sdpaProblem(dims(1, 8, 8, 512, 512, 64));
    const count = 8 * 512 * 64;
    let ticks = 0;
    let longestGap = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
      ticks++;
    }, 1);
    const started = performance.now();
    try {
      await sdpaFloat32Async(problem, values(count, 1), values(count, 2), values(count, 3));
    } finally {
      clearInterval(ticker);
    }
    const elapsed = performance.now() - started;
    // Held the whole time, the thread would run no timer at all; served, it runs one every slice (20 ms), or every few
    // slices on a busy machine.
    expect(elapsed).toBeGreaterThan(200);
    expect(ticks).toBeGreaterThanOrEqual(4);
    expect(longestGap).toBeLessThan(elapsed / 3);
  });

  it('refuses q, k or v of the wrong length as sdpaFloat32 does', async () => {
    const problem = sdpaProblem(dims(1, 2, 1, 3, 4, 2));
    const [q, k, v] = [values(12, 1), values(8, 2), values(8, 3)];
    await expect(sdpaFloat32Async(problem, q, k, v.subarray(1))).rejects.toThrow(SdpaArgumentError);
  });
});
