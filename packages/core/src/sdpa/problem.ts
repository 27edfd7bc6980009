/**
 * Scaled-dot-product attention as models call it, PyTorch's `scaled_dot_product_attention` semantics with
 * FlashAttention-2's alignment: the shapes, the options, their validation, and the one definition of which keys a query
 * sees. The float64 oracle (@fa/reference), the CPU path and the GPU kernels (@fa/sdpa) all read these.
 *
 * - q [B, Hq, Lq, d], k [B, Hkv, Lk, d] and v [B, Hkv, Lk, dv] (layout 'bhsd', PyTorch's), or [B, L, H, ·] (layout
 *   'bshd'); the output is [B, Hq, Lq, dv] (or [B, Lq, Hq, dv]). V's head size dv is d unless given (DeepSeek's MLA:
 *   d = 192, dv = 128).
 * - Hq is a multiple of Hkv; query head h reads KV head ⌊h / (Hq/Hkv)⌋ (grouped-query attention).
 * - Scores s_ij = scale·q_i·k_j (scale 1/√d by default), plus an additive mask where given.
 * - Query i sees key j iff j lies in the band [i + Lk − Lq − left, i + Lk − Lq + right] (left, right from `window`,
 *   −1 for unbounded; `causal` sets right to 0: FlashAttention-2's bottom-right alignment), the block mask keeps its
 *   block, and a boolean mask keeps the element.
 * - With `cacheLengths`, batch b holds only its first cacheLengths[b] keys (a KV cache preallocated to Lk rows): the
 *   rest are excluded, and the band is aligned to that length: Lk above reads cacheLengths[b] (FlashAttention-2's
 *   `cache_seqlens`, counting the rows just appended).
 * - A row that sees no key gives 0 (FlashAttention's convention; PyTorch gives NaN), and its log-sum-exp is −∞.
 * - Softcap, ALiBi and sinks, in FlashAttention-2's and FlexAttention's order: s = scale·q·k, then s = c·tanh(s/c)
 *   (`softcap` c), then s −= slope_h·|(i + Lk − Lq) − j| (`alibiSlopes`, one per query head h, the distance from the
 *   bottom-right diagonal, Lk the batch's cache length where one is given), then the additive mask, then the exclusions
 *   (boolean mask, band, block mask), then the softmax with each query head's sink logit in its denominator
 *   (`sinks`: a key whose value row is 0), O_i = Σ_j e^{s_ij} v_j / (Σ_j e^{s_ij} + e^{sink_h}). A row that sees no
 *   key then gives 0 by that formula, and its log-sum-exp is log e^{sink_h} = sink_h.
 * - Score and mask functions in WGSL (`scoreMod`, `maskMod`, mods.ts): s = score_mod(s, b, h, q, k) comes first, before
 *   the softcap; mask_mod(b, h, q, k) = false excludes the key, among the other exclusions. The full order:
 *   scale·q·k → score_mod → softcap → ALiBi → additive mask → exclusions (boolean mask, band, mask_mod, block mask,
 *   cache length) → softmax with the sink.
 */

import { modsOf, type SdpaModBuffer, type SdpaMods } from './mods.js';
import { checkDimsObject, checkSdpaOptions, describeValue } from './validate-options.js';

export { MASK_MOD_SIGNATURE, MOD_SCORE_LIMIT, modsOf, SCORE_MOD_SIGNATURE, type GpuModBuffer, type ModBufferEntry, type ModBufferType, type SdpaModBuffer, type SdpaMods } from './mods.js';

export { checkDimsObject, checkOptionKeys, checkSdpaOptions, closestKey, describeValue, SDPA_OPTION_KEYS, sdpaOptionsOf } from './validate-options.js';

export type SdpaLayout = 'bhsd' | 'bshd';

export interface SdpaDims {
  readonly B: number;
  /** Query heads. */
  readonly Hq: number;
  /** Key/value heads: Hq is a multiple of it. */
  readonly Hkv: number;
  /** Query rows per head. */
  readonly Lq: number;
  /** Keys per head. */
  readonly Lk: number;
  /** Head size of q and k (and of v and the output, unless dv is given). */
  readonly d: number;
  /** Head size of v and the output, when it differs from d (PyTorch's SDPA takes v with its own last dimension). */
  readonly dv?: number;
}

/** V's (and the output's) head size: dv where given, else d. */
export function valueHeadSize(dims: SdpaDims): number {
  return dims.dv ?? dims.d;
}

/** An element mask, broadcast to [B, Hq, Lq, Lk] from `shape` as PyTorch broadcasts (trailing dimensions aligned). */
export type SdpaMask =
  | { readonly kind: 'bool'; readonly data: Uint8Array; readonly shape: readonly number[] }
  | { readonly kind: 'additive'; readonly data: Float32Array; readonly shape: readonly number[] };

/**
 * A block mask: one flag per (query block, key block), 1 = computed; broadcast to [B, Hq, ⌈Lq/rows⌉, ⌈Lk/keys⌉] from
 * `shape`. A block that is 0 is skipped whole (the block-sparse attention of the FlashAttention paper, §3.3).
 */
export interface SdpaBlockMask {
  readonly rows: number;
  readonly keys: number;
  readonly data: Uint8Array;
  readonly shape: readonly number[];
}

export interface SdpaOptions {
  /** Multiplies q·k; default 1/√d. */
  readonly scale?: number;
  /** Bottom-right aligned causal mask: query i sees key j iff j ≤ i + Lk − Lq. */
  readonly causal?: boolean;
  /** FlashAttention-2's window_size: keys from i + Lk − Lq − left to i + Lk − Lq + right; −1 is unbounded. */
  readonly window?: readonly [number, number];
  readonly mask?: SdpaMask;
  readonly blockMask?: SdpaBlockMask;
  readonly layout?: SdpaLayout;
  /**
   * The valid keys of each batch's cache, B integers from 0 to Lk: batch b attends to keys 0 … cacheLengths[b] − 1
   * only, and causal masks and windows align to that length. The rest of the buffer is ignored, so a caller
   * preallocates Lk rows once and appends (@fa/sdpa's `prepareCacheAppend`).
   */
  readonly cacheLengths?: ArrayLike<number>;
  /**
   * Logit softcapping (Gemma 2's `attn_logit_softcapping`): each score s = scale·q·k becomes c·tanh(s/c), within ±c,
   * before ALiBi and the masks. A positive finite number.
   */
  readonly softcap?: number;
  /**
   * Attention sinks (gpt-oss's): one logit per query head, Hq finite values, that every row's softmax counts in its
   * denominator as a key whose value row is 0: O_i = Σ_j e^{s_ij} v_j / (Σ_j e^{s_ij} + e^{sink_h}).
   */
  readonly sinks?: Float32Array;
  /**
   * ALiBi: one slope per query head, Hq finite values; score (i, j) of head h gets −slope_h·|(i + Lk − Lq) − j|, its
   * distance from the bottom-right diagonal (Lk: the batch's cache length where one is given), after the softcap and
   * before the additive mask.
   */
  readonly alibiSlopes?: Float32Array;
  /**
   * A score function in WGSL (mods.ts): source that defines fn score_mod(s: f32, b: u32, h: u32, q: u32, k: u32) -> f32,
   * applied to each score s = scale·q·k first, before the softcap and ALiBi (FlexAttention's `score_mod`).
   */
  readonly scoreMod?: string;
  /**
   * A mask function in WGSL (mods.ts): source that defines fn mask_mod(b: u32, h: u32, q: u32, k: u32) -> bool; false
   * excludes key k from row q, among the other exclusions (FlexAttention's `mask_mod`).
   */
  readonly maskMod?: string;
  /** Buffers both functions read, each a read-only flat array<i32> or array<f32> named by its key. */
  readonly modBuffers?: Readonly<Record<string, SdpaModBuffer>>;
}

/** A mask's data with the strides that broadcast it to [B, Hq, Lq, Lk] (0 along broadcast dimensions). */
export interface BroadcastStrides {
  readonly b: number;
  readonly h: number;
  readonly i: number;
  readonly j: number;
}

/** Everything a kernel needs to know, validated and resolved. */
export interface SdpaProblem {
  readonly dims: SdpaDims;
  readonly layout: SdpaLayout;
  readonly scale: number;
  /** Keys before the diagonal a query sees; Infinity when unbounded. */
  readonly left: number;
  /** Keys after the diagonal a query sees; Infinity when unbounded (0 when causal). */
  readonly right: number;
  readonly mask?: { readonly kind: SdpaMask['kind']; readonly data: Uint8Array | Float32Array; readonly strides: BroadcastStrides };
  readonly blockMask?: { readonly rows: number; readonly keys: number; readonly data: Uint8Array; readonly strides: BroadcastStrides };
  /** Valid keys per batch (each 0 … Lk), when the caller gave cache lengths. */
  readonly cacheLengths?: readonly number[];
  /** c of the softcap s → c·tanh(s/c), when given. */
  readonly softcap?: number;
  /** Each query head's sink logit (Hq values, a copy), when given. */
  readonly sinks?: Float32Array;
  /** Each query head's ALiBi slope (Hq values, a copy), when given. */
  readonly alibiSlopes?: Float32Array;
  /** The score and mask functions with their buffers, when given. */
  readonly mods?: SdpaMods;
}

/** A problem the caller described wrongly; the message names the problem and the fix in one line. */
export class SdpaArgumentError extends Error {
  override name = 'SdpaArgumentError';
}

const isCount = (n: number): boolean => Number.isSafeInteger(n) && n >= 1;

/** Strides (in elements) that broadcast a tensor of `shape` to `target`, PyTorch's rules; a message when it does not. */
export function broadcastStrides(shape: readonly number[], target: readonly [number, number, number, number], what: string): BroadcastStrides | string {
  if (shape.length > 4 || shape.some((n) => !Number.isSafeInteger(n) || n < 1)) return `${what} has shape [${shape.join(', ')}]; give at most 4 positive sizes`;
  const full = [...Array<number>(4 - shape.length).fill(1), ...shape];
  const strides = [0, 0, 0, 0];
  let stride = 1;
  for (let axis = 3; axis >= 0; axis--) {
    const size = full[axis] as number;
    const want = target[axis] as number;
    if (size !== 1 && size !== want) return `${what} of shape [${shape.join(', ')}] does not broadcast to [${target.join(', ')}]: dimension ${axis - (4 - shape.length)} is ${size}, not 1 or ${want}`;
    strides[axis] = size === 1 ? 0 : stride;
    stride *= size;
  }
  return { b: strides[0] as number, h: strides[1] as number, i: strides[2] as number, j: strides[3] as number };
}

const product = (shape: readonly number[]): number => shape.reduce((a, n) => a * n, 1);

/** Validates the dimensions and options (validate-options.ts, then what depends on the dimensions) and resolves them; throws SdpaArgumentError with a one-line reason. */
export function sdpaProblem(dims: SdpaDims, options: SdpaOptions = {}): SdpaProblem {
  checkDimsObject(dims, ['B', 'Hq', 'Hkv', 'Lq', 'Lk', 'd']);
  const { B, Hq, Hkv, Lq, Lk, d } = dims;
  for (const [name, value] of Object.entries({ B, Hq, Hkv, Lq, Lk, d })) {
    if (!isCount(value)) throw new SdpaArgumentError(`${name} is ${value}; give a positive integer`);
  }
  if (Hq % Hkv !== 0) throw new SdpaArgumentError(`${Hq} query heads are not a multiple of ${Hkv} key/value heads; give Hq = g·Hkv`);
  const dv = dims.dv ?? d;
  if (!isCount(dv)) throw new SdpaArgumentError(`dv is ${describeValue(dims.dv)}; give a positive integer (V's head size), or leave it out for dv = d`);
  checkSdpaOptions(options);
  const layout = options.layout ?? 'bhsd';
  const scale = options.scale ?? 1 / Math.sqrt(d);
  let left = Number.POSITIVE_INFINITY;
  let right = Number.POSITIVE_INFINITY;
  if (options.window !== undefined) {
    const [l, r] = options.window;
    if (l >= 0) left = l;
    if (r >= 0) right = r;
  }
  if (options.causal === true) right = Math.min(right, 0);
  const target: [number, number, number, number] = [B, Hq, Lq, Lk];
  let mask: SdpaProblem['mask'];
  if (options.mask !== undefined) {
    const m = options.mask;
    const strides = broadcastStrides(m.shape, target, 'the mask');
    if (typeof strides === 'string') throw new SdpaArgumentError(strides);
    if (m.data.length !== product(m.shape)) throw new SdpaArgumentError(`the mask holds ${m.data.length} values but its shape [${m.shape.join(', ')}] needs ${product(m.shape)}`);
    if (m.kind === 'additive' && m.data.some((x) => Number.isNaN(x) || x === Number.POSITIVE_INFINITY)) {
      throw new SdpaArgumentError('the additive mask holds NaN or +Infinity; use finite values, or −Infinity to exclude a key');
    }
    mask = { kind: m.kind, data: m.data, strides };
  }
  let blockMask: SdpaProblem['blockMask'];
  if (options.blockMask !== undefined) {
    const bm = options.blockMask;
    const blocks: [number, number, number, number] = [B, Hq, Math.ceil(Lq / bm.rows), Math.ceil(Lk / bm.keys)];
    const strides = broadcastStrides(bm.shape, blocks, 'the block mask');
    if (typeof strides === 'string') throw new SdpaArgumentError(strides);
    if (bm.data.length !== product(bm.shape)) throw new SdpaArgumentError(`the block mask holds ${bm.data.length} flags but its shape [${bm.shape.join(', ')}] needs ${product(bm.shape)}`);
    blockMask = { rows: bm.rows, keys: bm.keys, data: bm.data, strides };
  }
  const cacheLengths = options.cacheLengths === undefined ? undefined : validCacheLengths(options.cacheLengths, B, Lk);
  const sinks = options.sinks === undefined ? undefined : perHead(options.sinks, Hq, 'sinks', 'sink logits');
  const alibiSlopes = options.alibiSlopes === undefined ? undefined : perHead(options.alibiSlopes, Hq, 'alibiSlopes', 'slopes');
  const mods = modsOf(options.scoreMod, options.maskMod, options.modBuffers);
  return {
    // dv only where it differs from d, so that a problem with dv = d is the same problem as one without it.
    dims: { B, Hq, Hkv, Lq, Lk, d, ...(dv !== d ? { dv } : {}) },
    layout,
    scale,
    left,
    right,
    ...(mask ? { mask } : {}),
    ...(blockMask ? { blockMask } : {}),
    ...(cacheLengths ? { cacheLengths } : {}),
    ...(options.softcap !== undefined ? { softcap: options.softcap } : {}),
    ...(sinks ? { sinks } : {}),
    ...(alibiSlopes ? { alibiSlopes } : {}),
    ...(mods ? { mods } : {}),
  };
}

/** Hq finite values, one per query head, copied; a one-line SdpaArgumentError otherwise. */
function perHead(values: Float32Array, Hq: number, name: string, what: string): Float32Array {
  if (values.length !== Hq) throw new SdpaArgumentError(`${name} holds ${values.length} values but there are ${Hq} query heads (Hq); give one per query head`);
  const bad = values.findIndex((x) => !Number.isFinite(x));
  if (bad >= 0) throw new SdpaArgumentError(`${name}[${bad}] is ${values[bad]}; give finite ${what}`);
  return Float32Array.from(values);
}

/** B integers from 0 to Lk, as a plain array; a one-line SdpaArgumentError otherwise. */
export function validCacheLengths(lengths: ArrayLike<number>, B: number, Lk: number): number[] {
  const given: unknown = lengths;
  if (typeof given !== 'object' || given === null || typeof (given as { length?: unknown }).length !== 'number') throw new SdpaArgumentError('cacheLengths is not an array; give B integers, the valid keys of each batch');
  if (lengths.length !== B) throw new SdpaArgumentError(`cacheLengths holds ${lengths.length} values for ${B} batches; give one per batch`);
  const out = Array.from(lengths);
  const bad = out.findIndex((n) => !Number.isSafeInteger(n) || n < 0 || n > Lk);
  if (bad >= 0) throw new SdpaArgumentError(`cacheLengths[${bad}] is ${out[bad]}; give an integer from 0 to Lk = ${Lk}`);
  return out;
}

/** The keys batch b holds: its cache length, or Lk. */
export function validKeys(problem: SdpaProblem, b: number): number {
  return problem.cacheLengths?.[b] ?? problem.dims.Lk;
}

/** The keys query i of batch b may see by the band and its cache length alone: [first, last] (first > last when none). */
export function bandOf(problem: SdpaProblem, b: number, i: number): { first: number; last: number } {
  const Lk = validKeys(problem, b);
  const diagonal = i + Lk - problem.dims.Lq;
  return { first: Math.max(0, diagonal - problem.left), last: Math.min(Lk - 1, diagonal + problem.right) };
}

/**
 * What the masks add to score (b, h, i, j): 0 when the key takes part as is, a finite additive mask value, or
 * −Infinity when it is excluded (outside the band, its block skipped, a false boolean, an additive −Infinity).
 */
export function maskTerm(problem: SdpaProblem, b: number, h: number, i: number, j: number): number {
  const band = bandOf(problem, b, i);
  if (j < band.first || j > band.last) return Number.NEGATIVE_INFINITY;
  const bm = problem.blockMask;
  if (bm !== undefined) {
    const s = bm.strides;
    if (bm.data[b * s.b + h * s.h + Math.floor(i / bm.rows) * s.i + Math.floor(j / bm.keys) * s.j] === 0) return Number.NEGATIVE_INFINITY;
  }
  const m = problem.mask;
  if (m === undefined) return 0;
  const value = m.data[b * m.strides.b + h * m.strides.h + i * m.strides.i + j * m.strides.j] as number;
  if (m.kind === 'bool') return value === 0 ? Number.NEGATIVE_INFINITY : 0;
  return value;
}

/**
 * The ALiBi distance of score (b, i, j): |(i + Lk − Lq) − j|, from the bottom-right diagonal, with Lk batch b's valid
 * keys (its cache length where one is given), as the band aligns.
 */
export function alibiDistance(problem: SdpaProblem, b: number, i: number, j: number): number {
  return Math.abs(i + validKeys(problem, b) - problem.dims.Lq - j);
}

/** Element offsets of row `row` of head `h` of batch `b` of a tensor with `heads` heads and `rows` rows, in a layout. */
export function rowOffset(layout: SdpaLayout, heads: number, rows: number, d: number, b: number, h: number, row: number): number {
  return layout === 'bhsd' ? ((b * heads + h) * rows + row) * d : ((b * rows + row) * heads + h) * d;
}

/** The KV head query head h reads. */
export function kvHeadOf(dims: SdpaDims, h: number): number {
  return Math.floor(h / (dims.Hq / dims.Hkv));
}
