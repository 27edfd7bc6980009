import { describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeHeader } from '@fa/io/node';
import { EXIT } from '../src/exit-codes.js';
import { cli, interrupt, ownLines, tempFolder, temporaries } from './cli-helpers.js';

const dir = tempFolder();
const cpuOnly = { FA_GPU: 'off' };
const input = join(dir, 'in.bin');
cli(['gen', '--shape', '1,16,8', '--seed', '2', input, '-q']);
const slow = join(dir, 'slow.bin');
cli(['gen', '--shape', '1,2048,64', '--seed', '1', slow, '-q']);

function inputFile(name: string, values: (i: number) => number): string {
  const shape = { B: 1, N: 4, d: 4 };
  const path = join(dir, name);
  const data = Float32Array.from({ length: 3 * 16 }, (_, i) => values(i));
  writeFileSync(path, Buffer.concat([Buffer.from(encodeHeader(shape)), Buffer.from(data.buffer)]));
  return path;
}

type Scenario = () => Promise<{ code: number | null; stderr: string }> | { code: number | null; stderr: string };

/** One way to reach each documented exit code. */
const SCENARIOS: Record<number, [string, Scenario]> = {
  0: ['a run that succeeds', () => cli(['--impl', 'cpu', '-q', input, join(dir, 'ok.out')], cpuOnly)],
  1: [
    'a float32 rung forced onto input whose scores overflow',
    () => cli(['--impl', 'seq-flash', '--allow-inaccurate', '-q', inputFile('huge.bin', (i) => (i < 32 ? 1e30 : 1)), join(dir, 'huge.out')], cpuOnly),
  ],
  2: ['an unknown rung', () => cli(['--impl', 'nope', input, join(dir, 'x.out')], cpuOnly)],
  3: ['an input with NaN', () => cli(['--impl', 'cpu', inputFile('nan.bin', (i) => (i === 5 ? Number.NaN : 1)), join(dir, 'nan.out')], cpuOnly)],
  4: ['an input that is a folder', () => cli(['--impl', 'cpu', dir, join(dir, 'folder.out')], cpuOnly)],
  5: [
    'check of a wrong output',
    () => {
      writeFileSync(join(dir, 'wrong.out'), new Float32Array(16 * 8).fill(9));
      return cli(['check', '-q', input, join(dir, 'wrong.out')]);
    },
  ],
  129: ['SIGHUP during a run', () => signal('SIGHUP')],
  130: ['SIGINT during a run', () => signal('SIGINT')],
  143: ['SIGTERM during a run', () => signal('SIGTERM')],
};

async function signal(name: NodeJS.Signals): Promise<{ code: number | null; stderr: string }> {
  const folder = join(dir, name);
  mkdirSync(folder);
  const result = await interrupt(slow, name, folder);
  expect(temporaries(folder), 'temporary files left').toEqual([]);
  return result;
}

describe('exit codes', () => {
  it('every code the CLI uses has a scenario here, and docs/cli.md documents each', () => {
    const reference = readFileSync(new URL('../../../docs/cli.md', import.meta.url), 'utf8');
    for (const code of Object.values(EXIT)) {
      expect(SCENARIOS[code], `scenario for ${code}`).toBeDefined();
      expect(reference).toMatch(new RegExp(`^\\| ${code} \\| `, 'm'));
    }
  });

  it.each(Object.entries(SCENARIOS).map(([code, [what, run]]) => [Number(code), what, run] as const))('%i: %s', async (code, _what, run) => {
    const result = await run();
    expect(result.code, result.stderr).toBe(code);
    if (code !== 0 && code !== EXIT.mismatch) expect(ownLines(result.stderr).filter((l) => l.startsWith('hw4-cli:')), result.stderr).toHaveLength(1);
  });
});
