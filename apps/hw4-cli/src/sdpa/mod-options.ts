/**
 * --score-mod FILE.wgsl, --mask-mod FILE.wgsl and --mod-buffer NAME=FILE.npy (repeatable): score and mask functions in
 * WGSL (@fa/core's mods.ts has the contract). The functions are read as text; each buffer is read as any other .npy
 * input (npy-input.ts), int32 or float32 of any shape, flattened in C order. A wrong flag, a buffer of another dtype, a
 * WGSL error (one line at the file's line and column) or a run without a GPU is a usage error (exit 2).
 */
import { readFile, stat } from 'node:fs/promises';
import { modsOf, SdpaArgumentError, type GpuContext, type SdpaOptions } from '@fa/core';
import { Hw4IoError, ioError, type NpyArray } from '@fa/io/node';
import { attentionKernel, checkModFunctions } from '@fa/sdpa';
import { stringFlag, type Values } from '../args.js';
import { UsageError } from '../exit-codes.js';

/** The flags as given: the functions' files and each buffer's name and file. */
export interface ModFlags {
  readonly scorePath?: string;
  readonly maskPath?: string;
  readonly buffers: readonly { readonly name: string; readonly path: string }[];
}

/** The most bytes a function's file may hold. */
const MOST_SOURCE_BYTES = 1 << 20;

/** The flags, checked for their form: NAME=FILE.npy, each name once, buffers only beside a function. */
export function modFlags(values: Values): ModFlags {
  const scorePath = stringFlag(values, 'score-mod');
  const maskPath = stringFlag(values, 'mask-mod');
  const given = values['mod-buffer'];
  const texts = Array.isArray(given) ? given.filter((x): x is string => typeof x === 'string') : [];
  const buffers = texts.map((text) => {
    const at = text.indexOf('=');
    if (at <= 0 || at === text.length - 1) throw new UsageError(`--mod-buffer ${text} is not NAME=FILE.npy; give e.g. --mod-buffer doc=doc_ids.npy (doc is then an array<i32> or array<f32> in the functions)`);
    return { name: text.slice(0, at), path: text.slice(at + 1) };
  });
  const twice = buffers.find((b, n) => buffers.findIndex((other) => other.name === b.name) !== n);
  if (twice) throw new UsageError(`--mod-buffer names ${twice.name} twice; give each buffer once`);
  if (buffers.length > 0 && scorePath === undefined && maskPath === undefined) throw new UsageError('--mod-buffer is given without --score-mod or --mask-mod, which read it; give a function, or leave --mod-buffer out');
  return { ...(scorePath !== undefined ? { scorePath } : {}), ...(maskPath !== undefined ? { maskPath } : {}), buffers };
}

/** A function's file as text: missing, a folder or too large is refused in one line. */
async function source(flag: string, path: string): Promise<string> {
  const name = `${flag} ${path}`;
  const stats = await stat(path).catch((error: unknown) => {
    throw ioError(error, name);
  });
  if (stats.isDirectory()) throw new Hw4IoError(`${name}: is a folder; give the path of a .wgsl file`);
  if (stats.size > MOST_SOURCE_BYTES) throw new UsageError(`${name} holds ${stats.size} bytes, over the ${MOST_SOURCE_BYTES} a function's file may hold`);
  return readFile(path, 'utf8').catch((error: unknown) => {
    throw ioError(error, name);
  });
}

/** A buffer's values: int32 or float32, any shape, flattened; another dtype is a usage error. */
export function modBufferOf(array: NpyArray, name: string, path: string): Int32Array | Float32Array {
  if (array.dtype === 'i32' || array.dtype === 'f32') return array.data as Int32Array | Float32Array;
  const words: Readonly<Record<string, string>> = { f16: 'float16', f64: 'float64', bool: 'bool', i64: 'int64', u8: 'uint8' };
  throw new UsageError(`--mod-buffer ${name}=${path} holds ${words[array.dtype] ?? array.dtype} values; give int32 or float32 (np.int32, np.float32), any shape`);
}

/**
 * The options of the functions (their sources and buffers), checked: names and sizes (exit 2) and, on `gpu`, the WGSL
 * itself, an error reported at the file's line and column (exit 2). Without a GPU, one line: the functions run only
 * there.
 */
export async function modOptions(flags: ModFlags, buffers: Readonly<Record<string, Int32Array | Float32Array>>, gpu: GpuContext | undefined, gpuMissing: string, dtype: 'f32' | 'f16'): Promise<SdpaOptions> {
  const { scorePath, maskPath } = flags;
  if (scorePath === undefined && maskPath === undefined) return {};
  const options: SdpaOptions = {
    ...(scorePath !== undefined ? { scoreMod: await source('--score-mod', scorePath) } : {}),
    ...(maskPath !== undefined ? { maskMod: await source('--mask-mod', maskPath) } : {}),
    ...(flags.buffers.length > 0 ? { modBuffers: buffers } : {}),
  };
  const labels = { scoreMod: `--score-mod ${scorePath ?? ''}`, maskMod: `--mask-mod ${maskPath ?? ''}` };
  try {
    const mods = modsOf(options.scoreMod, options.maskMod, options.modBuffers);
    if (!gpu) throw new UsageError(`--score-mod and --mask-mod are WGSL, which runs on a GPU only, and there is none here (${gpuMissing}); leave them out or run where a GPU is`);
    if (mods) await checkModFunctions(gpu, mods, attentionKernel(dtype), labels);
  } catch (error) {
    if (!(error instanceof SdpaArgumentError)) throw error;
    const message = error.message.replace(/^scoreMod\b/, '--score-mod').replace(/^maskMod\b/, '--mask-mod').replace(/^modBuffers\.(\w+)/, '--mod-buffer $1');
    throw new UsageError(message);
  }
  return options;
}
