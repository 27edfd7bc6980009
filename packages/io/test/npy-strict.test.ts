/**
 * The .npy header read as NumPy reads it (numpy/lib/format.py: an ASCII Python literal given to ast.literal_eval, with
 * Python 2's long suffix filtered out of versions 1.0 and 2.0 only): what NumPy refuses is refused in one line, what
 * np.save writes is read. And encodeNpy writes the dtype its typed array holds, byte for byte as np.save, for every
 * dtype parseNpy reads. Where python3 with NumPy is at hand, np.load gives its own verdict on the same bytes.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { encodeNpy, NpyFormatError, parseNpy, type NpyData, type NpyDtype } from '../src/index.js';

const bytesOf = (base64: string): Uint8Array => Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));

/** np.save(f, x) of each array named (NumPy 2.4). */
const NUMPY = {
  /** np.array([[1.5, -2.0, 1e300]], dtype='<f8') */
  f64: 'k05VTVBZAQB2AHsnZGVzY3InOiAnPGY4JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDEsIDMpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAAAAAAD4PwAAAAAAAADAnHUAiDzkN34=',
  /** np.array([True, False, True]) */
  bool: 'k05VTVBZAQB2AHsnZGVzY3InOiAnfGIxJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDMsKSwgfSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoBAAE=',
  /** np.array([[0, 7], [200, 255]], dtype='u1') */
  u8: 'k05VTVBZAQB2AHsnZGVzY3InOiAnfHUxJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsIDIpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAB8j/',
  /** np.array([-2147483648, 0, 2147483647], dtype='<i4') */
  i32: 'k05VTVBZAQB2AHsnZGVzY3InOiAnPGk0JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDMsKSwgfSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAACAAAAAAP///38=',
  /** np.array([-(2**62), 9], dtype='<i8') */
  i64: 'k05VTVBZAQB2AHsnZGVzY3InOiAnPGk4JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsKSwgfSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAAAAAAAAwAkAAAAAAAAA',
  /** np.array([1.0, -0.5, np.inf], dtype='<f2') */
  f16: 'k05VTVBZAQB2AHsnZGVzY3InOiAnPGYyJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDMsKSwgfSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAPAC4AHw=',
  /** np.array(2.5, dtype='<f4') */
  f32: 'k05VTVBZAQB2AHsnZGVzY3InOiAnPGY0JywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKCksIH0gICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAACBA',
} as const;

const numpy = (name: keyof typeof NUMPY): Uint8Array => bytesOf(NUMPY[name]);

/** A file of `header` (Latin-1 in versions 1.0 and 2.0, UTF-8 in 3.0, as NumPy reads them) and `data`. */
function npyWith(header: string, data: Uint8Array, major = 1): Uint8Array {
  const text = major === 3 ? new TextEncoder().encode(header) : Uint8Array.from(header, (c) => c.charCodeAt(0));
  const lengthBytes = major === 1 ? 2 : 4;
  const out = new Uint8Array(8 + lengthBytes + text.length + data.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, major, 0]);
  const view = new DataView(out.buffer);
  if (lengthBytes === 2) view.setUint16(8, text.length, true);
  else view.setUint32(8, text.length, true);
  out.set(text, 8 + lengthBytes);
  out.set(data, 8 + lengthBytes + text.length);
  return out;
}

const ONE = new Uint8Array(Float32Array.of(1).buffer);
const NONE = new Uint8Array(0);
const dict = (shape: string, between = ' '): string => `{'descr': '<f4',${between}'fortran_order': False, 'shape': ${shape}, }`;

/** Files NumPy 2.4's np.load refuses, each with what the one-line refusal here says. */
const REFUSED: readonly { name: string; bytes: Uint8Array; message: RegExp }[] = [
  { name: 'a no-break space between entries (Latin-1 0xA0)', bytes: npyWith(dict('(1,)', '\u00a0'), ONE), message: /U\+00A0, which Python refuses outside a string/ },
  { name: 'a vertical tab between entries', bytes: npyWith(dict('(1,)', '\v'), ONE), message: /U\+000B, which Python refuses outside a string/ },
  { name: 'a line separator (U+2028) in a 3.0 header', bytes: npyWith(dict('(1,)', '\u2028'), ONE, 3), message: /U\+2028/ },
  { name: 'an ideographic space (U+3000) in a 3.0 header', bytes: npyWith(dict('(1,)', '\u3000'), ONE, 3), message: /U\+3000/ },
  { name: 'a byte order mark before the dict', bytes: npyWith(`\ufeff${dict('(1,)')}`, ONE, 3), message: /U\+FEFF/ },
  { name: 'a NUL after the dict', bytes: npyWith(`${dict('(1,)')}\0`, ONE), message: /U\+0000/ },
  { name: 'a leading zero in the shape: (01,)', bytes: npyWith(dict('(01,)'), ONE), message: /the integer 01 has a leading zero, which Python refuses/ },
  { name: 'a leading zero in the shape: (1, 007)', bytes: npyWith(dict('(1, 007)'), new Uint8Array(28)), message: /the integer 007 has a leading zero/ },
  { name: 'a leading zero in a negative size: (-01,)', bytes: npyWith(dict('(-01,)'), ONE), message: /the integer -01 has a leading zero/ },
  { name: "Python 2's long suffix in a 3.0 header", bytes: npyWith(dict('(1L,)'), ONE, 3), message: /long suffix, which only versions 1\.0 and 2\.0 take/ },
  { name: 'a lower-case long suffix', bytes: npyWith(dict('(1l,)'), ONE), message: /unexpected '1'/ },
  { name: 'a backslash escape in the descr', bytes: npyWith("{'descr': '\\<f4', 'fortran_order': False, 'shape': (1,), }", ONE), message: /backslash escape in a string/ },
  { name: 'a line break inside a string', bytes: npyWith("{'descr': '<f4\n', 'fortran_order': False, 'shape': (1,), }", ONE), message: /line break inside a string/ },
  { name: 'a line break then a space before the dict', bytes: npyWith(`\n ${dict('(1,)')}`, ONE), message: /expected '\{' at character 0/ },
  { name: '10000 nested parentheses', bytes: npyWith(dict(`${'('.repeat(10_000)}1,${')'.repeat(10_000)}`), ONE), message: /nested more than \d+ deep/ },
];

/** Files np.load reads, with what parseNpy reads from them: np.save's header and Python's other spacing. */
const ACCEPTED: readonly { name: string; bytes: Uint8Array; shape: number[] }[] = [
  { name: 'tabs, form feeds and CR LF between entries', bytes: npyWith(dict('(1,)', '\t\f\r\n'), ONE), shape: [1] },
  { name: 'spaces and a tab before the dict, spaces and a line break after it', bytes: npyWith(` \t${dict('(1,)')}   \n`, ONE), shape: [1] },
  { name: 'zero written 00 and -0', bytes: npyWith(dict('(00, -0)'), NONE), shape: [0, 0] },
  { name: "Python 2's long suffix in version 1.0", bytes: npyWith(dict('(1L,)'), ONE), shape: [1] },
  { name: "Python 2's long suffix in version 2.0", bytes: npyWith(dict('(1L,)'), ONE, 2), shape: [1] },
];

/** The NpyFormatError message parsing `bytes` throws (the test fails if it throws none, or another error). */
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

describe('parseNpy refuses what NumPy refuses, in one line', () => {
  it.for(REFUSED)('$name', ({ bytes, message }) => {
    expect(refusal(bytes)).toMatch(message);
  });
});

describe('parseNpy reads what NumPy reads', () => {
  it.for(ACCEPTED)('$name', ({ bytes, shape }) => {
    expect(parseNpy(bytes).shape).toEqual(shape);
  });

  it('reads every file np.save wrote', () => {
    for (const name of Object.keys(NUMPY) as (keyof typeof NUMPY)[]) expect(() => parseNpy(numpy(name)), name).not.toThrow();
  });
});

/** np.load's verdict on each file, where python3 with NumPy runs here: true where it reads the file. */
function numpyVerdicts(files: readonly Uint8Array[]): boolean[] | undefined {
  const script = [
    'import base64, io, json, sys, warnings',
    'import numpy as np',
    'warnings.simplefilter("ignore")',
    'out = []',
    'for b in json.load(sys.stdin):',
    '    try:',
    '        np.load(io.BytesIO(base64.b64decode(b)))',
    '        out.append(True)',
    '    except Exception:',
    '        out.append(False)',
    'print(json.dumps(out))',
  ].join('\n');
  const input = JSON.stringify(files.map((bytes) => btoa(Array.from(bytes, (b) => String.fromCharCode(b)).join(''))));
  const run = spawnSync('python3', ['-c', script], { input, encoding: 'utf8', timeout: 60_000 });
  if (run.status !== 0) return undefined;
  return JSON.parse(run.stdout) as boolean[];
}

const hasNumpy = spawnSync('python3', ['-c', 'import numpy'], { encoding: 'utf8', timeout: 60_000 }).status === 0;

describe('against NumPy itself', () => {
  it.skipIf(!hasNumpy)('np.load refuses every file refused here and reads every file read here (skipped without python3 and NumPy)', () => {
    const verdicts = numpyVerdicts([...REFUSED.map((c) => c.bytes), ...ACCEPTED.map((c) => c.bytes), ...Object.values(NUMPY).map(bytesOf)]);
    expect(verdicts).toBeDefined();
    const names = [...REFUSED.map((c) => c.name), ...ACCEPTED.map((c) => c.name), ...Object.keys(NUMPY)];
    const expected = [...REFUSED.map(() => false), ...ACCEPTED.map(() => true), ...Object.keys(NUMPY).map(() => true)];
    expect(Object.fromEntries(names.map((name, n) => [name, verdicts?.[n]]))).toEqual(Object.fromEntries(names.map((name, n) => [name, expected[n]])));
  });
});

describe('encodeNpy writes the dtype its array holds', () => {
  const cases: readonly { name: keyof typeof NUMPY; shape: number[]; data: NpyData; dtype?: NpyDtype }[] = [
    { name: 'f64', shape: [1, 3], data: Float64Array.of(1.5, -2, 1e300) },
    { name: 'bool', shape: [3], data: Uint8Array.of(1, 0, 1), dtype: 'bool' },
    { name: 'u8', shape: [2, 2], data: Uint8Array.of(0, 7, 200, 255) },
    { name: 'i32', shape: [3], data: Int32Array.of(-2147483648, 0, 2147483647) },
    { name: 'i64', shape: [2], data: BigInt64Array.of(-(2n ** 62n), 9n) },
    { name: 'f16', shape: [3], data: Uint16Array.of(0x3c00, 0xb800, 0x7c00) },
    { name: 'f16', shape: [3], data: Uint16Array.of(0x3c00, 0xb800, 0x7c00), dtype: 'f16' },
    { name: 'f32', shape: [], data: Float32Array.of(2.5) },
  ];

  it.for(cases)('$name ($dtype): the bytes np.save writes, read back as they were', ({ name, shape, data, dtype }) => {
    const bytes = encodeNpy(shape, data, dtype);
    expect(bytes).toEqual(numpy(name));
    expect(parseNpy(bytes)).toEqual({ dtype: name, shape, data });
  });

  it('round-trips every file np.save wrote, given the dtype parseNpy read', () => {
    for (const name of Object.keys(NUMPY) as (keyof typeof NUMPY)[]) {
      const read = parseNpy(numpy(name));
      expect(encodeNpy(read.shape, read.data, read.dtype), name).toEqual(numpy(name));
    }
  });

  it('refuses arrays it cannot write and a dtype the array does not hold, in one line', () => {
    const refused = (run: () => unknown): string => {
      try {
        run();
      } catch (error) {
        expect(error).toBeInstanceOf(NpyFormatError);
        expect((error as Error).message).not.toContain('\n');
        return (error as Error).message;
      }
      throw new Error('encodeNpy wrote the array');
    };
    expect(refused(() => encodeNpy([2], Int16Array.of(1, 2) as never))).toMatch(/^encodeNpy cannot write a Int16Array; give a Float32Array, Float64Array/);
    expect(refused(() => encodeNpy([2], [1, 2] as never))).toMatch(/^encodeNpy cannot write a Array/);
    expect(refused(() => encodeNpy([2], Float32Array.of(1, 2), 'f64'))).toBe("dtype 'f64' is not held in a Float32Array; give its values as a Float64Array, or dtype 'f32'");
    expect(refused(() => encodeNpy([2], Uint16Array.of(1, 2), 'u8'))).toMatch(/^dtype 'u8' is not held in a Uint16Array/);
    expect(refused(() => encodeNpy([2], Float32Array.of(1, 2), 'f128' as never))).toMatch(/^dtype 'f128' is not one encodeNpy writes; give one of f32, f16, f64, bool, i32, i64, u8/);
    expect(refused(() => encodeNpy([2], Uint8Array.of(1, 2), 'bool'))).toBe("bool values are 0 or 1, but data[1] is 2; give 0 (False) or 1 (True), or dtype 'u8'");
  });
});
