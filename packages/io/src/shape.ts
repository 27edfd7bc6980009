/**
 * The shape of an hw4 problem and the size arithmetic of the format.
 *
 * Input file:  int32 B, N, d (little-endian), then for each batch Q, K, V, each N·d float32, row-major.
 * Output file: B·N·d float32, row-major, no header.
 */
import { Hw4ArgumentError, Hw4FormatError } from './errors.js';

export interface Shape {
  /** Number of batches (independent attention problems). */
  readonly B: number;
  /** Sequence length: rows of Q, K and V. */
  readonly N: number;
  /** Head size: columns of Q, K and V. */
  readonly d: number;
}

export const HEADER_BYTES = 12;
/** The largest B, N or d: the header stores each as a signed 32-bit integer. */
export const MAX_DIMENSION = 2 ** 31 - 1;
export const FLOAT_BYTES = 4;
/** The three matrices of one batch, in file order. */
export const MATRICES = ['Q', 'K', 'V'] as const;
export type MatrixName = (typeof MATRICES)[number];

/**
 * The largest single batch (Q, K and V together) the readers hold in memory at once.
 * Batches are streamed, so B is unlimited; one batch must still fit in one typed array.
 */
export const MAX_BATCH_BYTES = 2 ** 31;

/** Floats in one matrix (N·d). */
export function matrixFloats(shape: Shape): number {
  return shape.N * shape.d;
}

/** Bytes of one batch of input (Q, K and V). */
export function inputBatchBytes(shape: Shape): number {
  return 3 * matrixFloats(shape) * FLOAT_BYTES;
}

/** Bytes of one batch of output (O). */
export function outputBatchBytes(shape: Shape): number {
  return matrixFloats(shape) * FLOAT_BYTES;
}

/** Exact size of a well-formed input file. */
export function inputFileBytes(shape: Shape): number {
  return HEADER_BYTES + shape.B * inputBatchBytes(shape);
}

/** Exact size of a well-formed output file. */
export function outputFileBytes(shape: Shape): number {
  return shape.B * outputBatchBytes(shape);
}

/** Floating-point operations of the forward pass, counted as 4·B·N²·d (two matrix products). */
export function attentionFlops(shape: Shape): number {
  return 4 * shape.B * shape.N * shape.N * shape.d;
}

export function formatShape(shape: Shape): string {
  return `B=${shape.B}, N=${shape.N}, d=${shape.d}`;
}

/**
 * Checks that B, N and d are positive integers the header can hold (at most MAX_DIMENSION) and that the implied
 * sizes are representable. `what` names the source for messages (a file name, or "shape").
 */
export function validateShape(shape: Shape, what = 'shape'): Shape {
  for (const key of ['B', 'N', 'd'] as const) {
    const value = shape[key];
    if (!Number.isInteger(value) || value < 1) {
      throw new Hw4FormatError(`${what}: ${key} = ${value}; B, N and d must be positive integers`);
    }
    if (value > MAX_DIMENSION) {
      throw new Hw4FormatError(`${what}: ${key} = ${value} does not fit the header's int32; give B, N and d of at most ${MAX_DIMENSION}`);
    }
  }
  const batch = 3n * BigInt(shape.N) * BigInt(shape.d) * 4n;
  const total = 12n + BigInt(shape.B) * batch;
  if (total > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new Hw4FormatError(`${what}: ${formatShape(shape)} implies a ${total}-byte input, which no file can hold; check the header`);
  }
  if (batch > BigInt(MAX_BATCH_BYTES)) {
    throw new Hw4FormatError(
      `${what}: one batch (${formatShape(shape)}) needs ${formatBytes(Number(batch))} of Q, K and V; at most ${formatBytes(MAX_BATCH_BYTES)} per batch is supported`,
    );
  }
  return shape;
}

/** Parses "B,N,d" or "BxNxd" into a validated shape; a malformed or impossible shape is an Hw4ArgumentError. */
export function parseShape(text: string): Shape {
  const parts = text.split(/[,x× ]+/).filter((p) => p.length > 0);
  const numbers = parts.map((p) => (/^\d+$/.test(p) ? Number(p) : Number.NaN));
  const [B, N, d] = numbers;
  if (numbers.length !== 3 || B === undefined || N === undefined || d === undefined || numbers.some(Number.isNaN)) {
    throw new Hw4ArgumentError(`shape "${text}" is not three positive integers; write it as B,N,d (for example 4,1024,64)`);
  }
  try {
    return validateShape({ B, N, d }, `shape "${text}"`);
  } catch (error) {
    throw error instanceof Hw4FormatError ? new Hw4ArgumentError(error.message) : error;
  }
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(value < 10 ? 2 : 1)} ${units[unit]}`;
}
