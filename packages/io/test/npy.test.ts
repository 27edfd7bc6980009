/**
 * .npy reading and writing against files written by NumPy 2.4 (np.save, and np.lib.format.write_array for versions 2.0
 * and 3.0), embedded as base64, and against headers built here to break one rule at a time.
 */
import { describe, expect, it } from 'vitest';
import { encodeNpy, NpyFormatError, parseNpy } from '../src/index.js';

const bytesOf = (base64: string): Uint8Array => Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));

/** np.save(f, x) of each array named, unless the name says otherwise. */
const NUMPY = {
  /** np.array([[-1, -0.5, 0], [0.5, 1, 1.5]], dtype='<f4') */
  f32_2x3: 'k05VTVBZAQB2AHsnZGVzY3InOiAnPGY0JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsIDMpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAIC/AAAAvwAAAAAAAAA/AACAPwAAwD8=',
  /** (np.arange(24) / 8 - 1).astype('<f2').reshape(1, 2, 3, 4) */
  f16_1x2x3x4:
    'k05VTVBZAQB2AHsnZGVzY3InOiAnPGYyJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDEsIDIsIDMsIDQpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAvAC7ALoAuQC4ALYAtACwAAAAMAA0ADYAOAA5ADoAOwA8gDwAPYA9AD6APgA/gD8=',
  /** np.array(3.25, dtype='<f8') */
  f64_scalar: 'k05VTVBZAQB2AHsnZGVzY3InOiAnPGY4JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKCksIH0gICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAAAAAAAKQA==',
  /** np.array(3.25, dtype='<f4') */
  f32_scalar: 'k05VTVBZAQB2AHsnZGVzY3InOiAnPGY0JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKCksIH0gICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAFBA',
  /** np.zeros((0,), dtype='<f4') */
  f32_empty: 'k05VTVBZAQB2AHsnZGVzY3InOiAnPGY0JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDAsKSwgfSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAo=',
  /** np.zeros((0, 12345678901), dtype='<f4') */
  f32_0xbig: 'k05VTVBZAQB2AHsnZGVzY3InOiAnPGY0JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDAsIDEyMzQ1Njc4OTAxKSwgfSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAo=',
  /** np.zeros((1,) * 15, dtype='<f4'): the room NumPy leaves for the first axis pushes the header past 128 bytes */
  f32_rank15:
    'k05VTVBZAQC2AHsnZGVzY3InOiAnPGY0JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDEsIDEsIDEsIDEsIDEsIDEsIDEsIDEsIDEsIDEsIDEsIDEsIDEsIDEsIDEpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAKAAAAAA==',
  /** np.array([[True, False, True], [False, False, True]]) */
  bool_2x3: 'k05VTVBZAQB2AHsnZGVzY3InOiAnfGIxJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsIDMpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoBAAEAAAE=',
  /** np.zeros((0,), dtype=bool) */
  bool_empty: 'k05VTVBZAQB2AHsnZGVzY3InOiAnfGIxJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDAsKSwgfSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAo=',
  /** np.array([-2, 0, 7], dtype='<i4') */
  i32: 'k05VTVBZAQB2AHsnZGVzY3InOiAnPGk0JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDMsKSwgfSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAr+////AAAAAAcAAAA=',
  /** np.array([-(2**40), 5], dtype='<i8') */
  i64: 'k05VTVBZAQB2AHsnZGVzY3InOiAnPGk4JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsKSwgfSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAAAAAP///wUAAAAAAAAA',
  /** np.array([0, 200, 255], dtype='u1') */
  u8: 'k05VTVBZAQB2AHsnZGVzY3InOiAnfHUxJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDMsKSwgfSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAyP8=',
  /** np.asfortranarray(np.arange(6, dtype='<f4').reshape(2, 3)) */
  fortran: 'k05VTVBZAQB2AHsnZGVzY3InOiAnPGY0JywgJ2ZvcnRyYW5fb3JkZXInOiBUcnVlLCAnc2hhcGUnOiAoMiwgMyksIH0gICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAAAAAABAQAAAgD8AAIBAAAAAQAAAoEA=',
  /** np.arange(3, dtype='>f4') */
  big_endian: 'k05VTVBZAQB2AHsnZGVzY3InOiAnPmY0JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDMsKSwgfSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAAAAP4AAAEAAAAA=',
  /** np.array([1, 'a', None], dtype=object), allow_pickle=True */
  object:
    'k05VTVBZAQB2AHsnZGVzY3InOiAnfE8nLCAnZm9ydHJhbl9vcmRlcic6IEZhbHNlLCAnc2hhcGUnOiAoMywpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAqABJWRAAAAAAAAAIwWbnVtcHkuX2NvcmUubXVsdGlhcnJheZSMDF9yZWNvbnN0cnVjdJSTlIwFbnVtcHmUjAduZGFycmF5lJOUSwCFlEMBYpSHlFKUKEsBSwOFlGgDjAVkdHlwZZSTlIwCTziUiYiHlFKUKEsDjAF8lE5OTkr/////Sv////9LP3SUYoldlChLAYwBYZROZXSUYi4=',
  /** np.zeros(2, dtype=[('a', '<f4'), ('b', '<i4')]) */
  structured:
    'k05VTVBZAQB2AHsnZGVzY3InOiBbKCdhJywgJzxmNCcpLCAoJ2InLCAnPGk0JyldLCAnZm9ydHJhbl9vcmRlcic6IEZhbHNlLCAnc2hhcGUnOiAoMiwpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAAAAAAAAAAAAAAAAAAAA',
  /** np.lib.format.write_array(f, np.arange(4, dtype='<f4'), version=(2, 0)) */
  v2: 'k05VTVBZAgB0AAAAeydkZXNjcic6ICc8ZjQnLCAnZm9ydHJhbl9vcmRlcic6IEZhbHNlLCAnc2hhcGUnOiAoNCwpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAAAAAACAPwAAAEAAAEBA',
  /** np.lib.format.write_array(f, np.arange(4, dtype='<f4'), version=(3, 0)) */
  v3: 'k05VTVBZAwB0AAAAeydkZXNjcic6ICc8ZjQnLCAnZm9ydHJhbl9vcmRlcic6IEZhbHNlLCAnc2hhcGUnOiAoNCwpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAAAAAACAPwAAAEAAAEBA',
};

const numpy = (name: keyof typeof NUMPY): Uint8Array => bytesOf(NUMPY[name]);

/** A version-1.0 (or other) file with `header` as its header text, unpadded, and `data` after it. */
function npyWith(header: string, data: Uint8Array = new Uint8Array(0), version: readonly [number, number] = [1, 0]): Uint8Array {
  const text = new TextEncoder().encode(header);
  const lengthBytes = version[0] === 1 ? 2 : 4;
  const out = new Uint8Array(8 + lengthBytes + text.length + data.length);
  out.set([0x93, ...new TextEncoder().encode('NUMPY'), version[0], version[1]]);
  const view = new DataView(out.buffer);
  if (lengthBytes === 2) view.setUint16(8, text.length, true);
  else view.setUint32(8, text.length, true);
  out.set(text, 8 + lengthBytes);
  out.set(data, 8 + lengthBytes + text.length);
  return out;
}

/** The NpyFormatError message parsing `bytes` throws (the test fails if it does not throw one). */
function refusal(bytes: Uint8Array): string {
  try {
    parseNpy(bytes);
  } catch (error) {
    expect(error).toBeInstanceOf(NpyFormatError);
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('parseNpy accepted the bytes');
}

describe('parseNpy on files NumPy wrote', () => {
  it('reads float32 (2, 3)', () => {
    const a = parseNpy(numpy('f32_2x3'));
    expect(a.dtype).toBe('f32');
    expect(a.shape).toEqual([2, 3]);
    expect(a.data).toEqual(Float32Array.of(-1, -0.5, 0, 0.5, 1, 1.5));
  });

  it('reads f16 (1, 2, 3, 4) as its bits', () => {
    const a = parseNpy(numpy('f16_1x2x3x4'));
    expect(a.dtype).toBe('f16');
    expect(a.shape).toEqual([1, 2, 3, 4]);
    expect(a.data).toEqual(
      Uint16Array.of(48128, 47872, 47616, 47360, 47104, 46592, 46080, 45056, 0, 12288, 13312, 13824, 14336, 14592, 14848, 15104, 15360, 15488, 15616, 15744, 15872, 16000, 16128, 16256),
    );
  });

  it('reads a 0-d float64 array as one value of shape []', () => {
    expect(parseNpy(numpy('f64_scalar'))).toEqual({ dtype: 'f64', shape: [], data: Float64Array.of(3.25) });
  });

  it('reads empty arrays', () => {
    expect(parseNpy(numpy('f32_empty'))).toEqual({ dtype: 'f32', shape: [0], data: new Float32Array(0) });
    expect(parseNpy(numpy('bool_empty'))).toEqual({ dtype: 'bool', shape: [0], data: new Uint8Array(0) });
    expect(parseNpy(numpy('f32_0xbig')).shape).toEqual([0, 12345678901]);
  });

  it('reads bool, int32, int64 and uint8', () => {
    expect(parseNpy(numpy('bool_2x3'))).toEqual({ dtype: 'bool', shape: [2, 3], data: Uint8Array.of(1, 0, 1, 0, 0, 1) });
    expect(parseNpy(numpy('i32'))).toEqual({ dtype: 'i32', shape: [3], data: Int32Array.of(-2, 0, 7) });
    expect(parseNpy(numpy('i64'))).toEqual({ dtype: 'i64', shape: [2], data: BigInt64Array.of(-(2n ** 40n), 5n) });
    expect(parseNpy(numpy('u8'))).toEqual({ dtype: 'u8', shape: [3], data: Uint8Array.of(0, 200, 255) });
  });

  it('reads format versions 2.0 and 3.0', () => {
    for (const name of ['v2', 'v3'] as const) expect(parseNpy(numpy(name))).toEqual({ dtype: 'f32', shape: [4], data: Float32Array.of(0, 1, 2, 3) });
  });

  it('reads from a view into a larger buffer at an odd offset', () => {
    const file = numpy('f32_2x3');
    const padded = new Uint8Array(file.length + 3);
    padded.set(file, 1);
    expect(parseNpy(padded.subarray(1, 1 + file.length)).data).toEqual(Float32Array.of(-1, -0.5, 0, 0.5, 1, 1.5));
  });

  it('refuses Fortran order, big-endian, object and structured arrays, naming the fix', () => {
    expect(refusal(numpy('fortran'))).toBe('the .npy array is in Fortran order; save it with np.save(path, np.ascontiguousarray(x))');
    expect(refusal(numpy('big_endian'))).toBe("the .npy array is big-endian ('>f4'); save it with np.ascontiguousarray(x).astype('<f4')");
    expect(refusal(numpy('object'))).toMatch(/^the \.npy array holds Python objects \('\|O'\); save a numeric array/);
    expect(refusal(numpy('structured'))).toMatch(/^the \.npy array has a structured dtype; save each field as its own array/);
  });
});

describe('parseNpy refuses malformed files in one line', () => {
  const header = (descr: string, shape: string, extra = ''): string => `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, ${extra}}\n`;
  const floats = (...values: number[]): Uint8Array => new Uint8Array(Float32Array.from(values).buffer);

  it('a wrong magic', () => {
    const bytes = numpy('f32_2x3');
    bytes[1] = 0x4d;
    expect(refusal(bytes)).toMatch(/do not start with the \.npy magic/);
    expect(refusal(new Uint8Array(4))).toMatch(/magic/);
  });

  it('an unknown version', () => {
    expect(refusal(npyWith(header('<f4', '(1,)'), floats(1), [4, 0]))).toMatch(/^\.npy format version 4\.0 is not supported/);
    expect(refusal(npyWith(header('<f4', '(1,)'), floats(1), [1, 1]))).toMatch(/version 1\.1/);
  });

  it('a header longer than the file', () => {
    expect(refusal(numpy('f32_2x3').subarray(0, 60))).toMatch(/^the \.npy header claims 118 bytes but only 50 follow/);
    expect(refusal(numpy('v2').subarray(0, 10))).toMatch(/ends inside its header length/);
  });

  it('header dict syntax', () => {
    for (const text of [
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)\n",
      "{'descr': '<f4' 'fortran_order': False, 'shape': (1,)}",
      "{'descr': '<f4, 'fortran_order': False, 'shape': (1,)}",
      "{'descr': '<f4', 'fortran_order': false, 'shape': (1,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x",
      "['descr', '<f4']",
      "{descr: '<f4', 'fortran_order': False, 'shape': (1,)}",
      '',
    ]) {
      expect(refusal(npyWith(text, floats(1)))).toMatch(/^the \.npy header is not a Python dict literal/);
    }
  });

  it('missing, extra or repeated keys and bad values', () => {
    expect(refusal(npyWith("{'descr': '<f4', 'shape': (1,)}", floats(1)))).toMatch(/has the keys descr, shape, not descr, fortran_order, shape/);
    expect(refusal(npyWith(header('<f4', '(1,)', "'extra': 1, "), floats(1)))).toMatch(/has the keys descr, extra, fortran_order, shape/);
    expect(refusal(npyWith("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", floats(1)))).toMatch(/the key 'descr' appears twice/);
    expect(refusal(npyWith(header('<f4', '[1]'), floats(1)))).toMatch(/'shape' is not a tuple of sizes ≥ 0/);
    expect(refusal(npyWith(header('<f4', '(1)'), floats(1)))).toMatch(/'shape' is not a tuple/);
    expect(refusal(npyWith(header('<f4', '(-1,)'), floats(1)))).toMatch(/'shape' is not a tuple/);
    expect(refusal(npyWith("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", floats(1)))).toMatch(/'fortran_order' is not True or False/);
    expect(refusal(npyWith(header('<c8', '(1,)'), new Uint8Array(8)))).toBe("the .npy dtype '<c8' is not supported (only <f4, <f2, <f8, |b1, <i4, <i8, |u1); save it with np.ascontiguousarray(x).astype('<f4')");
  });

  it('data that does not match the shape', () => {
    expect(refusal(npyWith(header('<f4', '(2, 3)'), floats(1, 2, 3, 4, 5)))).toBe(
      "the .npy data holds 20 bytes but shape (2, 3) of 'f32' needs 24; the file is truncated or its header is wrong",
    );
    expect(refusal(npyWith(header('<f4', '(2,)'), floats(1, 2, 3)))).toMatch(/holds 12 bytes but shape \(2,\) of 'f32' needs 8/);
    expect(refusal(npyWith(header('<f4', '()'), new Uint8Array(0)))).toMatch(/holds 0 bytes but shape \(\) of 'f32' needs 4/);
  });

  it('accepts what the Python literal allows beyond np.save: double quotes, no trailing comma, old long sizes', () => {
    const a = parseNpy(npyWith('{"shape": (2L, 1L), "fortran_order": False, "descr": "<f4"}', floats(1, 2)));
    expect(a).toEqual({ dtype: 'f32', shape: [2, 1], data: Float32Array.of(1, 2) });
  });
});

describe('encodeNpy', () => {
  it('writes the bytes np.save writes', () => {
    expect(encodeNpy([2, 3], Float32Array.of(-1, -0.5, 0, 0.5, 1, 1.5))).toEqual(numpy('f32_2x3'));
    expect(encodeNpy([1, 2, 3, 4], parseNpy(numpy('f16_1x2x3x4')).data as Uint16Array)).toEqual(numpy('f16_1x2x3x4'));
    expect(encodeNpy([], Float32Array.of(3.25))).toEqual(numpy('f32_scalar'));
    expect(encodeNpy([0], new Float32Array(0))).toEqual(numpy('f32_empty'));
    expect(encodeNpy([0, 12345678901], new Float32Array(0))).toEqual(numpy('f32_0xbig'));
    expect(encodeNpy(Array<number>(15).fill(1), new Float32Array(1))).toEqual(numpy('f32_rank15'));
  });

  it('round-trips through parseNpy, from a view at an offset', () => {
    const values = Float32Array.of(9, 1, 2, 3, 4, 5, 6, 7, 8);
    for (const shape of [[8], [2, 4], [1, 2, 2, 2]]) {
      expect(parseNpy(encodeNpy(shape, values.subarray(1)))).toEqual({ dtype: 'f32', shape, data: values.slice(1) });
    }
    expect(parseNpy(encodeNpy([3], Uint16Array.of(0x3c00, 0x8001, 0x7c00)))).toEqual({ dtype: 'f16', shape: [3], data: Uint16Array.of(0x3c00, 0x8001, 0x7c00) });
  });

  it('refuses a shape that does not fit the data, in one line', () => {
    expect(() => encodeNpy([2, 3], new Float32Array(5))).toThrow(new NpyFormatError('the data holds 5 values but shape (2, 3) needs 6'));
    expect(() => encodeNpy([-1], new Float32Array(0))).toThrow(NpyFormatError);
    expect(() => encodeNpy([1.5], new Float32Array(1))).toThrow(/is not a list of sizes ≥ 0/);
  });
});
