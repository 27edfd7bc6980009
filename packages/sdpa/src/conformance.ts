/**
 * The awkward cases of the attention kernels and the check each one gets against the float64 oracle: the Node suite
 * (the software GPU), the browser suite (headless Chromium) and `hw4-cli sdpa --conformance` (any GPU, every kernel
 * it has) run them. They are grouped so that they share few pipelines: each distinct set of kernel constants is one
 * compile, minutes on a software GPU with a cold shader cache.
 */
import { rowOffset, SdpaArgumentError, sdpaProblem, valueHeadSize, type GpuContext, type SdpaDims, type SdpaOptions } from '@fa/core';
import { sdpaFloat16Plain, sdpaFloat32, sdpaOracle } from '@fa/reference';
import { lengthsAfter, prepareCacheAppend } from './cache/append-cache.js';
import { floatsToHalves, halvesToFloats } from './f16.js';
import { evaluateMods } from './mods/mod-host.js';
import type { TensorType } from './kernel-support.js';
import { plannedOnly, prepareAttention, type AttentionPlan, type GpuKernelId } from './prepare.js';

/** Deterministic values in [−range, range). */
export function values(count: number, seed: number, range = 3): Float32Array {
  let state = seed >>> 0;
  return Float32Array.from({ length: count }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state / 2 ** 32) * 2 * range - range;
  });
}

/** q, k and v of the dimensions (v of V's head size dv), deterministic from `seed`. */
export function tensors(dims: SdpaDims, seed: number): { q: Float32Array; k: Float32Array; v: Float32Array } {
  const { B, Hq, Hkv, Lq, Lk, d } = dims;
  return { q: values(B * Hq * Lq * d, seed), k: values(B * Hkv * Lk * d, seed + 1), v: values(B * Hkv * Lk * valueHeadSize(dims), seed + 2) };
}

/** Largest |a − b|; equal values (−∞ and −∞ included) count 0, a non-finite difference Infinity. */
export function maxAbs(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let worst = 0;
  for (let x = 0; x < a.length; x++) {
    const ax = a[x] as number;
    const bx = b[x] as number;
    if (ax === bx) continue;
    worst = Math.max(worst, Number.isFinite(ax) && Number.isFinite(bx) ? Math.abs(ax - bx) : Number.POSITIVE_INFINITY);
  }
  return worst;
}

const boolMask = (count: number, seed: number): Uint8Array => Uint8Array.from(values(count, seed), (x) => (x > -1 ? 1 : 0));

/** float32's most negative value, −3.4028235e38: what Hugging Face's models add for padding. */
export const FLOAT32_LOWEST = -3.4028234663852886e38;

/**
 * An additive [Lq, Lk] mask of values near float32's limits, row by row (rows past 6 take ordinary values in ±3):
 * 0: float32's most negative value on every key; 1: −3e38 on every key (a constant leaves the softmax unchanged, and
 * float32 absorbs the scores into it, as the plain computation does: equal weights); 2: +3e38 on keys 3 and Lk − 2 (they
 * share the row); 3: −∞ on key 7, float32's most negative value on key 9, 0 elsewhere; 4: −3e38 and −1e38 on alternate
 * keys (only the −1e38 keys count); 5: −1e30 on every key; 6: float32's most negative value on even keys, 0 on odd.
 */
export function limitsMask(Lq: number, Lk: number, seed = 5): Float32Array {
  const mask = values(Lq * Lk, seed);
  const rows: ((j: number) => number)[] = [
    () => FLOAT32_LOWEST,
    () => -3e38,
    (j) => (j === 3 || j === Lk - 2 ? 3e38 : 0),
    (j) => (j === 7 ? Number.NEGATIVE_INFINITY : j === 9 ? FLOAT32_LOWEST : 0),
    (j) => (j % 2 === 0 ? -3e38 : -1e38),
    () => -1e30,
    (j) => (j % 2 === 0 ? FLOAT32_LOWEST : 0),
  ];
  rows.forEach((value, i) => {
    if (i < Lq) for (let j = 0; j < Lk; j++) mask[i * Lk + j] = value(j);
  });
  return mask;
}

export interface Case {
  name: string;
  dims: SdpaDims;
  options?: SdpaOptions;
  /** The kernel the case runs on (the default choice otherwise). */
  kernel?: GpuKernelId;
  /**
   * Rows appended to each batch's cache on the GPU (`prepareCacheAppend`) before the attention, in the same encoder,
   * which then reads the advanced lengths: the case's cacheLengths are those before the append.
   */
  append?: number;
}

/**
 * Grouped by kernel constants: the prefill kernel's head size (its masks are uniforms), the decode kernel's head size
 * and rows per KV head (4 or 32 here), each one pipeline.
 */
/** A relative-position bias table per head (`bias`, 41 distances) and documents (`docs`, 40 positions a batch). */
const DOCUMENT_BIAS = 'fn score_mod(s: f32, b: u32, h: u32, q: u32, k: u32) -> f32 {\n  return s + bias[h * 41u + clamp(q - k, 0u, 40u)];\n}';
const DOCUMENTS = 'fn mask_mod(b: u32, h: u32, q: u32, k: u32) -> bool {\n  return docs[b * 40u + q] == docs[b * 40u + k];\n}';

export const GROUPS: { name: string; cases: Case[] }[] = [
  {
    name: 'd = 64, bands',
    cases: [
      { name: 'GQA 4, causal, Lq = Lk = 77', dims: { B: 2, Hq: 4, Hkv: 1, Lq: 77, Lk: 77, d: 64 }, options: { causal: true } },
      // Row blocks that see different numbers of key tiles: equal-length key ranges, some of them empty.
      { name: 'causal, Lq = Lk = 300: key ranges of equal length under the band', dims: { B: 1, Hq: 2, Hkv: 1, Lq: 300, Lk: 300, d: 64 }, options: { causal: true }, kernel: 'attention-fp32' },
      { name: 'Lq = 1 over 130 keys, bshd', dims: { B: 1, Hq: 2, Hkv: 2, Lq: 1, Lk: 130, d: 64 }, options: { layout: 'bshd' }, kernel: 'attention-fp32' },
      { name: 'Lq = 100 > Lk = 37, causal: rows that see nothing', dims: { B: 1, Hq: 1, Hkv: 1, Lq: 100, Lk: 37, d: 64 }, options: { causal: true } },
      { name: 'window [5, 3], Lq < Lk', dims: { B: 1, Hq: 2, Hkv: 1, Lq: 40, Lk: 90, d: 64 }, options: { window: [5, 3] } },
      { name: 'Lk = 1, GQA 8', dims: { B: 1, Hq: 8, Hkv: 1, Lq: 9, Lk: 1, d: 64 } },
      { name: 'scale 0.3, bshd, GQA 2, causal', dims: { B: 2, Hq: 4, Hkv: 2, Lq: 33, Lk: 50, d: 64 }, options: { scale: 0.3, layout: 'bshd', causal: true } },
      { name: 'a grid large enough not to split keys, causal', dims: { B: 40, Hq: 16, Hkv: 4, Lq: 8, Lk: 20, d: 64 }, options: { causal: true }, kernel: 'attention-fp32' },
      // 336 row blocks of 3 key tiles (Bc = 32 at d = 64): two ranges of 2 tiles and 1, dispatched range by range (key-ranges.ts).
      { name: 'key ranges of 2 tiles and 1, range by range, GQA 7', dims: { B: 4, Hq: 84, Hkv: 12, Lq: 16, Lk: 96, d: 64 }, kernel: 'attention-fp32' },
      { name: 'chunked prefill over caches of 70 and 25 of 70 keys, causal, GQA 2', dims: { B: 2, Hq: 4, Hkv: 2, Lq: 20, Lk: 70, d: 64 }, options: { causal: true, cacheLengths: [70, 25] }, kernel: 'attention-fp32' },
      // Softcap, ALiBi and sinks (uniform switches of the same pipeline): Lk ≤ 32 is one key tile, O normalized where the
      // row ends (finish); 45 keys are two key ranges, merged by `combine`, where the sinks enter then.
      { name: 'softcap 2: scores c·tanh(s/c), Lq < Lk, two key ranges', dims: { B: 1, Hq: 2, Hkv: 1, Lq: 20, Lk: 45, d: 64 }, options: { softcap: 2 }, kernel: 'attention-fp32' },
      { name: 'sinks, Lq = 40 > Lk = 17, causal: rows that see nothing (O = 0, log-sum-exp the sink)', dims: { B: 1, Hq: 2, Hkv: 1, Lq: 40, Lk: 17, d: 64 }, options: { causal: true, sinks: Float32Array.of(0.5, 4) }, kernel: 'attention-fp32' },
      { name: 'ALiBi slopes 2^-2 … 2^-8, causal, GQA 4', dims: { B: 2, Hq: 4, Hkv: 1, Lq: 30, Lk: 30, d: 64 }, options: { causal: true, alibiSlopes: Float32Array.of(2 ** -2, 2 ** -4, 2 ** -6, 2 ** -8) }, kernel: 'attention-fp32' },
      // On the default kernel (attention-matrix with f16 tensors where it runs): one key tile, so the kernel itself
      // normalizes O with the sinks and writes the log-sum-exp; and ALiBi's distances from each batch's own diagonal.
      { name: 'softcap, ALiBi and sinks in one key range with its log-sum-exp, causal, GQA 2', dims: { B: 1, Hq: 4, Hkv: 2, Lq: 24, Lk: 28, d: 64 }, options: { causal: true, softcap: 3, alibiSlopes: Float32Array.of(0.5, 0.25, 0.125, 0.0625), sinks: Float32Array.of(1, -1, 0, 2) } },
      { name: 'ALiBi over caches of 70 and 25 of 70 keys, chunked prefill, causal, GQA 2', dims: { B: 2, Hq: 4, Hkv: 2, Lq: 20, Lk: 70, d: 64 }, options: { causal: true, cacheLengths: [70, 25], alibiSlopes: Float32Array.of(0.5, 0.25, 0.125, 0.0625) } },
      {
        name: 'softcap, ALiBi and sinks with an additive mask [Lq, Lk] and a row of −∞, two key ranges',
        dims: { B: 1, Hq: 2, Hkv: 1, Lq: 20, Lk: 45, d: 64 },
        options: {
          softcap: 3,
          alibiSlopes: Float32Array.of(0.3, 0.05),
          sinks: Float32Array.of(-1, 2),
          mask: { kind: 'additive', data: Float32Array.from(values(20 * 45, 11), (x, e) => (Math.floor(e / 45) === 5 || e % 7 === 0 ? Number.NEGATIVE_INFINITY : x)), shape: [20, 45] },
        },
        kernel: 'attention-fp32',
      },
    ],
  },
  {
    name: 'decode (d = 64): the query heads of a KV group together, keys split over workgroups',
    cases: [
      { name: 'one query row, GQA 4, 1000 keys', dims: { B: 2, Hq: 8, Hkv: 2, Lq: 1, Lk: 1000, d: 64 }, kernel: 'attention-decode' },
      // 37 key ranges of the lane loop's 32-key steps (19 of 64 with f16 tensors): more than its merge loads at once (32).
      { name: 'one query row, GQA 4, 4700 keys: more key ranges than combine reads at once', dims: { B: 1, Hq: 4, Hkv: 1, Lq: 1, Lk: 4700, d: 64 }, kernel: 'attention-decode' },
      { name: 'four rows (speculative), GQA 8, causal, 301 keys', dims: { B: 1, Hq: 8, Hkv: 1, Lq: 4, Lk: 301, d: 64 }, options: { causal: true }, kernel: 'attention-decode' },
      { name: 'Lk = 2 under 4 rows, causal: rows that see nothing', dims: { B: 1, Hq: 2, Hkv: 2, Lq: 4, Lk: 2, d: 64 }, options: { causal: true }, kernel: 'attention-decode' },
      { name: '16 rows, window [7, 0], bshd', dims: { B: 1, Hq: 2, Hkv: 1, Lq: 16, Lk: 77, d: 64 }, options: { window: [7, 0], layout: 'bshd' }, kernel: 'attention-decode' },
      // A cache preallocated to Lk keys of which each batch holds its own number (0 included): the band aligns to it.
      { name: 'cache lengths 57, 0, 20 of 57: one row, GQA 4', dims: { B: 3, Hq: 8, Hkv: 2, Lq: 1, Lk: 57, d: 64 }, options: { cacheLengths: [57, 0, 20] }, kernel: 'attention-decode' },
      { name: 'cache lengths 3, 33 of 40 under 4 causal rows: a row that sees nothing', dims: { B: 2, Hq: 2, Hkv: 2, Lq: 4, Lk: 40, d: 64 }, options: { causal: true, cacheLengths: [3, 33] }, kernel: 'attention-decode' },
      { name: 'cache lengths 31, 9 of 31, 8 rows, window [5, 0], GQA 4, bshd', dims: { B: 2, Hq: 4, Hkv: 1, Lq: 8, Lk: 31, d: 64 }, options: { window: [5, 0], layout: 'bshd', cacheLengths: [31, 9] }, kernel: 'attention-decode' },
      { name: 'Lk = 1, cache lengths 1, 0', dims: { B: 2, Hq: 4, Hkv: 1, Lq: 1, Lk: 1, d: 64 }, options: { cacheLengths: [1, 0] }, kernel: 'attention-decode' },
      // ALiBi's distances align to each batch's cache length, as the band does; the sinks enter in `combine`.
      {
        name: 'softcap, ALiBi and sinks over caches of 3 and 150 of 200, 4 causal rows: a row that sees nothing, four key ranges',
        dims: { B: 2, Hq: 2, Hkv: 2, Lq: 4, Lk: 200, d: 64 },
        options: { causal: true, cacheLengths: [3, 150], softcap: 2.5, alibiSlopes: Float32Array.of(0.25, 0.0625), sinks: Float32Array.of(1, -2) },
        kernel: 'attention-decode',
      },
      {
        name: '3 rows appended on the GPU to caches of 5 and 0 of 40, then 3 causal rows in the same encoder, bshd',
        dims: { B: 2, Hq: 2, Hkv: 2, Lq: 3, Lk: 40, d: 64 },
        options: { causal: true, layout: 'bshd', cacheLengths: [5, 0] },
        kernel: 'attention-decode',
        append: 3,
      },
    ],
  },
  {
    name: 'd = 8',
    cases: [
      { name: 'window [−1, 4], GQA 2', dims: { B: 1, Hq: 2, Hkv: 1, Lq: 33, Lk: 65, d: 8 }, options: { window: [-1, 4] } },
      // One invocation per row group (16 keys per step) where the head is this small.
      { name: 'softcap, ALiBi and sinks, window [−1, 4], GQA 2', dims: { B: 1, Hq: 2, Hkv: 1, Lq: 33, Lk: 65, d: 8 }, options: { window: [-1, 4], softcap: 1, alibiSlopes: Float32Array.of(0.5, 0.125), sinks: Float32Array.of(0, 1) } },
    ],
  },
  {
    name: 'd = 128',
    cases: [
      { name: 'causal, Lq < Lk', dims: { B: 1, Hq: 1, Hkv: 1, Lq: 40, Lk: 50, d: 128 }, options: { causal: true } },
      // Four rows per group where the GPU's subgroups allow it at d = 128.
      { name: 'softcap, ALiBi and sinks, causal, Lq < Lk', dims: { B: 1, Hq: 2, Hkv: 1, Lq: 40, Lk: 50, d: 128 }, options: { causal: true, softcap: 2, alibiSlopes: Float32Array.of(0.25, 0.0625), sinks: Float32Array.of(1, -1) } },
      // Scale 1: the scores spread so far that the rows' running maxima move past the lazy rescale's threshold from
      // tile to tile, and 80 row blocks split 32 tiles into ranges of several: the matrix kernel's rescale of O (apart
      // from its tile loop) runs. 1024 keys with no band: whole tiles with no exact test compiled in; 1000, causal:
      // the band's test, and a last tile that crosses Lk.
      { name: 'scale 1, 1024 keys in ranges of several tiles: maxima that move from tile to tile', dims: { B: 4, Hq: 20, Hkv: 4, Lq: 16, Lk: 1024, d: 128 }, options: { scale: 1 } },
      { name: 'scale 1, 1000 keys in ranges of several tiles, causal', dims: { B: 4, Hq: 20, Hkv: 4, Lq: 16, Lk: 1000, d: 128 }, options: { scale: 1, causal: true } },
    ],
  },
  {
    name: 'd = 80, element masks',
    cases: [
      {
        name: 'additive mask over keys, broadcast from [Lk]',
        dims: { B: 1, Hq: 2, Hkv: 1, Lq: 20, Lk: 45, d: 80 },
        options: { mask: { kind: 'additive', data: Float32Array.from(values(45, 9), (x, j) => (j % 7 === 0 ? Number.NEGATIVE_INFINITY : x)), shape: [45] } },
      },
      {
        // Finite values mean what they say, however large: −3.4e38 is a low score, not an exclusion; +3e38 overflows nothing.
        name: 'additive mask near float32\'s limits: rows of −3.4028235e38, −3e38, −1e30, +3e38 on two keys, −3e38 beside −1e38',
        dims: { B: 1, Hq: 2, Hkv: 1, Lq: 20, Lk: 45, d: 80 },
        options: { mask: { kind: 'additive', data: limitsMask(20, 45), shape: [20, 45] } },
      },
      {
        name: 'boolean mask [B, 1, Lq, Lk] with an empty row, causal',
        dims: { B: 2, Hq: 2, Hkv: 2, Lq: 12, Lk: 30, d: 80 },
        options: { causal: true, mask: { kind: 'bool', data: boolMask(2 * 12 * 30, 4).map((x, e) => (Math.floor(e / 30) % 12 === 5 ? 0 : x)), shape: [2, 1, 12, 30] } },
      },
    ],
  },
  {
    // One pipeline set of its own (the functions are compiled into the kernel, with the pre-pass that lists tiles).
    name: 'd = 16, score and mask functions',
    cases: [
      {
        name: 'packed documents (a mask function over document ids) with a relative-position bias table, causal, softcap, sinks, GQA 2',
        dims: { B: 2, Hq: 2, Hkv: 1, Lq: 40, Lk: 40, d: 16 },
        options: {
          causal: true,
          softcap: 4,
          sinks: Float32Array.of(0.5, -1),
          scoreMod: DOCUMENT_BIAS,
          maskMod: DOCUMENTS,
          // Batch 0: documents of 7, 20 and 13 tokens; batch 1: one of 40. A bias per head and distance 0 … 40.
          modBuffers: { docs: Int32Array.from({ length: 80 }, (_, t) => (t < 40 ? (t < 7 ? 0 : t < 27 ? 1 : 2) : 0)), bias: Float32Array.from(values(82, 13), (x) => x / 3) },
        },
        kernel: 'attention-fp32',
      },
      {
        // ALiBi visits each key range of a row block's list backwards. The functions are the case above's (so the same
        // pipelines run it); the 20 rows and keys 0-19 are document 1, keys 20-299 document 0 and 300-3199 document 1,
        // under the causal band k ≤ q + 3180. The list holds whole tiles and partial ones (a document's edge, the
        // diagonal) in the same ranges (about 180 tiles in at most 24), so each tile's flag must be read for the tile
        // the step visits.
        name: 'documents (the functions above) with ALiBi, 20 rows over 3200 keys: whole and partial tiles in one key range, causal, GQA 2',
        dims: { B: 1, Hq: 2, Hkv: 1, Lq: 20, Lk: 3200, d: 16 },
        options: {
          causal: true,
          alibiSlopes: Float32Array.of(2 ** -8, 2 ** -10),
          scoreMod: DOCUMENT_BIAS,
          maskMod: DOCUMENTS,
          modBuffers: { docs: Int32Array.from({ length: 3200 }, (_, t) => (t >= 20 && t < 300 ? 0 : 1)), bias: Float32Array.from(values(82, 13), (x) => x / 3) },
        },
        kernel: 'attention-fp32',
      },
    ],
  },
  {
    // Three pipelines: attention-fp32 at d = 256 (Gemma's head size) and at d = 48 with dv = 32, attention-decode with
    // dv > d (DeepSeek's MLA has d = 192, dv = 128).
    name: 'head sizes: d = 256, V\'s own head size dv',
    cases: [
      { name: 'd = 256, causal, GQA 2', dims: { B: 1, Hq: 2, Hkv: 1, Lq: 20, Lk: 20, d: 256 }, options: { causal: true }, kernel: 'attention-fp32' },
      // With f16 tensors where the matrix kernel runs: teams of two subgroups per 16 rows, three row blocks (the last
      // partial) over seven 32-key tiles (the last partial), the band crossing them.
      { name: 'd = 256, causal, Lq = 150 < Lk = 200, GQA 2, on the default kernel', dims: { B: 1, Hq: 4, Hkv: 2, Lq: 150, Lk: 200, d: 256 }, options: { causal: true } },
      {
        name: 'd = 16, dv = 8, additive mask [Lq, Lk] with −∞, GQA 2, two key ranges',
        dims: { B: 1, Hq: 2, Hkv: 1, Lq: 20, Lk: 45, d: 16, dv: 8 },
        options: { mask: { kind: 'additive', data: Float32Array.from(values(20 * 45, 23), (x, e) => (e % 5 === 0 ? Number.NEGATIVE_INFINITY : x)), shape: [20, 45] } },
        kernel: 'attention-fp32',
      },
      { name: 'd = 32, dv = 64 > d, 3 causal rows, GQA 2, bshd', dims: { B: 2, Hq: 4, Hkv: 2, Lq: 3, Lk: 70, d: 32, dv: 64 }, options: { causal: true, layout: 'bshd' }, kernel: 'attention-decode' },
    ],
  },
  {
    name: 'd = 64, block masks',
    cases: [
      {
        name: 'blocks of 16 × 16 with an empty row of blocks',
        dims: { B: 1, Hq: 2, Hkv: 2, Lq: 70, Lk: 100, d: 64 },
        options: { blockMask: { rows: 16, keys: 16, data: Uint8Array.from({ length: 5 * 7 }, (_, e) => (Math.floor(e / 7) === 2 ? 0 : (e * 5) % 3 === 0 ? 1 : 0)), shape: [5, 7] } },
      },
    ],
  },
];

export interface CaseCheck {
  /** The kernel that ran the case. */
  impl: string;
  /**
   * Largest error of O against float64, and the most it may be: 2× the plain computation's at the tensors' precision
   * (float32: `sdpaFloat32`, or 1e-6; f16: `sdpaFloat16Plain` with O rounded to f16, or 2^-11 of the largest |O|).
   */
  error: number;
  limit: number;
  /**
   * The same for the log-sum-exps, except that a row whose log-sum-exp passes ±2^20 (a mask's huge values) is allowed
   * 2^-20 of its size beyond that: the kernels' base-2 arithmetic (and their map of mask values past ±5.9e37) costs a
   * few float32 units in the last place there, where the plain computation adds the mask in natural units (`lseError`).
   */
  lseError: number;
  lseLimit: number;
}

/** Largest |L − L_exact| over the rows, less 2^-20·|L_exact| where |L_exact| > 2^20 (see CaseCheck); −∞ and −∞ count 0. */
export function lseError(got: ArrayLike<number>, exact: ArrayLike<number>): number {
  let worst = 0;
  for (let x = 0; x < got.length; x++) {
    const e = exact[x] as number;
    const error = maxAbs([got[x] as number], [e]);
    worst = Math.max(worst, Math.abs(e) > 2 ** 20 ? Math.max(0, error - 2 ** -20 * Math.abs(e)) : error);
  }
  return worst;
}

export interface CheckOptions {
  /** The kernel to run it on instead of the case's own (or the default choice). */
  readonly kernel?: GpuKernelId;
  /** The tensors' element type (default f32): f16 tensors are the case's values rounded to f16. */
  readonly dtype?: TensorType;
  /**
   * The case's plan, from `planAttention(gpu, c.dims, { ...c.options, lse: true, dtype, kernel })` (a caller that
   * asked first whether the kernel runs the case): prepared as it is, not planned again. Its dtype and kernel are
   * the check's; `kernel` and `dtype` are then left out.
   */
  readonly plan?: AttentionPlan;
}

/** Runs one case on a GPU kernel and measures it against the oracle and the plain computation. */
export async function checkCase(gpu: GpuContext, c: Case, how: CheckOptions = {}): Promise<CaseCheck> {
  const plan = how.plan === undefined ? undefined : plannedOnly(how.plan, 'plan');
  if (plan && (!plan.options.lse || (Object.keys(c.dims) as (keyof SdpaDims)[]).some((name) => plan.problem.dims[name] !== c.dims[name]))) {
    throw new SdpaArgumentError(`the plan is not for case "${c.name}": plan its dimensions with lse: true`);
  }
  const kernel = plan?.options.kernel ?? how.kernel ?? c.kernel;
  const dtype = plan?.options.dtype ?? how.dtype ?? 'f32';
  if (c.append !== undefined) return checkAppend(gpu, { ...c, ...(kernel ? { kernel } : {}) }, c.append, plan);
  const { dims, options } = c;
  const values32 = tensors(dims, 17);
  // f16 tensors: the case's values rounded to f16, and the references computed on those values.
  const halves = dtype === 'f16' ? ([values32.q, values32.k, values32.v].map((x) => floatsToHalves(x)) as [Uint16Array, Uint16Array, Uint16Array]) : undefined;
  const [q, k, v] = halves ? (halves.map((x) => halvesToFloats(x)) as [Float32Array, Float32Array, Float32Array]) : [values32.q, values32.k, values32.v];
  const problem = plan?.problem ?? sdpaProblem(dims, options);
  // Score and mask functions are WGSL: their values for the references are evaluated on the GPU (evaluateMods).
  const mods = problem.mods ? await evaluateMods(gpu, problem, q, k) : undefined;
  const exact = sdpaOracle(problem, q, k, v, mods);
  const plain = sdpaFloat32(problem, q, k, v, mods);
  const prepared = plan ? await prepareAttention(gpu, plan) : await prepareAttention(gpu, dims, { ...options, lse: true, dtype, ...(kernel ? { kernel } : {}) });
  try {
    const ran = halves ? await prepared.run(...halves) : await prepared.run(q, k, v);
    const out = halves ? halvesToFloats(ran.out as Uint16Array) : (ran.out as Float32Array);
    // f16: the plain f16 computation's output rounded to f16 as the kernel's is; at least one such rounding of the
    // largest output (2^-11 of it) is allowed, the error an f16 output can carry with nothing else wrong.
    const plain16 = halves ? sdpaFloat16Plain(problem, q, k, v, mods) : undefined;
    const plainOut = plain16 ? halvesToFloats(floatsToHalves(Float32Array.from(plain16.out))) : plain.out;
    const plainLse = plain16 ? plain16.lse : plain.lse;
    const outFloor = halves ? 2 ** -11 * maxAbs(exact.out, new Float64Array(exact.out.length)) : 1e-6;
    return {
      impl: prepared.impl,
      error: maxAbs(out, exact.out),
      limit: Math.max(2 * maxAbs(plainOut, exact.out), outFloor),
      lseError: lseError(ran.lse ?? [], exact.lse),
      lseLimit: Math.max(2 * lseError(plainLse, exact.lse), 1e-5),
    };
  } finally {
    prepared.dispose();
  }
}

/** A copy of `buffer`'s first `bytes` bytes, read back. */
export async function readBack(device: GPUDevice, buffer: GPUBuffer, bytes: number): Promise<ArrayBuffer> {
  const read = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(buffer, 0, read, 0, bytes);
  device.queue.submit([encoder.finish()]);
  await read.mapAsync(GPUMapMode.READ);
  const copy = read.getMappedRange().slice(0);
  read.destroy();
  return copy;
}

/**
 * The cache case: new rows appended on the GPU at each batch's length, then the attention encoded after it in the
 * same encoder, against the oracle on the cache as it should be after the append, with the advanced lengths.
 */
async function checkAppend(gpu: GpuContext, { dims, options = {}, kernel }: Case, Lnew: number, plan: AttentionPlan | undefined): Promise<CaseCheck> {
  const { B, Hq, Hkv, Lq, Lk, d } = dims;
  const layout = options.layout ?? 'bhsd';
  const before = Array.from(options.cacheLengths ?? []);
  const appended = { B, Hkv, Lk, Lnew, d };
  const after = lengthsAfter(before, appended);
  const { q, k, v } = tensors(dims, 17);
  const kNew = values(B * Hkv * Lnew * d, 31);
  const vNew = values(B * Hkv * Lnew * d, 32);
  const [kExpected, vExpected] = [Float32Array.from(k), Float32Array.from(v)];
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < Hkv; h++) {
      for (let r = 0; r < Lnew; r++) {
        const from = rowOffset(layout, Hkv, Lnew, d, b, h, r);
        const to = rowOffset(layout, Hkv, Lk, d, b, h, (before[b] as number) + r);
        kExpected.set(kNew.subarray(from, from + d), to);
        vExpected.set(vNew.subarray(from, from + d), to);
      }
    }
  }
  const problem = sdpaProblem(dims, { ...options, cacheLengths: after });
  const exact = sdpaOracle(problem, q, kExpected, vExpected);
  const plain = sdpaFloat32(problem, q, kExpected, vExpected);
  const { device } = gpu;
  const buffer = (data: ArrayBufferView | number, usage = 0): GPUBuffer => {
    const size = typeof data === 'number' ? data : data.byteLength;
    const made = device.createBuffer({ size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC | usage });
    if (typeof data !== 'number') device.queue.writeBuffer(made, 0, data.buffer, data.byteOffset, data.byteLength);
    return made;
  };
  const buffers = {
    q: buffer(q),
    k: buffer(k),
    v: buffer(v),
    kNew: buffer(kNew),
    vNew: buffer(vNew),
    cacheLengths: buffer(Uint32Array.from(before)),
    out: buffer(q.byteLength),
    lse: buffer(B * Hq * Lq * 4),
  };
  const append = await prepareCacheAppend(gpu, appended, { layout });
  const prepared = plan ? await prepareAttention(gpu, plan) : await prepareAttention(gpu, dims, { ...options, lse: true, ...(kernel ? { kernel } : {}) });
  try {
    const encoder = device.createCommandEncoder();
    append.encode(encoder, buffers);
    prepared.encode(encoder, buffers);
    device.queue.submit([encoder.finish()]);
    const out = new Float32Array(await readBack(device, buffers.out, q.byteLength));
    const lse = new Float32Array(await readBack(device, buffers.lse, B * Hq * Lq * 4));
    const lengths = Array.from(new Uint32Array(await readBack(device, buffers.cacheLengths, 4 * B)));
    const cache = new Float32Array(await readBack(device, buffers.k, k.byteLength));
    // A wrong length or a row copied to the wrong place shows as an error no limit allows.
    const lengthError = lengths.every((n, b) => n === after[b]) && maxAbs(cache, kExpected) === 0 ? 0 : Number.POSITIVE_INFINITY;
    return {
      impl: prepared.impl,
      error: Math.max(maxAbs(out, exact.out), lengthError),
      limit: Math.max(2 * maxAbs(plain.out, exact.out), 1e-6),
      lseError: maxAbs(lse, exact.lse),
      lseLimit: Math.max(2 * maxAbs(plain.lse, exact.lse), 1e-5),
    };
  } finally {
    prepared.dispose();
    append.dispose();
    for (const made of Object.values(buffers)) made.destroy();
  }
}
