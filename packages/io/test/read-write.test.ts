import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AtomicFileWriter,
  encodeHeader,
  generateInput,
  Hw4FormatError,
  Hw4Input,
  Hw4IoError,
  Hw4NonFiniteError,
  matrixView,
  readHw4Input,
  writeFileAtomic,
  writeHw4Input,
  writeHw4Output,
} from '../src/node.js';
import { tempFolder } from './helpers.js';

const dir = tempFolder();
let counter = 0;
const fresh = (name: string): string => join(dir, `${counter++}-${name}`);

describe('input files', () => {
  it('round-trips any shape and data, whole and in chunks of any size', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 3 }),
        async (B, N, d, seed, perChunk, readAhead) => {
          const shape = { B, N, d };
          const data = generateInput({ shape, seed });
          const path = fresh('in.bin');
          await writeHw4Input(path, shape, data);
          const whole = await readHw4Input(path);
          expect(whole.shape).toEqual(shape);
          expect(whole.data).toEqual(data);
          const input = await Hw4Input.open(path);
          const parts: Float32Array[] = [];
          let expectFirst = 0;
          for await (const chunk of input.chunks({ batchesPerChunk: perChunk, readAhead, stats: readAhead > 1 })) {
            expect(chunk.firstBatch).toBe(expectFirst);
            expectFirst += chunk.batches;
            parts.push(chunk.data);
          }
          await input.close();
          expect(expectFirst).toBe(B);
          expect(Float32Array.from(parts.flatMap((p) => [...p]))).toEqual(data);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('matrixView gives Q, K or V of one batch of a chunk', async () => {
    const shape = { B: 2, N: 2, d: 3 };
    const data = generateInput({ shape, seed: 4 });
    const path = fresh('views.bin');
    await writeHw4Input(path, shape, data);
    const input = await Hw4Input.open(path);
    const chunk = await input.readAll();
    await input.close();
    expect(matrixView(chunk, shape, 1, 2)).toEqual(data.subarray(5 * 6, 6 * 6));
  });

  it('is byte-exact: header then Q, K, V per batch, little-endian', async () => {
    const shape = { B: 2, N: 1, d: 1 };
    const path = fresh('tiny.bin');
    await writeHw4Input(path, shape, Float32Array.from([1, 2, 3, 4, 5, 6]));
    const bytes = readFileSync(path);
    expect(bytes.length).toBe(12 + 24);
    expect(bytes.readInt32LE(0)).toBe(2);
    expect(bytes.readFloatLE(12 + 4 * 5)).toBe(6);
  });

  it('rejects NaN and ±Inf with their count and the first position', async () => {
    const shape = { B: 3, N: 4, d: 2 };
    const data = generateInput({ shape, seed: 1 });
    data[1 * 24 + 8 + 2 * 2 + 1] = Number.NaN; // batch 1, K, row 2, col 1
    data[2 * 24 + 16] = Number.POSITIVE_INFINITY;
    data[2 * 24 + 17] = Number.NEGATIVE_INFINITY;
    const path = fresh('nan.bin');
    await writeHw4Input(path, shape, data);
    const error = await readHw4Input(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Hw4NonFiniteError);
    expect((error as Hw4NonFiniteError).count).toBe(3);
    expect((error as Error).message).toMatch(/3 non-finite values .* batch 1, K, row 2, column 1/);
    const allowed = await readHw4Input(path, { allowNonFinite: true });
    expect(Number.isNaN(allowed.data[1 * 24 + 8 + 5])).toBe(true);
  });

  it('counts non-finite values over the whole file whatever the chunks and the reads ahead', async () => {
    const shape = { B: 6, N: 3, d: 2 };
    const data = generateInput({ shape, seed: 3 });
    for (const at of [0 * 18 + 1, 2 * 18 + 7, 4 * 18 + 13, 5 * 18 + 17]) data[at] = Number.NaN;
    const path = fresh('nan-chunks.bin');
    await writeHw4Input(path, shape, data);
    for (const readAhead of [1, 2, 4]) {
      for (const batchesPerChunk of [1, 2, 6]) {
        const input = await Hw4Input.open(path);
        const error = await (async () => {
          for await (const chunk of input.chunks({ batchesPerChunk, readAhead, stats: batchesPerChunk > 1 })) expect(chunk.batches).toBeGreaterThan(0);
        })().catch((e: unknown) => e);
        await input.close();
        expect((error as Hw4NonFiniteError).count).toBe(4);
        expect((error as Error).message).toMatch(/batch 0, Q, row 0, column 1/);
      }
    }
  });

  it('reports every malformed file on open with a one-line error', async () => {
    const cases: [string, Uint8Array, RegExp][] = [
      ['empty', new Uint8Array(0), /0 bytes, shorter than the 12-byte header/],
      ['short', new Uint8Array(5), /5 bytes/],
      ['zero-d', encodeHeader({ B: 1, N: 1, d: 1 }).map((v, i) => (i === 8 ? 0 : v)), /d must be positive/],
      ['truncated', Buffer.concat([encodeHeader({ B: 2, N: 2, d: 2 }), Buffer.alloc(40)]), /truncated.*needs 108 bytes but the file has 52/],
      ['trailing', Buffer.concat([encodeHeader({ B: 1, N: 1, d: 1 }), Buffer.alloc(13)]), /1 trailing bytes/],
      ['huge', Buffer.concat([encodeHeader({ B: 2 ** 30, N: 128, d: 32 }), Buffer.alloc(1012)]), /truncated/],
    ];
    for (const [name, bytes, pattern] of cases) {
      const path = fresh(`${name}.bin`);
      writeFileSync(path, bytes);
      const error = await Hw4Input.open(path).catch((e: unknown) => e);
      expect(error, name).toBeInstanceOf(Hw4FormatError);
      expect((error as Error).message, name).toMatch(pattern);
      expect((error as Error).message).not.toContain('\n');
    }
  });

  it('says when the input does not exist or is a folder', async () => {
    await expect(Hw4Input.open(join(dir, 'nope.bin'))).rejects.toThrow(Hw4IoError);
    await expect(Hw4Input.open(join(dir, 'nope.bin'))).rejects.toThrow(/does not exist/);
    await expect(Hw4Input.open(dir)).rejects.toThrow(Hw4IoError);
    await expect(Hw4Input.open(dir)).rejects.toThrow(/is a folder/);
  });
});

describe('atomic writes', () => {
  it('writes output files exactly and leaves no temporary file', async () => {
    const path = fresh('out.bin');
    await writeHw4Output(path, Float32Array.from([1.5, -2]));
    expect(readFileSync(path)).toEqual(Buffer.from(Float32Array.from([1.5, -2]).buffer));
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('never clobbers an existing file when the run fails, and leaves no partial file', async () => {
    const path = fresh('keep.bin');
    writeFileSync(path, 'precious');
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield new Uint8Array(1000);
      await Promise.resolve();
      throw new Error('compute failed');
    }
    await expect(writeFileAtomic(path, failing())).rejects.toThrow('compute failed');
    expect(readFileSync(path, 'utf8')).toBe('precious');
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('abort() removes the temporary file and keeps the destination', async () => {
    const path = fresh('abort.bin');
    const writer = await AtomicFileWriter.open(path);
    await writer.write(new Uint8Array(10));
    expect(existsSync(writer.temporaryPath)).toBe(true);
    await writer.abort();
    expect(existsSync(writer.temporaryPath)).toBe(false);
    expect(existsSync(path)).toBe(false);
  });

  it('refuses a missing output folder or a folder as output, before writing anything', async () => {
    await expect(AtomicFileWriter.open(join(dir, 'missing', 'out.bin'))).rejects.toThrow(/folder .* does not exist/);
    await expect(AtomicFileWriter.open(dir)).rejects.toThrow(/is a folder/);
  });

  it('refuses input data whose length does not match the shape, writing nothing', async () => {
    const path = fresh('wrong.bin');
    await expect(writeHw4Input(path, { B: 1, N: 2, d: 2 }, new Float32Array(5))).rejects.toThrow(/needs 12/);
    expect(existsSync(path)).toBe(false);
  });
});
