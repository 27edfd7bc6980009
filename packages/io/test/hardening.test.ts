import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  Comparator,
  chunkStats,
  encodeHeader,
  generateInput,
  Hw4ArgumentError,
  Hw4FormatError,
  Hw4Input,
  Hw4IoError,
  maskNonFiniteOutput,
  openOutput,
  parseDataKind,
  parseShape,
  removeStaleTemporaries,
  writeHw4Input,
  writeHw4Output,
} from '../src/node.js';
import { tempFolder } from './helpers.js';

const dir = tempFolder();
let counter = 0;
const fresh = (name: string): string => join(dir, `${counter++}-${name}`);

function fifo(name: string): string {
  const path = fresh(name);
  execFileSync('mkfifo', [path]);
  return path;
}

function readAll(path: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    createReadStream(path)
      .on('data', (b) => parts.push(b as Buffer))
      .on('end', () => { resolve(Buffer.concat(parts)); })
      .on('error', reject);
  });
}

/** A process id that is certainly not running: a child that has already exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid;
}

describe('output targets', () => {
  it('a FIFO as output is written directly and stays a FIFO (it was replaced by a regular file)', async () => {
    const path = fifo('out.fifo');
    const data = Float32Array.from([1, 2, 3, 4]);
    const [got] = await Promise.all([readAll(path), writeHw4Output(path, data)]);
    expect(new Float32Array(got.buffer, got.byteOffset, got.length / 4)).toEqual(data);
    expect(lstatSync(path).isFIFO()).toBe(true);
  });

  it('a symbolic link as output is written through to its target, and the link stays', async () => {
    const target = fresh('target.bin');
    const link = fresh('link.bin');
    writeFileSync(target, 'old');
    symlinkSync(target, link);
    await writeHw4Output(link, Float32Array.from([5, 6]));
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(target).length).toBe(8);
  });

  it('a dangling symbolic link, a trailing slash and a folder are one-line file-system errors', async () => {
    const link = fresh('dangling.bin');
    symlinkSync(join(dir, 'nowhere.bin'), link);
    await expect(openOutput(link)).rejects.toThrow(/symbolic link to .*nowhere\.bin, which does not exist/);
    await expect(openOutput(`${fresh('name')}/`)).rejects.toThrow(Hw4IoError);
    await expect(openOutput(`${fresh('name')}/`)).rejects.toThrow(/ends with a slash/);
    expect(existsSync(join(dir, `${counter - 1}-name`))).toBe(false);
    await expect(openOutput(dir)).rejects.toThrow(/is a folder/);
  });

  it('removes stale temporary files of dead processes when it starts, and keeps those of live ones', async () => {
    const folder = fresh('stale');
    mkdirSync(folder);
    const out = join(folder, 'out.bin');
    const stale = join(folder, `.out.bin.${deadPid()}.0123abcd.tmp`);
    const live = join(folder, `.out.bin.${process.pid}.89abcdef.tmp`);
    const other = join(folder, `.other.bin.${deadPid()}.0123abcd.tmp`);
    for (const p of [stale, live, other]) writeFileSync(p, 'x');
    await writeHw4Output(out, Float32Array.from([1]));
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(other)).toBe(true);
    writeFileSync(stale, 'x');
    expect(await removeStaleTemporaries(out)).toEqual([stale]);
  });
});

describe('inputs', () => {
  const shape = { B: 2, N: 3, d: 2 };
  const data = generateInput({ shape, seed: 3 });
  const bytes = Buffer.concat([Buffer.from(encodeHeader(shape)), Buffer.from(data.buffer)]);

  async function throughFifo(content: Buffer): Promise<Float32Array> {
    const path = fifo('in.fifo');
    const writer = createWriteStream(path);
    writer.on('error', () => undefined);
    writer.end(content);
    const input = await Hw4Input.open(path);
    try {
      return (await input.readAll()).data;
    } finally {
      await input.close();
    }
  }

  it('reads a pipe as a stream, checking its length as it goes', async () => {
    expect(await throughFifo(bytes)).toEqual(data);
    await expect(throughFifo(bytes.subarray(0, 40))).rejects.toThrow(/stream is truncated/);
    await expect(throughFifo(Buffer.concat([bytes, Buffer.alloc(4)]))).rejects.toThrow(/trailing bytes/);
  });

  it('a folder as input is a file-system error, not invalid data', async () => {
    const error = await Hw4Input.open(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Hw4IoError);
    expect(String(error)).toMatch(/is a folder/);
  });
});

describe('arguments', () => {
  it('a bad shape, data kind or range is an Hw4ArgumentError (a usage mistake), still an Hw4FormatError', () => {
    for (const bad of [() => parseShape('1,2'), () => parseShape('2147483647,2147483647,2147483647'), () => parseDataKind('weird')]) {
      expect(bad).toThrow(Hw4ArgumentError);
      expect(bad).toThrow(Hw4FormatError);
    }
    expect(() => generateInput({ shape: { B: 1, N: 2, d: 2 }, range: 1e39 })).toThrow(/not finite in float32/);
    expect(generateInput({ shape: { B: 1, N: 2, d: 2 }, range: 3e38 }).every(Number.isFinite)).toBe(true);
  });
});

describe('statistics and non-finite values', () => {
  const shape = { B: 2, N: 2, d: 2 };
  // batch 0: Q rows (3,4) and (0,1), K rows (1,0) and (0,2), V max 7; batch 1: NaN in Q row 1 and Inf in V.
  const data = Float32Array.from([3, 4, 0, 1, 1, 0, 0, 2, 7, -1, 2, 2, 1, 1, Number.NaN, 1, 1, 1, 1, 1, 1, 1, Infinity, 1]);

  it('gives row norms, max |V| and the non-finite rows of each batch', () => {
    const [b0, b1] = chunkStats(data, 2, shape);
    expect(b0).toEqual({ maxQNorm: 5, maxKNorm: 2, maxAbsV: 7, nonFiniteQRows: [], nonFiniteKV: false });
    expect(b1).toMatchObject({ nonFiniteQRows: [1], nonFiniteKV: true });
  });

  it('masks the rows of O that depend on NaN/Inf, and the comparator can count NaN against NaN as equal', () => {
    const stats = chunkStats(data, 2, shape);
    const O = new Float32Array(8).fill(0.5);
    maskNonFiniteOutput(O, stats, shape);
    expect([...O.subarray(0, 4)]).toEqual([0.5, 0.5, 0.5, 0.5]);
    expect(O.subarray(4).every(Number.isNaN)).toBe(true);
    const strict = new Comparator(shape);
    strict.add(O, O);
    expect(strict.result().pass).toBe(false);
    const lenient = new Comparator(shape, { nonFiniteMatches: true });
    lenient.add(O, O);
    expect(lenient.result().pass).toBe(true);
    const wrong = new Comparator(shape, { nonFiniteMatches: true });
    wrong.add(O, new Float32Array(8).fill(0.5));
    expect(wrong.result().countAboveTolerance).toBe(4);
  });

  it('writes an input through writeHw4Input to a FIFO too', async () => {
    const path = fifo('gen.fifo');
    const [got] = await Promise.all([readAll(path), writeHw4Input(path, shape, data)]);
    expect(got.length).toBe(12 + data.byteLength);
  });
});
