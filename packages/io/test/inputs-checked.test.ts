import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  compareOutputs,
  encodeHeader,
  generateChunks,
  generateInput,
  Hw4ArgumentError,
  Hw4FormatError,
  Hw4Input,
  parseShape,
  validateShape,
  writeHw4Input,
  type DataKind,
} from '../src/node.js';
import { tempFolder } from './helpers.js';

const dir = tempFolder();
let counter = 0;
const fresh = (name: string): string => join(dir, `${counter++}-${name}`);

const shape = { B: 3, N: 2, d: 2 };
const path = fresh('in.bin');
writeFileSync(path, Buffer.concat([encodeHeader(shape), Buffer.from(generateInput({ shape, seed: 1 }).buffer)]));

/** Reads every chunk of `path` with `options`. */
async function readAllChunks(options: Parameters<Hw4Input['chunks']>[0]): Promise<number> {
  const input = await Hw4Input.open(path);
  let batches = 0;
  for await (const chunk of input.chunks(options)) batches += chunk.batches;
  return batches;
}

describe('shapes the header can hold', () => {
  it('refuses B, N or d above 2147483647 instead of writing a wrapped header', async () => {
    for (const text of ['2147483648,1,1', '4294967297,1,1', '1,2147483648,1', '1,1,4294967296']) {
      expect(() => parseShape(text)).toThrow(Hw4ArgumentError);
      expect(() => parseShape(text)).toThrow(/does not fit the header's int32; give B, N and d of at most 2147483647$/);
    }
    expect(() => validateShape({ B: 2 ** 31, N: 1, d: 1 })).toThrow(Hw4FormatError);
    expect(validateShape({ B: 2 ** 31 - 1, N: 1, d: 1 })).toEqual({ B: 2 ** 31 - 1, N: 1, d: 1 });
    const out = fresh('huge.bin');
    await expect(writeHw4Input(out, { B: 2 ** 32 + 1, N: 1, d: 1 }, new Float32Array(3))).rejects.toThrow(/int32/);
    expect(existsSync(out)).toBe(false);
  });

  it('encodeHeader refuses a value its int32 fields cannot hold rather than wrapping it', () => {
    for (const B of [2 ** 31, 2 ** 32 + 1, -(2 ** 31) - 1, 1.5, Number.NaN]) {
      expect(() => encodeHeader({ B, N: 1, d: 1 })).toThrow(/B = .* does not fit its int32 field/);
    }
    const view = new DataView(encodeHeader({ B: 2 ** 31 - 1, N: 7, d: 0 }).buffer);
    expect([view.getInt32(0, true), view.getInt32(4, true), view.getInt32(8, true)]).toEqual([2 ** 31 - 1, 7, 0]);
  });
});

describe('options of the reader', () => {
  it.each([
    [{ chunkBytes: Number.NaN }, /^chunks: chunkBytes = NaN; give a finite number above 0$/],
    [{ chunkBytes: 0 }, /chunkBytes = 0/],
    [{ batchesPerChunk: Number.NaN }, /^chunks: batchesPerChunk = NaN; give an integer of at least 1$/],
    [{ batchesPerChunk: 0 }, /batchesPerChunk = 0/],
    [{ batchesPerChunk: 1.5 }, /batchesPerChunk = 1.5/],
    [{ readAhead: Number.NaN }, /^chunks: readAhead = NaN; give an integer of at least 1$/],
    [{ readAhead: 0 }, /readAhead = 0/],
  ])('chunks(%o) is a RangeError naming the option', async (options, message) => {
    const error = await readAllChunks(options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RangeError);
    expect((error as Error).message).toMatch(message);
  });

  it('still reads with valid options', async () => {
    expect(await readAllChunks({ chunkBytes: 1, readAhead: 1 })).toBe(3);
    expect(await readAllChunks({ batchesPerChunk: 2, readAhead: 3 })).toBe(3);
  });

  it.skipIf(!existsSync('/proc/self/fd'))('chunks() closes its file when the loop ends or is left early', async () => {
    const open = (): number => readdirSync('/proc/self/fd').length;
    const before = open();
    for (let i = 0; i < 20; i++) await readAllChunks({ batchesPerChunk: 1 });
    expect(open()).toBe(before);
    for (let i = 0; i < 20; i++) {
      const input = await Hw4Input.open(path);
      for await (const chunk of input.chunks({ batchesPerChunk: 1 })) if (chunk.firstBatch === 0) break;
    }
    expect(open()).toBe(before);
    const input = await Hw4Input.open(path);
    await input.readAll();
    await input.close();
    expect(open()).toBe(before);
  });
});

describe('options of the generator', () => {
  const spec = { shape: { B: 2, N: 2, d: 2 }, seed: 1 };

  it('generateChunks with a batch count below 1 or not an integer is a RangeError, so a writer never spins on empty chunks', async () => {
    for (const count of [0, -1, Number.NaN, 0.5]) {
      expect(() => [...generateChunks(spec, count)]).toThrow(RangeError);
      expect(() => [...generateChunks(spec, count)]).toThrow(/^generateChunks: batchesPerChunk = .*; give an integer of at least 1$/);
    }
    const out = fresh('chunks.bin');
    await expect(writeHw4Input(out, spec.shape, generateChunks(spec, 0))).rejects.toThrow(RangeError);
    expect(existsSync(out)).toBe(false);
  });

  it('an unknown kind or a seed outside [0, 2^32) is an Hw4ArgumentError naming what is accepted', () => {
    expect(() => generateInput({ ...spec, kind: 'gaussian' as DataKind })).toThrow(/unknown data kind "gaussian"; choose one of uniform, dominant-key/);
    for (const seed of [Number.NaN, -1, 1.5, 2 ** 32]) {
      expect(() => generateInput({ ...spec, seed })).toThrow(Hw4ArgumentError);
      expect(() => generateInput({ ...spec, seed })).toThrow(/^seed .*: expected an integer in \[0, 2\^32\)$/);
    }
    expect(generateInput({ ...spec, seed: 2 ** 32 - 1 })).toHaveLength(24);
  });
});

describe('options of the comparator', () => {
  const out = { B: 1, N: 2, d: 2 };
  const zeros = new Float32Array(4);
  const ones = new Float32Array(4).fill(1);

  it('a tolerance or mismatch count that is not a number of at least 0 is a RangeError', () => {
    for (const tolerance of [Number.NaN, -1, Infinity]) {
      expect(() => compareOutputs(ones, zeros, out, { tolerance })).toThrow(/^compare: tolerance = .*; give a finite number of at least 0$/);
    }
    expect(() => compareOutputs(ones, zeros, out, { maxMismatches: Number.NaN })).toThrow(RangeError);
    expect(compareOutputs(ones, zeros, out, { tolerance: 0.5 }).pass).toBe(false);
  });

  it("outputs whose length is not B·N·d of the shape are a RangeError", () => {
    expect(() => compareOutputs(ones, zeros, { B: 2, N: 2, d: 2 })).toThrow(/the actual output holds 4 values but B=2, N=2, d=2 needs B·N·d = 8/);
    expect(() => compareOutputs(new Float32Array(8), new Float32Array(8), out)).toThrow(RangeError);
    expect(() => compareOutputs(zeros, zeros, { B: 1, N: 4, d: 0 })).toThrow(/d must be positive/);
  });
});
