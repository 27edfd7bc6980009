/**
 * hw4-cli sdpa with V's own head size: v.npy's last dimension gives dv, OUTPUT is [B, Hq, Lq, dv] (against the float64
 * oracle), and a v whose other dimensions are not k's is one line, exit 3, nothing written. On the CPU path: the GPU
 * kernels' runs of dv are the conformance cases'.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sdpaProblem } from '@fa/core';
import { encodeNpy, parseNpy } from '@fa/io';
import { sdpaOracle } from '@fa/reference';
import { cli, tempFolder } from './cli-helpers.js';

const dir = tempFolder();
const NO_GPU = { FA_GPU: 'off' };

function values(count: number, seed: number): Float32Array {
  let state = seed;
  return Float32Array.from({ length: count }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state / 2 ** 32) * 2 - 1;
  });
}

const file = (name: string, shape: number[], data: Float32Array): string => {
  const path = join(dir, name);
  writeFileSync(path, encodeNpy(shape, data));
  return path;
};

describe('hw4-cli sdpa with dv ≠ d', () => {
  it('writes OUTPUT [B, Hq, Lq, dv] from v [B, Hkv, Lk, dv], and refuses a v that does not fit k in one line', () => {
    const dims = { B: 1, Hq: 4, Hkv: 2, Lq: 5, Lk: 7, d: 12, dv: 8 };
    const q = values(4 * 5 * 12, 1);
    const k = values(2 * 7 * 12, 2);
    const v = values(2 * 7 * 8, 3);
    const [Q, K, V] = [file('q.npy', [1, 4, 5, 12], q), file('k.npy', [1, 2, 7, 12], k), file('v.npy', [1, 2, 7, 8], v)];
    const out = join(dir, 'out.npy');
    const run = cli(['sdpa', Q, K, V, out, '--causal'], NO_GPU);
    expect(run.code, run.stderr).toBe(0);
    const written = parseNpy(readFileSync(out));
    expect(written.shape).toEqual([1, 4, 5, 8]);
    const exact = sdpaOracle(sdpaProblem(dims, { causal: true }), q, k, v);
    const error = Array.from(written.data as Float32Array).reduce((m, x, i) => Math.max(m, Math.abs(x - (exact.out[i] as number))), 0);
    expect(error).toBeLessThan(1e-6);

    const never = join(dir, 'never.npy');
    const wrong = cli(['sdpa', Q, K, file('v-short.npy', [1, 2, 6, 8], values(2 * 6 * 8, 4)), never], NO_GPU);
    expect(wrong.code).toBe(3);
    expect(wrong.stderr.trim().split('\n')).toHaveLength(1);
    expect(wrong.stderr).toMatch(/v has shape \[1, 2, 6, 8\] but k has \[1, 2, 7, 12\]; give v the shape of k but for its last dimension \(V's head size\); no output was written/);
    expect(existsSync(never)).toBe(false);
  });
});
