/**
 * The arrays of sdpa's .npy inputs as the library takes them: Q, K and V as f32 or f16 tensors (float64 converted to
 * float32 with a note), the mask as bool or additive; every refusal is one line naming the file and the fix (exit 3).
 */
import type { SdpaMask } from '@fa/core';
import type { NpyArray, NpyDtype } from '@fa/io/node';
import { halvesToFloats, type SdpaTensor } from '@fa/sdpa';
import { EXIT, ExitError } from '../exit-codes.js';

/** NumPy's names of the dtypes, for messages. */
const DTYPE_WORDS: Record<NpyDtype, string> = { f32: 'float32', f16: 'float16', f64: 'float64', bool: 'bool', i32: 'int32', i64: 'int64', u8: 'uint8' };

/** A tensor file as f32 or f16 data; float64 converted to float32 (with a note), other dtypes refused. */
export function tensorOf(array: NpyArray, name: string, notes: string[]): SdpaTensor {
  const data = array.data;
  if (array.dtype === 'f32' || array.dtype === 'f16') return checkFinite({ data: data as Float32Array | Uint16Array, shape: array.shape }, name);
  if (array.dtype === 'f64') {
    notes.push(`${name} is float64; it is computed in float32 and OUTPUT is float32`);
    return checkFinite({ data: Float32Array.from(data as Float64Array), shape: array.shape }, name);
  }
  throw new ExitError(`${name} holds ${DTYPE_WORDS[array.dtype]} values; save it as float32 (np.save(path, x.astype(np.float32))) or float16`, EXIT.invalidInput);
}

/**
 * Q, K and V must all be float16 or all float32 (float64 counts as float32, to which it is converted): said in
 * NumPy's words, before the library would say it in typed arrays'.
 */
export function checkSameDtype(arrays: readonly (readonly [role: string, array: NpyArray])[]): void {
  const [first, ...rest] = arrays;
  if (!first) return;
  const other = rest.find(([, a]) => (a.dtype === 'f16') !== (first[1].dtype === 'f16'));
  if (other) {
    throw new ExitError(`${first[0]} is ${DTYPE_WORDS[first[1].dtype]} but ${other[0]} is ${DTYPE_WORDS[other[1].dtype]}; save all three with the same dtype`, EXIT.invalidInput);
  }
}

function checkFinite(tensor: SdpaTensor, name: string): SdpaTensor {
  const values = tensor.data instanceof Uint16Array ? halvesToFloats(tensor.data) : tensor.data;
  const bad = values.findIndex((x) => !Number.isFinite(x));
  if (bad >= 0) throw new ExitError(`${name} holds ${values[bad]} at flat index ${bad} (or its float32 value is beyond float32's range); give finite values`, EXIT.invalidInput);
  return tensor;
}

export function maskOf(array: NpyArray, name: string, notes: string[]): SdpaMask {
  if (array.dtype === 'bool' || array.dtype === 'u8') return { kind: 'bool', data: array.data as Uint8Array, shape: array.shape };
  if (array.dtype === 'f32') return { kind: 'additive', data: array.data as Float32Array, shape: array.shape };
  if (array.dtype === 'f64') {
    notes.push(`${name} is float64; its values are added to the scores as float32`);
    return { kind: 'additive', data: Float32Array.from(array.data as Float64Array), shape: array.shape };
  }
  if (array.dtype === 'f16') return { kind: 'additive', data: halvesToFloats(array.data as Uint16Array), shape: array.shape };
  throw new ExitError(`${name} holds ${DTYPE_WORDS[array.dtype]} values; give bool (true = takes part) or float (added to the scores)`, EXIT.invalidInput);
}
