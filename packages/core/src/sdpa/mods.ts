/**
 * Score and mask functions (FlexAttention's `score_mod` and `mask_mod`), written in WGSL:
 *
 *   fn score_mod(s: f32, b: u32, h: u32, q: u32, k: u32) -> f32   // s = scale·q·k of batch b, query head h, row q, key k
 *   fn mask_mod(b: u32, h: u32, q: u32, k: u32) -> bool            // false: key k is excluded from row q
 *
 * q and k are the row's and the key's positions in their own sequences, from 0 (q within Lq, k within Lk). Each mod
 * buffer is visible to both functions as a read-only flat `array<i32>` or `array<f32>` of its name. The score function
 * comes first in the order of operations (before the softcap and ALiBi), the mask function among the exclusions.
 * A score function's result is held within ±MOD_SCORE_LIMIT; −∞ excludes the key. This module checks what needs no
 * GPU (types, names, sizes); @fa/sdpa compiles the functions and reports their WGSL errors.
 */
import { SdpaArgumentError } from './problem.js';
import { describeValue } from './validate-options.js';

/** The element type of a mod buffer, as WGSL names it. */
export type ModBufferType = 'i32' | 'f32';

/** A mod buffer already on the GPU: the caller's STORAGE buffer of `type` elements (its size a multiple of 4). */
export interface GpuModBuffer {
  readonly buffer: GPUBuffer;
  readonly type: ModBufferType;
}

/** A mod buffer: int32 or float32 values, or the caller's GPU buffer with its element type. */
export type SdpaModBuffer = Int32Array | Float32Array | GpuModBuffer;

/** One mod buffer, checked: its WGSL name, element type and length, with its values or the caller's GPU buffer. */
export interface ModBufferEntry {
  readonly name: string;
  readonly type: ModBufferType;
  readonly length: number;
  /** The values (a copy), for a buffer given as a typed array. */
  readonly data?: Int32Array | Float32Array;
  /** The caller's buffer, for one given on the GPU. */
  readonly buffer?: GPUBuffer;
}

/** The score and mask functions of a problem, checked, with their buffers in name order. */
export interface SdpaMods {
  readonly scoreMod?: string;
  readonly maskMod?: string;
  readonly buffers: readonly ModBufferEntry[];
}

/** The most |score_mod(…)| the kernels take (natural units); larger results are held at ±this, −∞ stays −∞. */
export const MOD_SCORE_LIMIT = 2 ** 64;

/** The contract's signatures, for messages. */
export const SCORE_MOD_SIGNATURE = 'fn score_mod(s: f32, b: u32, h: u32, q: u32, k: u32) -> f32';
export const MASK_MOD_SIGNATURE = 'fn mask_mod(b: u32, h: u32, q: u32, k: u32) -> bool';

/** A WGSL identifier the user may declare: letters, digits and _, not starting with a digit or __, not _ alone. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why `name` cannot name a mod buffer, or undefined when it can. */
function badName(name: string): string | undefined {
  if (!IDENTIFIER.test(name) || name === '_' || name.startsWith('__')) return 'is not a WGSL identifier (letters, digits and _, not starting with a digit or __)';
  if (name === 'score_mod' || name === 'mask_mod') return 'is the name of a function of the contract';
  return undefined;
}

/** A function's source, checked: a string that defines `fn <name>`. */
function checkSource(option: 'scoreMod' | 'maskMod', source: unknown, signature: string): string {
  if (typeof source !== 'string' || source.trim() === '') throw new SdpaArgumentError(`${option} is ${describeValue(source)}; give WGSL source that defines ${signature}`);
  const name = option === 'scoreMod' ? 'score_mod' : 'mask_mod';
  if (!new RegExp(`\\bfn\\s+${name}\\s*\\(`).test(source)) throw new SdpaArgumentError(`${option} defines no fn ${name}; give WGSL source that defines ${signature}`);
  return source;
}

/** One mod buffer, checked and copied; a message when it is wrong. */
function bufferEntry(name: string, value: unknown): ModBufferEntry {
  const where = `modBuffers.${name}`;
  const give = 'give an Int32Array or Float32Array, or { buffer: GPUBuffer, type: \'i32\' | \'f32\' }';
  const why = badName(name);
  if (why !== undefined) throw new SdpaArgumentError(`modBuffers has a buffer named ${describeValue(name)}, which ${why}; rename it`);
  if (value instanceof Int32Array || value instanceof Float32Array) {
    if (value.length === 0) throw new SdpaArgumentError(`${where} is empty; give at least one value`);
    return { name, type: value instanceof Int32Array ? 'i32' : 'f32', length: value.length, data: value.slice() };
  }
  const gpu = value as { buffer?: unknown; type?: unknown } | null;
  if (typeof value !== 'object' || gpu === null || typeof gpu.buffer !== 'object' || gpu.buffer === null || typeof (gpu.buffer as { size?: unknown }).size !== 'number') {
    throw new SdpaArgumentError(`${where} is ${describeValue(value)}; ${give}`);
  }
  if (gpu.type !== 'i32' && gpu.type !== 'f32') throw new SdpaArgumentError(`${where}.type is ${describeValue(gpu.type)}; give 'i32' or 'f32', the type of its elements`);
  const buffer = gpu.buffer as GPUBuffer;
  const { size } = buffer;
  if (size < 4 || size % 4 !== 0) throw new SdpaArgumentError(`${where}.buffer holds ${size} bytes; give a buffer of whole 4-byte elements, at least one`);
  return { name, type: gpu.type, length: size / 4, buffer };
}

/**
 * The score and mask functions and their buffers, checked (no GPU needed), or undefined when none is given; an
 * SdpaArgumentError of one line otherwise.
 */
export function modsOf(scoreMod: unknown, maskMod: unknown, modBuffers: unknown): SdpaMods | undefined {
  if (scoreMod === undefined && maskMod === undefined) {
    if (modBuffers !== undefined) throw new SdpaArgumentError('modBuffers is given without scoreMod or maskMod, which read them; give a function, or leave modBuffers out');
    return undefined;
  }
  if (modBuffers !== undefined && (typeof modBuffers !== 'object' || modBuffers === null || Array.isArray(modBuffers) || ArrayBuffer.isView(modBuffers))) {
    throw new SdpaArgumentError(`modBuffers is ${describeValue(modBuffers)}; give an object of named buffers, e.g. { doc: Int32Array.of(0, 0, 1) }`);
  }
  const buffers = Object.entries((modBuffers ?? {}) as Record<string, unknown>)
    .map(([name, value]) => bufferEntry(name, value))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  return {
    ...(scoreMod !== undefined ? { scoreMod: checkSource('scoreMod', scoreMod, SCORE_MOD_SIGNATURE) } : {}),
    ...(maskMod !== undefined ? { maskMod: checkSource('maskMod', maskMod, MASK_MOD_SIGNATURE) } : {}),
    buffers,
  };
}
