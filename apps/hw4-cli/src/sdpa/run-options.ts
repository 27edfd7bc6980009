/**
 * The options of an sdpa run on files, read strictly: numbers in decimal only (an empty value, `0x10` or `1,` is an
 * error, not 0), and --cache-lengths, --sinks and --alibi-slopes checked against the tensors' batch, key count and
 * query heads once they are read. All of these are usage errors (exit 2), said in the command line's words.
 */
import type { SdpaDims, SdpaOptions } from '@fa/core';
import type { NpyArray } from '@fa/io/node';
import { halvesToFloats } from '@fa/sdpa';
import { parseDecimal, parseDecimalList, shown, stringFlag, type Values } from '../args.js';
import { UsageError } from '../exit-codes.js';

export function runOptions(values: Values): SdpaOptions {
  const layout = stringFlag(values, 'layout') ?? 'bhsd';
  if (layout !== 'bhsd' && layout !== 'bshd') throw new UsageError(`--layout ${shown(layout)} is unknown; give bhsd ([B, H, L, d]) or bshd ([B, L, H, d])`);
  const windowText = stringFlag(values, 'window');
  const window = windowText === undefined ? undefined : parseDecimalList(windowText);
  if (windowText !== undefined && (window?.length !== 2 || !window.every((x) => Number.isSafeInteger(x) && x >= -1))) {
    throw new UsageError(`--window ${shown(windowText)} is not LEFT,RIGHT; give two integers ≥ −1 (−1 for unbounded), e.g. --window 128,0`);
  }
  const scaleText = stringFlag(values, 'scale');
  const scale = scaleText === undefined ? undefined : parseDecimal(scaleText);
  if (scaleText !== undefined && scale === undefined) throw new UsageError(`--scale ${shown(scaleText)} is not a finite decimal number; give one, e.g. --scale 0.125, or leave --scale out for 1/√d`);
  const lengthsText = stringFlag(values, 'cache-lengths');
  const cacheLengths = lengthsText === undefined ? undefined : parseDecimalList(lengthsText);
  if (lengthsText !== undefined && cacheLengths?.every((n) => Number.isSafeInteger(n) && n >= 0) !== true) {
    throw new UsageError(`--cache-lengths ${shown(lengthsText)} is not a list of integers ≥ 0; give one per batch, e.g. --cache-lengths 4096,17`);
  }
  const softcapText = stringFlag(values, 'softcap');
  const softcap = softcapText === undefined ? undefined : parseDecimal(softcapText);
  if (softcapText !== undefined && (softcap === undefined || softcap <= 0)) {
    throw new UsageError(`--softcap ${shown(softcapText)} is not a positive decimal number; give one, e.g. --softcap 50 (each score s becomes C·tanh(s/C)), or leave --softcap out`);
  }
  return {
    layout,
    ...(values.causal === true ? { causal: true } : {}),
    ...(window ? { window: [window[0] as number, window[1] as number] } : {}),
    ...(scale !== undefined ? { scale } : {}),
    ...(cacheLengths ? { cacheLengths } : {}),
    ...(softcap !== undefined ? { softcap } : {}),
  };
}

/** NumPy's names of the dtypes, for messages. */
const DTYPE_WORDS: Readonly<Record<NpyArray['dtype'], string>> = { f32: 'float32', f16: 'float16', f64: 'float64', bool: 'bool', i32: 'int32', i64: 'int64', u8: 'uint8' };

/**
 * The values of --sinks or --alibi-slopes (`flag`, read from `name`): float32 of shape [Hq], one per query head, each
 * finite; float64 or float16 is converted to float32 with a note. Anything else is a usage error (exit 2).
 */
export function perHeadValues(array: NpyArray, flag: '--sinks' | '--alibi-slopes', name: string, dims: SdpaDims, notes: string[]): Float32Array {
  const what = flag === '--sinks' ? 'sink logit' : 'ALiBi slope';
  const give = `give a float32 array of shape [Hq] = [${dims.Hq}], one ${what} per query head`;
  const dtype = DTYPE_WORDS[array.dtype];
  if (array.dtype !== 'f32' && array.dtype !== 'f64' && array.dtype !== 'f16') throw new UsageError(`${flag} ${name} holds ${dtype} values; ${give}`);
  if (array.shape.length !== 1 || array.shape[0] !== dims.Hq) throw new UsageError(`${flag} ${name} has shape [${array.shape.join(', ')}]; ${give}`);
  if (array.dtype !== 'f32') notes.push(`${flag} ${name} is ${dtype}; its values are taken as float32`);
  const values = array.dtype === 'f32' ? (array.data as Float32Array) : array.dtype === 'f16' ? halvesToFloats(array.data as Uint16Array) : Float32Array.from(array.data as Float64Array);
  const bad = values.findIndex((x) => !Number.isFinite(x));
  if (bad >= 0) throw new UsageError(`${flag} ${name} holds ${values[bad]} at index ${bad} (or a value beyond float32's range); give finite values, one ${what} per query head`);
  return values;
}

/** --cache-lengths against the tensors: one length per batch, none beyond the keys K and V hold. */
export function checkCacheLengths(options: SdpaOptions, dims: SdpaDims): void {
  const lengths = options.cacheLengths;
  if (lengths === undefined) return;
  const text = Array.from(lengths).join(',');
  if (lengths.length !== dims.B) {
    throw new UsageError(`--cache-lengths ${text} gives ${lengths.length} length${lengths.length === 1 ? '' : 's'} but Q has batch ${dims.B}; give one per batch`);
  }
  const over = Array.from(lengths).find((n) => n > dims.Lk);
  if (over !== undefined) throw new UsageError(`--cache-lengths ${text}: ${over} is more than the ${dims.Lk} rows of K and V (Lk); give lengths from 0 to ${dims.Lk}`);
}
