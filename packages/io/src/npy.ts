/**
 * NumPy's `.npy` format on bytes, for Node and browsers: `parseNpy` reads versions 1.0, 2.0 and 3.0 of little-endian,
 * C-order arrays of the common numeric dtypes; `encodeNpy` writes version 1.0 of the same dtypes, byte for byte as
 * `np.save` does.
 *
 * The format: the magic "\x93NUMPY", a major and a minor version byte, the header's length (2 bytes little-endian in
 * 1.0, 4 bytes in 2.0 and 3.0), the header (a Python dict literal with the keys 'descr', 'fortran_order' and 'shape',
 * Latin-1 in 1.0 and 2.0, UTF-8 in 3.0, padded with spaces and a newline), then the values in C order.
 */

/** The bytes do not follow the .npy format, or hold an array this reader does not take; one line with the fix. */
export class NpyFormatError extends Error {
  override readonly name = 'NpyFormatError';
}

export type NpyDtype = 'f32' | 'f16' | 'f64' | 'bool' | 'i32' | 'i64' | 'u8';

/** f16 values are their bits (Uint16Array); bool values are bytes, 1 for True. */
export type NpyData = Float32Array | Uint16Array | Float64Array | Uint8Array | Int32Array | BigInt64Array;

export interface NpyArray {
  dtype: NpyDtype;
  /** [] for a 0-d array (one value). */
  shape: number[];
  data: NpyData;
}

interface DtypeInfo {
  readonly dtype: NpyDtype;
  readonly bytes: number;
  readonly make: (buffer: ArrayBuffer) => NpyData;
}

/** The descr strings read, as NumPy writes them on a little-endian machine. */
const DESCRS: Readonly<Record<string, DtypeInfo>> = {
  '<f4': { dtype: 'f32', bytes: 4, make: (b) => new Float32Array(b) },
  '<f2': { dtype: 'f16', bytes: 2, make: (b) => new Uint16Array(b) },
  '<f8': { dtype: 'f64', bytes: 8, make: (b) => new Float64Array(b) },
  '|b1': { dtype: 'bool', bytes: 1, make: (b) => new Uint8Array(b) },
  '<i4': { dtype: 'i32', bytes: 4, make: (b) => new Int32Array(b) },
  '<i8': { dtype: 'i64', bytes: 8, make: (b) => new BigInt64Array(b) },
  '|u1': { dtype: 'u8', bytes: 1, make: (b) => new Uint8Array(b) },
};

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // "\x93NUMPY"
const ALIGN = 64; // np.save pads the header so that the values start at a multiple of 64
const GROWTH_AXIS_MAX_DIGITS = 21; // np.save leaves room after the header for the first axis to grow
const SUPPORTED = Object.keys(DESCRS).join(', ');
const hostLittleEndian = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;
/** How deep tuples and lists may nest in a header (np.save's nest at most two deep); deeper is refused, not recursed into. */
const MAX_NESTING = 32;

/** The whitespace Python's tokenizer skips between tokens (not the vertical tab, no-break or other Unicode spaces). */
const PYTHON_SPACE = /^[ \t\f\r\n]$/;
/** A character outside a string that Python's tokenizer refuses: a control character, DEL, or any non-ASCII one. */
const notPython = (c: string): boolean => !PYTHON_SPACE.test(c) && (c < ' ' || c > '~');
const codePoint = (c: string): string => `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;

/** A value of the header's Python literal: str, int, bool, None, tuple or list. */
type PyValue = string | number | boolean | null | { readonly tuple: PyValue[] } | { readonly list: PyValue[] };

/** Parses the Python literal subset NumPy writes in a header: a dict of str keys; str, int, bool, None, tuple, list. */
class HeaderParser {
  private at = 0;
  private depth = 0;

  /** `major`: the format's major version; only 1.0 and 2.0 take Python 2's long suffix (NumPy's header filter). */
  constructor(
    private readonly text: string,
    private readonly major = 1,
  ) {}

  dict(): Map<string, PyValue> {
    // Python's literal_eval strips leading spaces and tabs; any other text before the dict it refuses.
    while (this.text[this.at] === ' ' || this.text[this.at] === '\t') this.at++;
    const first = this.text[this.at];
    if (first !== '{') this.fail(first !== undefined && notPython(first) ? `${codePoint(first)}, which Python refuses outside a string,` : "expected '{'");
    this.at++;
    const entries = new Map<string, PyValue>();
    while (!this.take('}')) {
      const key = this.value();
      if (typeof key !== 'string') this.fail('a dict key is not a string');
      this.expect(':');
      if (entries.has(key)) this.fail(`the key '${key}' appears twice`);
      entries.set(key, this.value());
      if (!this.take(',')) {
        this.expect('}');
        break;
      }
    }
    this.skipSpace();
    if (this.at !== this.text.length) this.fail('text follows the dict');
    return entries;
  }

  private value(): PyValue {
    this.skipSpace();
    const c = this.text[this.at];
    if (c === "'" || c === '"') return this.string(c);
    if (c === '(') {
      this.at++;
      const { items, trailingComma } = this.nested(')');
      return items.length === 1 && !trailingComma ? (items[0] as PyValue) : { tuple: items };
    }
    if (c === '[') {
      this.at++;
      return { list: this.nested(']').items };
    }
    const word = /^(?:True|False|None|-?\d+L?)(?![\w.])/.exec(this.text.slice(this.at))?.[0];
    if (word === undefined) this.fail(`unexpected ${c === undefined ? 'end' : `'${c}'`}`);
    if (word === 'True' || word === 'False' || word === 'None') {
      this.at += word.length;
      return word === 'None' ? null : word === 'True';
    }
    // Python's int literals: 0, 00, … or a digit 1-9 then digits; a leading zero before other digits is a SyntaxError.
    if (/^-?0+[1-9]/.test(word)) this.fail(`the integer ${word} has a leading zero, which Python refuses`);
    if (word.endsWith('L') && this.major > 2) this.fail(`the integer ${word} has Python 2's long suffix, which only versions 1.0 and 2.0 take`);
    this.at += word.length;
    const n = Number(word.replace('L', ''));
    return n === 0 ? 0 : n; // -0 is 0
  }

  /** A tuple or list inside `depth` others, refused past MAX_NESTING (the recursion would otherwise exhaust the stack). */
  private nested(close: string): { items: PyValue[]; trailingComma: boolean } {
    if (this.depth >= MAX_NESTING) this.fail(`tuples or lists nested more than ${MAX_NESTING} deep`);
    this.depth++;
    try {
      return this.sequence(close);
    } finally {
      this.depth--;
    }
  }

  private sequence(close: string): { items: PyValue[]; trailingComma: boolean } {
    const items: PyValue[] = [];
    let trailingComma = false;
    while (!this.take(close)) {
      items.push(this.value());
      trailingComma = this.take(',');
      if (!trailingComma) {
        this.expect(close);
        break;
      }
    }
    return { items, trailingComma };
  }

  private string(quote: string): string {
    let out = '';
    for (this.at++; this.at < this.text.length; this.at++) {
      const c = this.text[this.at] as string;
      if (c === quote) {
        this.at++;
        return out;
      }
      // np.save writes no escapes; refusing them keeps what is read what Python would read.
      if (c === '\\') this.fail('a backslash escape in a string, which np.save does not write,');
      if (c === '\n' || c === '\r') this.fail('a line break inside a string, which Python refuses,');
      out += c;
    }
    return this.fail('a string is not closed');
  }

  /** Python's whitespace between tokens: space, tab, form feed and line breaks; anything else that is not ASCII text is refused here. */
  private skipSpace(): void {
    while (PYTHON_SPACE.test(this.text[this.at] ?? '')) this.at++;
    const c = this.text[this.at];
    if (c !== undefined && notPython(c)) this.fail(`${codePoint(c)}, which Python refuses outside a string,`);
  }

  private take(token: string): boolean {
    this.skipSpace();
    if (this.text[this.at] !== token) return false;
    this.at++;
    return true;
  }

  private expect(token: string): void {
    if (!this.take(token)) this.fail(`expected '${token}'`);
  }

  private fail(why: string): never {
    throw new NpyFormatError(`the .npy header is not a Python dict literal (${why} at character ${this.at}); write the file with np.save`);
  }
}

const pyShape = (shape: readonly number[]): string => (shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`);

/** The dtype of a header's 'descr', or a one-line refusal that names the fix. */
function dtypeOf(descr: PyValue): DtypeInfo {
  if (typeof descr === 'object' && descr !== null && 'list' in descr) {
    throw new NpyFormatError("the .npy array has a structured dtype; save each field as its own array, e.g. np.save(path, np.ascontiguousarray(x['field']))");
  }
  if (typeof descr !== 'string') throw new NpyFormatError("the .npy header's 'descr' is not a dtype string; write the file with np.save");
  const info = DESCRS[descr];
  if (info !== undefined) return info;
  const fix = "save it with np.ascontiguousarray(x).astype('<f4')";
  if (descr.includes('O')) throw new NpyFormatError(`the .npy array holds Python objects ('${descr}'); save a numeric array: np.save(path, np.asarray(x, dtype='<f4'))`);
  if (descr.includes('V')) throw new NpyFormatError(`the .npy array has a structured dtype ('${descr}'); save each field as its own array, e.g. np.save(path, np.ascontiguousarray(x['field']))`);
  const little = `<${descr.slice(1)}`;
  if (descr.startsWith('>') && DESCRS[little] !== undefined) throw new NpyFormatError(`the .npy array is big-endian ('${descr}'); save it with np.ascontiguousarray(x).astype('${little}')`);
  throw new NpyFormatError(`the .npy dtype '${descr}' is not supported (only ${SUPPORTED}); ${fix}`);
}

/** What a .npy header says: the values' dtype and shape, where they start, and how many bytes they take. */
export interface NpyHeader {
  dtype: NpyDtype;
  shape: number[];
  /** Offset of the first value: after the magic, the version, the header's length and the header. */
  dataStart: number;
  /** Bytes of the values the shape and dtype call for. */
  dataBytes: number;
}

/**
 * Where the values of a .npy file start, from its first 12 bytes (or all of them, if fewer): checks the magic, the
 * version and the header's length, so that a reader of a stream knows how much header to read before parseNpyHeader.
 */
export function npyDataStart(bytes: Uint8Array): number {
  if (bytes.length < 8 || MAGIC.some((b, n) => bytes[n] !== b)) throw new NpyFormatError('the bytes do not start with the .npy magic "\\x93NUMPY"; give a file written by np.save');
  const major = bytes[6] as number;
  const minor = bytes[7] as number;
  if (![1, 2, 3].includes(major) || minor !== 0) throw new NpyFormatError(`.npy format version ${major}.${minor} is not supported; write version 1.0, 2.0 or 3.0 (np.save writes 1.0)`);
  const lengthBytes = major === 1 ? 2 : 4;
  if (bytes.length < 8 + lengthBytes) throw new NpyFormatError(`the .npy file ends inside its header length (${bytes.length} bytes); the file is truncated`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  return 8 + lengthBytes + headerLength;
}

/** The header of a .npy file from `bytes`, which must hold at least the whole header (the values may follow or not). */
export function parseNpyHeader(bytes: Uint8Array): NpyHeader {
  const dataStart = npyDataStart(bytes);
  const major = bytes[6] as number;
  const headerStart = major === 1 ? 10 : 12;
  const headerLength = dataStart - headerStart;
  if (dataStart > bytes.length) throw new NpyFormatError(`the .npy header claims ${headerLength} bytes but only ${bytes.length - headerStart} follow; the file is truncated`);
  const headerBytes = bytes.subarray(headerStart, dataStart);
  let text: string;
  if (major === 3) {
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(headerBytes); // a byte order mark stays, and is refused as Python does
    } catch {
      throw new NpyFormatError('the .npy 3.0 header is not UTF-8; write the file with np.save');
    }
  } else {
    text = Array.from(headerBytes, (b) => String.fromCharCode(b)).join(''); // Latin-1
  }
  const header = new HeaderParser(text, major).dict();
  const keys = [...header.keys()].sort().join(', ');
  if (keys !== 'descr, fortran_order, shape') throw new NpyFormatError(`the .npy header has the keys ${keys || 'none'}, not descr, fortran_order, shape; write the file with np.save`);

  const info = dtypeOf(header.get('descr') as PyValue);
  const fortran = header.get('fortran_order');
  if (typeof fortran !== 'boolean') throw new NpyFormatError("the .npy header's 'fortran_order' is not True or False; write the file with np.save");
  if (fortran) throw new NpyFormatError('the .npy array is in Fortran order; save it with np.save(path, np.ascontiguousarray(x))');
  const rawShape = header.get('shape');
  const items = typeof rawShape === 'object' && rawShape !== null && 'tuple' in rawShape ? rawShape.tuple : undefined;
  if (items?.every((n): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0) !== true) {
    throw new NpyFormatError("the .npy header's 'shape' is not a tuple of sizes ≥ 0; write the file with np.save");
  }
  const shape = [...items];
  const count = shape.reduce((a, n) => a * n, 1);
  const need = count * info.bytes;
  if (!Number.isSafeInteger(need)) throw new NpyFormatError(`the .npy shape ${pyShape(shape)} is too large to read`);
  return { dtype: info.dtype, shape, dataStart, dataBytes: need };
}

/** Reads a .npy file's bytes; throws NpyFormatError with a one-line reason and fix. */
export function parseNpy(bytes: Uint8Array): NpyArray {
  const { dtype, shape, dataStart, dataBytes: need } = parseNpyHeader(bytes);
  const info = Object.values(DESCRS).find((d) => d.dtype === dtype) as DtypeInfo;
  const have = bytes.length - dataStart;
  if (have !== need) throw new NpyFormatError(`the .npy data holds ${have} bytes but shape ${pyShape(shape)} of '${info.dtype}' needs ${need}; the file is truncated or its header is wrong`);

  // Its own buffer, aligned for the typed array (Uint8Array's slice, which copies, also for a Node Buffer, whose slice does not).
  const copy = Uint8Array.prototype.slice.call(bytes, dataStart);
  if (!hostLittleEndian) swapBytes(copy, info.bytes);
  return { dtype: info.dtype, shape, data: info.make(copy.buffer) };
}

/** Reverses the bytes of each `size`-byte value in place. */
function swapBytes(bytes: Uint8Array, size: number): void {
  for (let at = 0; at + size <= bytes.length; at += size) bytes.subarray(at, at + size).reverse();
}

/** The typed array that holds each dtype's values, for encodeNpy's messages. */
const ARRAY_OF: Readonly<Record<NpyDtype, string>> = { f32: 'Float32Array', f16: 'Uint16Array', f64: 'Float64Array', bool: 'Uint8Array', i32: 'Int32Array', i64: 'BigInt64Array', u8: 'Uint8Array' };

/** The dtype of `data` as encodeNpy writes it: `dtype` where given and held by that array, else the array's own; a one-line refusal otherwise. */
function encodedDtype(data: unknown, dtype: unknown): NpyDtype {
  const kinds = Object.keys(ARRAY_OF) as NpyDtype[];
  if (dtype !== undefined && !kinds.includes(dtype as NpyDtype)) throw new NpyFormatError(`dtype ${typeof dtype === 'string' ? `'${dtype}'` : typeof dtype === 'number' ? dtype : `a ${typeof dtype}`} is not one encodeNpy writes; give one of ${kinds.join(', ')}, or leave it out`);
  const own: NpyDtype | undefined =
    data instanceof Float32Array ? 'f32'
    : data instanceof Float64Array ? 'f64'
    : data instanceof Uint16Array ? 'f16'
    : data instanceof Int32Array ? 'i32'
    : data instanceof BigInt64Array ? 'i64'
    : data instanceof Uint8Array ? (dtype === 'bool' ? 'bool' : 'u8')
    : undefined;
  const name = typeof data === 'object' && data !== null ? data.constructor.name : typeof data;
  if (own === undefined) {
    throw new NpyFormatError(`encodeNpy cannot write a ${name}; give a Float32Array, Float64Array, Uint16Array (f16 bits), Uint8Array (u8, or bool with dtype 'bool'), Int32Array or BigInt64Array`);
  }
  if (dtype !== undefined && dtype !== own) throw new NpyFormatError(`dtype '${dtype as NpyDtype}' is not held in a ${name}; give its values as a ${ARRAY_OF[dtype as NpyDtype]}, or dtype '${own}'`);
  return own;
}

/**
 * A version 1.0 .npy file of a C-order array of `shape`, of the dtype its typed array holds: Float32Array '<f4',
 * Float64Array '<f8', Uint16Array f16 bits '<f2' (the only Uint16Array dtype, as parseNpy reads them), Int32Array
 * '<i4', BigInt64Array '<i8', Uint8Array '|u1', or '|b1' with dtype 'bool' (values 0 and 1). `dtype`, where given, must
 * be the array's. The bytes are those np.save writes for the same array; parseNpy reads them back as they were.
 */
export function encodeNpy(shape: readonly number[], data: NpyData, dtype?: NpyDtype): Uint8Array {
  const kind = encodedDtype(data, dtype);
  const given: unknown = shape;
  if (!Array.isArray(given)) throw new NpyFormatError(`shape is a ${typeof given}, not a list of sizes ≥ 0; give an array of integer sizes`);
  if (!shape.every((n) => Number.isSafeInteger(n) && n >= 0)) throw new NpyFormatError(`shape [${shape.join(', ')}] is not a list of sizes ≥ 0; give integer sizes`);
  const count = shape.reduce((a, n) => a * n, 1);
  if (count !== data.length) throw new NpyFormatError(`the data holds ${data.length} values but shape ${pyShape(shape)} needs ${count}`);
  if (kind === 'bool') {
    const bad = (data as Uint8Array).findIndex((x) => x > 1);
    if (bad >= 0) throw new NpyFormatError(`bool values are 0 or 1, but data[${bad}] is ${(data as Uint8Array)[bad]}; give 0 (False) or 1 (True), or dtype 'u8'`);
  }
  const descr = Object.keys(DESCRS).find((d) => DESCRS[d]?.dtype === kind) as string;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${pyShape(shape)}, }`;
  if (shape.length > 0) header += ' '.repeat(Math.max(0, GROWTH_AXIS_MAX_DIGITS - String(shape[0]).length));
  const unpadded = MAGIC.length + 4 + header.length + 1;
  header += ' '.repeat(ALIGN - (unpadded % ALIGN)) + '\n';
  if (header.length > 0xffff) throw new NpyFormatError(`shape ${pyShape(shape)} needs a header over 65535 bytes, beyond .npy version 1.0; give fewer dimensions`);

  const valueBytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const out = new Uint8Array(MAGIC.length + 4 + header.length + valueBytes.length);
  out.set(MAGIC, 0);
  out.set([1, 0, header.length & 0xff, header.length >> 8], MAGIC.length);
  for (let n = 0; n < header.length; n++) out[MAGIC.length + 4 + n] = header.charCodeAt(n);
  const dataStart = MAGIC.length + 4 + header.length;
  out.set(valueBytes, dataStart);
  if (!hostLittleEndian) swapBytes(out.subarray(dataStart), data.BYTES_PER_ELEMENT);
  return out;
}
