/**
 * The options of an sdpa run on files, read strictly: numbers in decimal only (an empty value, `0x10` or `1,` is an
 * error, not 0), and --cache-lengths checked against the tensors' batch and key count once they are read. All of
 * these are usage errors (exit 2), said in the command line's words.
 */
import type { SdpaDims, SdpaOptions } from '@fa/core';
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
  return {
    layout,
    ...(values.causal === true ? { causal: true } : {}),
    ...(window ? { window: [window[0] as number, window[1] as number] } : {}),
    ...(scale !== undefined ? { scale } : {}),
    ...(cacheLengths ? { cacheLengths } : {}),
  };
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
