import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { removeStaleTemporaries, writeHw4Output } from '../src/node.js';
import { temporaryPathFor } from '../src/temp-files.js';
import { tempFolder } from './helpers.js';

const dir = tempFolder();
let counter = 0;
const folder = (): string => {
  const path = join(dir, String(counter++));
  mkdirSync(path);
  return path;
};

/** The id of a process that has ended. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '0']).pid;

/** A stale temporary file of `destination` (its writer has ended), named as the writer names it. */
function staleTemporary(destination: string): string {
  const live = basename(temporaryPathFor(destination));
  const path = join(destination, '..', live.replace(`.${process.pid}.`, `.${deadPid()}.`));
  writeFileSync(path, 'x');
  return path;
}

const NAME_MAX = 255;

describe('temporary names of long outputs', () => {
  it('a legal 250-byte OUTPUT name is written (its temporary name fits the 255-byte limit)', async () => {
    const out = join(folder(), 'o'.repeat(250));
    await writeHw4Output(out, Float32Array.from([1, 2]));
    expect(readFileSync(out)).toEqual(Buffer.from(Float32Array.from([1, 2]).buffer));
  });

  it.each([
    ['ASCII', 'a'.repeat(255)],
    ['two-byte characters', 'é'.repeat(127)],
    ['four-byte characters', '𝑥'.repeat(63)],
  ])('cuts a long name of %s between characters, within 255 bytes', (_what, name) => {
    const temporary = basename(temporaryPathFor(join(dir, name)));
    expect(Buffer.byteLength(temporary)).toBeLessThanOrEqual(NAME_MAX);
    expect(Buffer.from(temporary).toString()).toBe(temporary);
    expect(temporary.startsWith(`.${name.slice(0, 20)}`)).toBe(true);
    expect(temporary).toMatch(/~[0-9a-f]{8}\.\d+\.[0-9a-f]{8}\.tmp$/);
  });

  it('keeps the old name where it fits', () => {
    expect(basename(temporaryPathFor(join(dir, 'out.bin')))).toMatch(new RegExp(`^\\.out\\.bin\\.${process.pid}\\.[0-9a-f]{8}\\.tmp$`));
  });

  it("the next run for a long OUTPUT removes that output's stale temporary files only, not those of a name with the same beginning", async () => {
    const here = folder();
    const common = 'n'.repeat(240);
    const mine = join(here, `${common}-mine`);
    const other = join(here, `${common}-other`);
    const [stale, othersStale] = [staleTemporary(mine), staleTemporary(other)];
    const live = temporaryPathFor(mine);
    writeFileSync(live, 'x');
    expect(await removeStaleTemporaries(mine)).toEqual([stale]);
    expect(existsSync(othersStale)).toBe(true);
    expect(existsSync(live)).toBe(true);
    await writeHw4Output(other, Float32Array.from([3]));
    expect(existsSync(othersStale)).toBe(false);
  });
});
