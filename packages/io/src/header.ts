/**
 * Validates an hw4 header against the real file size, before anything is allocated.
 */
import { Hw4FormatError } from './errors.js';
import { HEADER_BYTES, MAX_BATCH_BYTES, MAX_DIMENSION, formatBytes, formatShape, type Shape } from './shape.js';

/**
 * Reads B, N and d from the first 12 bytes and checks them against `fileBytes`, the file's real size.
 * Throws a one-line Hw4FormatError for: a file shorter than the header, B, N or d not positive, a truncated file,
 * trailing bytes, or a single batch too large to hold in memory.
 */
export function parseHeader(header: Uint8Array, fileBytes: number, name = 'input'): Shape {
  if (fileBytes < HEADER_BYTES || header.byteLength < HEADER_BYTES) {
    throw new Hw4FormatError(
      `${name}: file is ${fileBytes} bytes, shorter than the ${HEADER_BYTES}-byte header (int32 B, N, d); is it an hw4 input file?`,
    );
  }
  const view = new DataView(header.buffer, header.byteOffset, HEADER_BYTES);
  const B = view.getInt32(0, true);
  const N = view.getInt32(4, true);
  const d = view.getInt32(8, true);
  const shape: Shape = { B, N, d };
  const bad = (['B', 'N', 'd'] as const).filter((key) => shape[key] < 1);
  if (bad.length > 0) {
    throw new Hw4FormatError(
      `${name}: header says ${formatShape(shape)}; ${bad.join(', ')} must be positive (is it an hw4 input file, little-endian int32?)`,
    );
  }
  const batchBytes = 12n * BigInt(N) * BigInt(d);
  const expected = BigInt(HEADER_BYTES) + BigInt(B) * batchBytes;
  const actual = BigInt(fileBytes);
  if (expected > actual) {
    throw new Hw4FormatError(
      `${name}: file is truncated: header (${formatShape(shape)}) needs ${expected} bytes but the file has ${fileBytes}`,
    );
  }
  if (expected < actual) {
    throw new Hw4FormatError(
      `${name}: file has ${actual - expected} trailing bytes: header (${formatShape(shape)}) needs ${expected} bytes but the file has ${fileBytes}`,
    );
  }
  if (batchBytes > BigInt(MAX_BATCH_BYTES)) {
    throw new Hw4FormatError(
      `${name}: one batch (${formatShape(shape)}) needs ${formatBytes(Number(batchBytes))} of Q, K and V; at most ${formatBytes(MAX_BATCH_BYTES)} per batch is supported`,
    );
  }
  return shape;
}

/**
 * Reads and checks a header whose file size is not known in advance (standard input, a pipe): B, N and d positive,
 * the implied size representable, one batch small enough to hold. The stream's length is checked as it is read.
 */
export function parseStreamHeader(header: Uint8Array, name = 'input'): Shape {
  if (header.byteLength < HEADER_BYTES) {
    throw new Hw4FormatError(
      `${name}: stream ended after ${header.byteLength} bytes, before the ${HEADER_BYTES}-byte header (int32 B, N, d); is it an hw4 input?`,
    );
  }
  const view = new DataView(header.buffer, header.byteOffset, HEADER_BYTES);
  const shape: Shape = { B: view.getInt32(0, true), N: view.getInt32(4, true), d: view.getInt32(8, true) };
  if (shape.B < 1 || shape.N < 1 || shape.d < 1) return parseHeader(header, HEADER_BYTES, name);
  const expected = BigInt(HEADER_BYTES) + BigInt(shape.B) * 12n * BigInt(shape.N) * BigInt(shape.d);
  if (expected > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new Hw4FormatError(`${name}: header says ${formatShape(shape)}, ${expected} bytes, more than any input can hold; is it an hw4 input?`);
  }
  return parseHeader(header, Number(expected), name);
}

/**
 * The 12 header bytes for a shape. Refuses a value the int32 fields cannot hold (it would wrap to another shape);
 * zero and negative values are written as they are, for tests of malformed files, and rejected when read.
 */
export function encodeHeader(shape: Shape): Uint8Array {
  const header = new Uint8Array(HEADER_BYTES);
  const view = new DataView(header.buffer);
  (['B', 'N', 'd'] as const).forEach((key, i) => {
    const value = shape[key];
    if (!Number.isInteger(value) || value < -MAX_DIMENSION - 1 || value > MAX_DIMENSION) {
      throw new Hw4FormatError(`header: ${key} = ${value} does not fit its int32 field; B, N and d must be integers of at most ${MAX_DIMENSION}`);
    }
    view.setInt32(4 * i, value, true);
  });
  return header;
}
