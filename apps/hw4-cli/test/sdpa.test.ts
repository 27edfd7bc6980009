/**
 * hw4-cli sdpa on NumPy files: the result against the float64 oracle, float64 files converted with a note, and the
 * main command's error discipline (one line, a documented exit code, no OUTPUT written or replaced).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sdpaProblem } from '@fa/core';
import { encodeNpy, parseNpy } from '@fa/io';
import { sdpaOracle } from '@fa/reference';
import { cli, ownLines, tempFolder } from './cli-helpers.js';

const dir = tempFolder();
const NO_GPU = { FA_GPU: 'off' };

function values(count: number, seed: number): Float32Array {
  let state = seed;
  return Float32Array.from({ length: count }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state / 2 ** 32) * 2 - 1;
  });
}

/** A .npy file (format 1.0) of `descr` ('<f8' is NumPy's default, '|b1' booleans) holding `data`'s bytes. */
function npy(descr: string, shape: readonly number[], data: Float64Array | Uint8Array): Uint8Array {
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  header += `${' '.repeat(63 - ((10 + header.length) % 64))}\n`;
  const bytes = new Uint8Array(10 + header.length + data.byteLength);
  bytes.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, header.length & 0xff, header.length >> 8]);
  bytes.set(new TextEncoder().encode(header), 10);
  bytes.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), 10 + header.length);
  return bytes;
}

const dims = { B: 1, Hq: 4, Hkv: 2, Lq: 9, Lk: 13, d: 16 };
const q = values(4 * 9 * 16, 1);
const k = values(2 * 13 * 16, 2);
const v = values(2 * 13 * 16, 3);
const file = (name: string, bytes: Uint8Array): string => {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
};
const Q = file('q.npy', encodeNpy([1, 4, 9, 16], q));
const K = file('k.npy', encodeNpy([1, 2, 13, 16], k));
const V = file('v.npy', encodeNpy([1, 2, 13, 16], v));

/** Largest |a − b|, equal values (−∞ included) counting 0. */
const maxAbs = (a: ArrayLike<number>, b: ArrayLike<number>): number => Array.from(a).reduce((m, x, i) => (x === b[i] ? m : Math.max(m, Math.abs(x - (b[i] as number)))), 0);

describe('hw4-cli sdpa', () => {
  it('computes grouped-head causal attention with a mask and writes OUTPUT and the log-sum-exps', () => {
    const keep = Uint8Array.from({ length: 13 }, (_, j) => (j % 4 === 1 ? 0 : 1));
    const mask = file('mask.npy', npy('|b1', [13], keep));
    const out = join(dir, 'out.npy');
    const lse = join(dir, 'lse.npy');
    const run = cli(['sdpa', Q, K, V, out, '--causal', '--mask', mask, '--lse', lse], NO_GPU);
    expect(run.code, run.stderr).toBe(0);
    const exact = sdpaOracle(sdpaProblem(dims, { causal: true, mask: { kind: 'bool', data: keep, shape: [13] } }), q, k, v);
    const written = parseNpy(readFileSync(out));
    expect(written.shape).toEqual([1, 4, 9, 16]);
    expect(written.dtype).toBe('f32');
    expect(maxAbs(written.data as Float32Array, exact.out)).toBeLessThan(1e-5);
    expect(maxAbs(parseNpy(readFileSync(lse)).data as Float32Array, exact.lse)).toBeLessThan(1e-5);
  });

  it('takes --cache-lengths: K and V as a cache of which the batch holds its first rows, causal aligned to them', () => {
    const out = join(dir, 'cached.npy');
    const run = cli(['sdpa', Q, K, V, out, '--causal', '--cache-lengths', '10'], NO_GPU);
    expect(run.code, run.stderr).toBe(0);
    const exact = sdpaOracle(sdpaProblem(dims, { causal: true, cacheLengths: [10] }), q, k, v);
    expect(maxAbs(parseNpy(readFileSync(out)).data as Float32Array, exact.out)).toBeLessThan(1e-5);
    const never = join(dir, 'never-cached.npy');
    expect(cli(['sdpa', Q, K, V, never, '--cache-lengths', '14'], NO_GPU)).toMatchObject({ code: 2, stderr: expect.stringMatching(/--cache-lengths 14: 14 is more than the 13 rows of K and V \(Lk\); give lengths from 0 to 13/) as unknown });
    expect(cli(['sdpa', Q, K, V, never, '--cache-lengths', '3,4'], NO_GPU)).toMatchObject({ code: 2, stderr: expect.stringMatching(/--cache-lengths 3,4 gives 2 lengths but Q has batch 1; give one per batch/) as unknown });
    expect(cli(['sdpa', Q, K, V, never, '--cache-lengths', 'x'], NO_GPU).code).toBe(2);
    expect(existsSync(never)).toBe(false);
  });

  it('takes --softcap, --sinks and --alibi-slopes (float32 [Hq]), and refuses wrong ones with one line and exit 2', () => {
    const sinks = Float32Array.of(0.5, -1, 2, 0);
    const slopes = Float32Array.of(0.25, 0.125, 0.0625, 0.03125);
    const S = file('sinks.npy', encodeNpy([4], sinks));
    const A = file('slopes.npy', encodeNpy([4], slopes));
    const out = join(dir, 'terms.npy');
    const lse = join(dir, 'terms-lse.npy');
    const run = cli(['sdpa', Q, K, V, out, '--causal', '--softcap', '1.5', '--sinks', S, '--alibi-slopes', A, '--lse', lse], NO_GPU);
    expect(run.code, run.stderr).toBe(0);
    const exact = sdpaOracle(sdpaProblem(dims, { causal: true, softcap: 1.5, sinks, alibiSlopes: slopes }), q, k, v);
    expect(maxAbs(parseNpy(readFileSync(out)).data as Float32Array, exact.out)).toBeLessThan(1e-5);
    expect(maxAbs(parseNpy(readFileSync(lse)).data as Float32Array, exact.lse)).toBeLessThan(1e-5);
    const never = join(dir, 'never-terms.npy');
    const refused: [string[], RegExp][] = [
      [['--softcap', '0'], /--softcap 0 is not a positive decimal number; give one, e\.g\. --softcap 50/],
      [['--softcap', '0x10'], /--softcap 0x10 is not a positive decimal number/],
      [['--sinks', file('sinks3.npy', encodeNpy([3], sinks.subarray(0, 3)))], /--sinks .*sinks3\.npy has shape \[3\]; give a float32 array of shape \[Hq\] = \[4\], one sink logit per query head/],
      [['--sinks', file('sinks-nan.npy', encodeNpy([4], Float32Array.of(0, Number.NaN, 0, 0)))], /--sinks .*sinks-nan\.npy holds NaN at index 1 .*; give finite values, one sink logit per query head/],
      [['--alibi-slopes', file('slopes-i4.npy', npy('<i4', [4], new Uint8Array(Int32Array.of(1, 2, 3, 4).buffer)))], /--alibi-slopes .*slopes-i4\.npy holds int32 values; give a float32 array of shape \[Hq\] = \[4\], one ALiBi slope per query head/],
      [['--alibi-slopes', file('slopes-2d.npy', encodeNpy([1, 4], slopes))], /--alibi-slopes .*slopes-2d\.npy has shape \[1, 4\]; give a float32 array of shape \[Hq\] = \[4\]/],
    ];
    for (const [args, message] of refused) {
      const bad = cli(['sdpa', Q, K, V, never, ...args], NO_GPU);
      expect(bad.code, bad.stderr).toBe(2);
      expect(ownLines(bad.stderr), bad.stderr).toHaveLength(1);
      expect(bad.stderr).toMatch(message);
    }
    expect(cli(['sdpa', '--conformance', '--softcap', '2'], NO_GPU)).toMatchObject({ code: 2, stderr: expect.stringMatching(/--softcap is an option of a run on files/) as unknown });
    expect(existsSync(never)).toBe(false);
  });

  it('refuses --mod-buffer that is not NAME=FILE.npy, or without a function, and score and mask functions without a GPU, with one line and exit 2', () => {
    const never = join(dir, 'never-mods.npy');
    const wgsl = join(dir, 'none.wgsl');
    writeFileSync(wgsl, 'fn mask_mod(b: u32, h: u32, q: u32, k: u32) -> bool { return true; }\n');
    const keep = file('keep-none.npy', npy('<i4', [13], new Uint8Array(new Int32Array(13).buffer)));
    const refused: [string[], RegExp][] = [
      [['--mask-mod', wgsl, '--mod-buffer', 'keep'], /--mod-buffer keep is not NAME=FILE\.npy; give e\.g\. --mod-buffer doc=doc_ids\.npy/],
      [['--mod-buffer', `keep=${keep}`], /--mod-buffer is given without --score-mod or --mask-mod/],
      [['--mask-mod', wgsl, '--mod-buffer', `keep=${file('keep64.npy', npy('<f8', [13], new Float64Array(13)))}`], /--mod-buffer keep=.*keep64\.npy holds float64 values; give int32 or float32/],
      [['--mask-mod', wgsl], /--score-mod and --mask-mod are WGSL, which runs on a GPU only/],
    ];
    for (const [args, message] of refused) {
      const bad = cli(['sdpa', Q, K, V, never, ...args], NO_GPU);
      expect(bad.code, bad.stderr).toBe(2);
      expect(ownLines(bad.stderr), bad.stderr).toHaveLength(1);
      expect(bad.stderr).toMatch(message);
    }
    expect(existsSync(never)).toBe(false);
  });

  it('converts float64 tensors (NumPy\'s default) to float32 with a note, and writes float32', () => {
    const q64 = file('q64.npy', npy('<f8', [1, 4, 9, 16], Float64Array.from(q)));
    const out = join(dir, 'out64.npy');
    const run = cli(['sdpa', q64, K, V, out], NO_GPU);
    expect(run.code, run.stderr).toBe(0);
    expect(ownLines(run.stderr)[0]).toMatch(/^hw4-cli: note: Q .*q64\.npy is float64; it is computed in float32 and OUTPUT is float32$/);
    expect(parseNpy(readFileSync(out)).dtype).toBe('f32');
  });

  it('refuses inputs that do not fit with one line and exit 3, leaving an existing OUTPUT as it was', () => {
    const out = file('kept.npy', new TextEncoder().encode('OLD'));
    const K3 = file('k3.npy', encodeNpy([1, 3, 13, 16], values(3 * 13 * 16, 4)));
    const cases: [string[], RegExp][] = [
      [[Q, K3, K3, out], /4 query heads are not a multiple of 3 key\/value heads/],
      [[Q, file('bad.npy', new TextEncoder().encode('not a numpy file')), V, out], /^hw4-cli: error: K .*bad\.npy: /],
      [[Q, K, V, out, '--mask', file('m.npy', encodeNpy([2, 13], values(26, 5)))], /the mask of shape \[2, 13\] does not broadcast to \[1, 4, 9, 13\]/],
      [[Q, file('kd.npy', encodeNpy([1, 2, 13, 8], values(2 * 13 * 8, 6))), V, out], /q has head size 16 but k has 8/],
      [[Q, K, file('nan.npy', encodeNpy([1, 2, 13, 16], Float32Array.from(v, (x, i) => (i === 5 ? Number.NaN : x)))), out], /holds NaN at flat index 5/],
    ];
    for (const [args, message] of cases) {
      const run = cli(['sdpa', ...args], NO_GPU);
      expect(run.code, run.stderr).toBe(3);
      expect(ownLines(run.stderr), run.stderr).toHaveLength(1);
      expect(run.stderr).toMatch(message);
      expect(readFileSync(out, 'utf8')).toBe('OLD');
    }
  });

  it('says which implementations run here, and refuses an unknown or unavailable one with exit 2', () => {
    const list = cli(['sdpa', '--list', '--json'], NO_GPU);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual({
      implementations: [
        { id: 'attention-fp32', available: false, reason: 'GPU disabled by FA_GPU=off' },
        { id: 'attention-matrix', available: false, reason: 'GPU disabled by FA_GPU=off' },
        { id: 'attention-decode', available: false, reason: 'GPU disabled by FA_GPU=off' },
        { id: 'cpu-fp32', available: true },
      ],
    });
    const out = join(dir, 'never.npy');
    expect(cli(['sdpa', Q, K, V, out, '--impl', 'fast'], NO_GPU)).toMatchObject({ code: 2, stderr: expect.stringMatching(/unknown implementation "fast"; choose one of attention-fp32, attention-matrix, attention-decode, cpu-fp32/) as unknown });
    expect(cli(['sdpa', Q, K, V, out, '--impl', 'attention-fp32'], NO_GPU).code).toBe(2);
    expect(cli(['sdpa', Q, K, V, out, '--window', '3'], NO_GPU).code).toBe(2);
    expect(existsSync(out)).toBe(false);
  });
});

/** Whether this machine runs the GPU kernels (the software GPU in CI). */
const listedHere = JSON.parse(cli(['sdpa', '--list', '--json']).stdout) as { implementations: { id: string; available: boolean; reason?: string }[] };
const decodeHere = listedHere.implementations.find((i) => i.id === 'attention-decode');
const noGpu = decodeHere?.available === true ? undefined : (decodeHere?.reason ?? 'not listed');
if (noGpu !== undefined && process.env.FA_REQUIRE_GPU === '1') throw new Error(`FA_REQUIRE_GPU=1 but ${noGpu}`);

describe.skipIf(noGpu !== undefined)(`hw4-cli sdpa on the GPU${noGpu ? ` (skipped: ${noGpu})` : ''}`, () => {
  it('takes the decode kernel for two query rows per head over caches, and --json says which kernel ran', () => {
    const decodeDims = { B: 2, Hq: 4, Hkv: 2, Lq: 2, Lk: 13, d: 16 };
    const q2 = values(2 * 4 * 2 * 16, 7);
    const k2 = values(2 * 2 * 13 * 16, 8);
    const v2 = values(2 * 2 * 13 * 16, 9);
    const paths = [file('dq.npy', encodeNpy([2, 4, 2, 16], q2)), file('dk.npy', encodeNpy([2, 2, 13, 16], k2)), file('dv.npy', encodeNpy([2, 2, 13, 16], v2))];
    const exact = sdpaOracle(sdpaProblem(decodeDims, { causal: true, cacheLengths: [13, 5] }), q2, k2, v2);
    for (const [impl, args] of [['attention-decode', []], ['attention-fp32', ['--impl', 'attention-fp32']]] as const) {
      const out = join(dir, `decode-${impl}.npy`);
      const run = cli(['sdpa', ...paths, out, '--causal', '--cache-lengths', '13,5', '--json', ...args]);
      expect(run.code, run.stderr).toBe(0);
      expect((JSON.parse(run.stdout) as { impl: string }).impl).toBe(impl);
      expect(maxAbs(parseNpy(readFileSync(out)).data as Float32Array, exact.out)).toBeLessThan(1e-5);
    }
  }, 600_000);

  it('takes --score-mod, --mask-mod and --mod-buffer (the default kernel runs them), and reports a WGSL error at the file\'s line, exit 2', () => {
    // score_mod halves every score (scale 1/8 instead of 1/4), mask_mod is the causal band (Lk − Lq = 4) and a key mask.
    const scoreFile = join(dir, 'half.wgsl');
    writeFileSync(scoreFile, 'fn score_mod(s: f32, b: u32, h: u32, q: u32, k: u32) -> f32 {\n  return s * half[0];\n}\n');
    const maskFile = join(dir, 'band.wgsl');
    writeFileSync(maskFile, 'fn mask_mod(b: u32, h: u32, q: u32, k: u32) -> bool {\n  return k <= q + 4u && keep[k] != 0;\n}\n');
    const keep = Int32Array.from({ length: 13 }, (_, j) => (j % 4 === 1 ? 0 : 1));
    const keepPath = file('keep.npy', npy('<i4', [13], new Uint8Array(keep.buffer)));
    const halfPath = file('half.npy', encodeNpy([1], Float32Array.of(0.5)));
    const out = join(dir, 'mods.npy');
    const lse = join(dir, 'mods-lse.npy');
    const run = cli(['sdpa', Q, K, V, out, '--score-mod', scoreFile, '--mask-mod', maskFile, '--mod-buffer', `half=${halfPath}`, '--mod-buffer', `keep=${keepPath}`, '--lse', lse, '--json']);
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as { impl: string }).impl).toBe('attention-fp32');
    const exact = sdpaOracle(sdpaProblem(dims, { scale: 0.125, causal: true, mask: { kind: 'bool', data: Uint8Array.from(keep), shape: [13] } }), q, k, v);
    expect(maxAbs(parseNpy(readFileSync(out)).data as Float32Array, exact.out)).toBeLessThan(1e-5);
    expect(maxAbs(parseNpy(readFileSync(lse)).data as Float32Array, exact.lse)).toBeLessThan(1e-5);
    const broken = join(dir, 'broken.wgsl');
    writeFileSync(broken, 'fn score_mod(s: f32, b: u32, h: u32, q: u32, k: u32) -> f32 {\n  return s * halff[0];\n}\n');
    const never = join(dir, 'never-broken.npy');
    const bad = cli(['sdpa', Q, K, V, never, '--score-mod', broken, '--mod-buffer', `half=${halfPath}`]);
    expect(bad.code, bad.stderr).toBe(2);
    expect(ownLines(bad.stderr), bad.stderr).toHaveLength(1);
    expect(bad.stderr).toMatch(/--score-mod .*broken\.wgsl:2:14: .*halff/);
    expect(existsSync(never)).toBe(false);
  }, 600_000);
});
