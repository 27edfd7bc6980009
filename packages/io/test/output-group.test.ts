/**
 * OutputGroup (several outputs committed together, all or none) and the .npy header read on its own (what a reader
 * of a stream needs to know how many bytes follow).
 */
import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeNpy, Hw4IoError, npyDataStart, NpyFormatError, OutputGroup, parseNpy, parseNpyHeader } from '../src/node.js';
import { tempFolder } from './helpers.js';

const dir = tempFolder();
let counter = 0;
/** A fresh folder holding a.bin and b.bin with old contents. */
function folder(): { path: string; a: string; b: string } {
  const path = join(dir, `group-${counter++}`);
  mkdirSync(path);
  const a = join(path, 'a.bin');
  const b = join(path, 'b.bin');
  writeFileSync(a, 'old a');
  writeFileSync(b, 'old b');
  return { path, a, b };
}
const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('OutputGroup', () => {
  it('writes every output, and leaves no temporary file', async () => {
    const { path, a, b } = folder();
    const group = await OutputGroup.open([{ path: a }, { path: b }]);
    expect(readdirSync(path).filter((f) => f.endsWith('.tmp')), 'temporary files created at open').toHaveLength(2);
    await group.commit([[bytes('new a')], [bytes('new '), bytes('b')]]);
    expect(readFileSync(a, 'utf8')).toBe('new a');
    expect(readFileSync(b, 'utf8')).toBe('new b');
    expect(readdirSync(path).sort()).toEqual(['a.bin', 'b.bin']);
  });

  it('a destination that fails to open leaves no temporary file of the others', async () => {
    const { path, a } = folder();
    await expect(OutputGroup.open([{ path: a }, { path: join(path, 'missing', 'b.bin'), name: 'B' }])).rejects.toThrow(/output B: folder .*missing does not exist; create it first/);
    expect(readdirSync(path).sort()).toEqual(['a.bin', 'b.bin']);
  });

  it('refuses two outputs that are one file', async () => {
    const { path, a } = folder();
    await expect(OutputGroup.open([{ path: a, name: 'A' }, { path: join(path, '.', 'a.bin'), name: 'B' }])).rejects.toThrow(new Hw4IoError('output B: is the same file as A; give each output its own path'));
  });

  it('a direct output that fails (a full device) leaves every regular one as it was', async () => {
    const { path, a } = folder();
    const group = await OutputGroup.open([{ path: a }, { path: '/dev/full', name: 'the full one' }]);
    await expect(group.commit([[bytes('new a')], [bytes('x')]])).rejects.toThrow(/the full one: no space left on the device/);
    expect(readFileSync(a, 'utf8')).toBe('old a');
    expect(readdirSync(path).sort()).toEqual(['a.bin', 'b.bin']);
  });

  it('writes direct outputs after the regular ones are complete and before they are renamed; a last check can still stop it', async () => {
    const { path, a, b } = folder();
    const seen: string[] = [];
    const group = await OutputGroup.open([{ path: a }, { path: '/dev/null' }, { path: b }], {
      opening: (opened, open) => {
        const temporaries = readdirSync(path).filter((f) => f.endsWith('.tmp'));
        seen.push(`${opened}: ${temporaries.map((f) => readFileSync(join(path, f), 'utf8')).sort().join(', ')}; a is ${readFileSync(a, 'utf8')}`);
        return open();
      },
    });
    await expect(group.commit([[bytes('new a')], [bytes('x')], [bytes('new b')]], () => { throw new Error('no longer wanted'); })).rejects.toThrow('no longer wanted');
    expect(seen).toEqual(['/dev/null: new a, new b; a is old a']);
    expect(readFileSync(a, 'utf8')).toBe('old a');
    expect(readdirSync(path).sort()).toEqual(['a.bin', 'b.bin']);
  });

  it('abort removes the temporary files; the destinations stay as they were', async () => {
    const { path, a, b } = folder();
    const group = await OutputGroup.open([{ path: a }, { path: join(path, 'c.bin') }]);
    await group.abort();
    await group.abort();
    expect(readdirSync(path).sort()).toEqual(['a.bin', 'b.bin']);
    expect(existsSync(join(path, 'c.bin'))).toBe(false);
    expect(readFileSync(b, 'utf8')).toBe('old b');
  });
});

describe('.npy header on its own', () => {
  const file = encodeNpy([2, 3], Float32Array.of(1, 2, 3, 4, 5, 6));

  it('says where the values start and how many bytes they take, from the header alone', () => {
    expect(npyDataStart(file.subarray(0, 12))).toBe(128);
    expect(parseNpyHeader(file.subarray(0, 128))).toEqual({ dtype: 'f32', shape: [2, 3], dataStart: 128, dataBytes: 24 });
    expect(parseNpy(file).shape).toEqual([2, 3]);
  });

  it('refuses a header cut short, and tuples nested deeper than NumPy writes them, in one line', () => {
    expect(() => parseNpyHeader(file.subarray(0, 100))).toThrow(/the \.npy header claims 118 bytes but only 90 follow; the file is truncated/);
    const text = `{'descr': '<f4', 'fortran_order': False, 'shape': ${'('.repeat(50_000)}}`;
    const deep = new Uint8Array([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, text.length & 0xff, text.length >> 8, ...new TextEncoder().encode(text)]);
    expect(() => parseNpy(deep)).toThrow(new NpyFormatError(`the .npy header is not a Python dict literal (tuples or lists nested more than 32 deep at character 83); write the file with np.save`));
  });
});
