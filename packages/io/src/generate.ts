/**
 * Deterministic input generator: the same spec gives the same bytes on every machine. Each batch has its own seed
 * derived from (seed, batch), so any batch can be generated alone and files of any B stream in bounded memory.
 */
import { Hw4ArgumentError } from './errors.js';
import { positiveInteger } from './options.js';
import { mix32, Xoshiro128 } from './prng.js';
import { matrixFloats, validateShape, type Shape } from './shape.js';

/**
 * What the data looks like:
 * - `uniform`: Q, K, V uniform in [-range, range] (range 3 like the original suite).
 * - `dominant-key`: each query row is a copy of one random key row, so one score per row dominates.
 * - `negative-scores`: Q > 0 and K < 0 everywhere, so every score is below about -120 and exp(score) underflows:
 *    a running max that starts at FLT_MIN instead of -Inf divides 0 by 0 here.
 * - `constant-rows`: every key row is the same, so each row of scores is constant and O is the column mean of V.
 * - `large`: uniform in [-40, 40] (range 40 unless given): scores in the thousands.
 */
export const DATA_KINDS = ['uniform', 'dominant-key', 'negative-scores', 'constant-rows', 'large'] as const;
export type DataKind = (typeof DATA_KINDS)[number];

export interface GenerateSpec {
  shape: Shape;
  kind?: DataKind;
  seed?: number;
  /** Value range; each kind has its own default. */
  range?: number;
}

export function defaultRange(kind: DataKind, d: number): number {
  switch (kind) {
    case 'large':
      return 40;
    case 'negative-scores':
      // (range/2)² · d / √d ≥ 120, so every score ≤ -120.
      return Math.ceil(Math.sqrt(480 / Math.sqrt(d)));
    default:
      return 3;
  }
}

export function parseDataKind(text: string): DataKind {
  const kind = DATA_KINDS.find((k) => k === text);
  if (kind === undefined) throw new Hw4ArgumentError(`unknown data kind "${text}"; choose one of ${DATA_KINDS.join(', ')}`);
  return kind;
}

/** The largest finite float32. */
export const FLOAT32_MAX = 3.4028234663852886e38;

/** Checks a value range: positive, and small enough that every value in [-range, range] is a finite float32. */
export function validateRange(range: number): number {
  if (!(range > 0) || !Number.isFinite(range)) throw new Hw4ArgumentError(`range ${range}: expected a positive number`);
  if (range > FLOAT32_MAX) {
    throw new Hw4ArgumentError(`range ${range}: values beyond ${FLOAT32_MAX.toPrecision(5)} are not finite in float32; give at most 3.4e38`);
  }
  return range;
}

/** The largest seed that gives its own data: the generator mixes the seed as an unsigned 32-bit integer. */
const MAX_SEED = 2 ** 32 - 1;

/** Checks a seed: an integer in [0, 2^32). */
export function validateSeed(seed: number): number {
  if (!Number.isInteger(seed) || seed < 0 || seed > MAX_SEED) throw new Hw4ArgumentError(`seed ${seed}: expected an integer in [0, 2^32)`);
  return seed;
}

/** Checks a spec before anything is generated: its shape, kind, seed and range; each mistake is an Hw4ArgumentError. */
export function validateSpec(spec: GenerateSpec): GenerateSpec {
  validateShape(spec.shape);
  if (spec.kind !== undefined) parseDataKind(spec.kind);
  if (spec.seed !== undefined) validateSeed(spec.seed);
  if (spec.range !== undefined) validateRange(spec.range);
  return spec;
}

/** Q, K, V of batch `b` (3·N·d floats). */
export function generateBatch(spec: GenerateSpec, b: number, into?: Float32Array): Float32Array {
  validateSpec(spec);
  const { N, d } = spec.shape;
  const kind = spec.kind ?? 'uniform';
  const r = spec.range ?? defaultRange(kind, d);
  const size = matrixFloats(spec.shape);
  const out = into ?? new Float32Array(3 * size);
  const rng = new Xoshiro128(mix32((spec.seed ?? 0) ^ mix32(b)));
  const Q = out.subarray(0, size);
  const K = out.subarray(size, 2 * size);
  const V = out.subarray(2 * size, 3 * size);
  const fill = (m: Float32Array, lo: number, hi: number): void => {
    for (let i = 0; i < m.length; i++) m[i] = rng.nextRange(lo, hi);
  };
  switch (kind) {
    case 'uniform':
    case 'large':
      fill(Q, -r, r);
      fill(K, -r, r);
      break;
    case 'dominant-key':
      fill(K, -r, r);
      for (let i = 0; i < N; i++) {
        const j = rng.nextInt(N);
        Q.set(K.subarray(j * d, (j + 1) * d), i * d);
      }
      break;
    case 'negative-scores':
      fill(Q, r / 2, r);
      fill(K, -r, -r / 2);
      break;
    case 'constant-rows': {
      fill(Q, -r, r);
      const row = K.subarray(0, d);
      fill(row, -r, r);
      for (let j = 1; j < N; j++) K.set(row, j * d);
      break;
    }
  }
  fill(V, -r, r);
  return out;
}

/** All batches of a small input, concatenated (B·3·N·d floats). */
export function generateInput(spec: GenerateSpec): Float32Array {
  validateSpec(spec);
  const batchFloats = 3 * matrixFloats(spec.shape);
  const out = new Float32Array(spec.shape.B * batchFloats);
  for (let b = 0; b < spec.shape.B; b++) generateBatch(spec, b, out.subarray(b * batchFloats, (b + 1) * batchFloats));
  return out;
}

/** The batches of an input in chunks of up to `batchesPerChunk` (an integer of at least 1), for streaming large files. */
export function* generateChunks(spec: GenerateSpec, batchesPerChunk: number): Generator<Float32Array> {
  validateSpec(spec);
  positiveInteger('generateChunks: batchesPerChunk', batchesPerChunk);
  const batchFloats = 3 * matrixFloats(spec.shape);
  for (let first = 0; first < spec.shape.B; first += batchesPerChunk) {
    const count = Math.min(batchesPerChunk, spec.shape.B - first);
    const chunk = new Float32Array(count * batchFloats);
    for (let b = 0; b < count; b++) generateBatch(spec, first + b, chunk.subarray(b * batchFloats, (b + 1) * batchFloats));
    yield chunk;
  }
}
