import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeHeader } from '@fa/io/node';
import { cli, ownLines, tempFolder } from './cli-helpers.js';

const dir = tempFolder();
const cpuOnly = { FA_GPU: 'off' };
const input = join(dir, 'in.bin');
const generated = cli(['gen', '--shape', '3,77,32', '--seed', '5', '--expected', join(dir, 'expected.bin'), input, '-q']);

describe('hw4-cli run', () => {
  it('generates an input and its oracle output', () => {
    expect(generated.code, generated.stderr).toBe(0);
    expect(readFileSync(input).length).toBe(12 + 12 * 3 * 77 * 32);
    expect(readFileSync(join(dir, 'expected.bin')).length).toBe(4 * 3 * 77 * 32);
  });

  it.each(['seq-attention', 'seq-flash', 'cpu'])('--impl %s writes an output that check accepts', (impl) => {
    const output = join(dir, `${impl}.out`);
    const run = cli(['--impl', impl, input, output], cpuOnly);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/total .* s/);
    expect(run.stderr).toMatch(/compute .*GFLOP\/s/);
    const check = cli(['check', input, output]);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stderr).toMatch(/PASS: max abs error/);
    const against = cli(['check', input, output, '--expected', join(dir, 'expected.bin'), '--tolerance', '1e-5']);
    expect(against.code, against.stderr).toBe(0);
  });

  it('picks the fastest rung available when --impl is absent, and --json reports it', () => {
    const run = cli(['--json', '-q', input, join(dir, 'default.out')], cpuOnly);
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as { impl: string; seconds: Record<string, number> };
    expect(summary.impl).toBe('cpu');
    expect(summary.seconds.total).toBeGreaterThan(0);
    expect(run.stderr).toBe('');
  });

  it('reads in small chunks with the same result', () => {
    const out = join(dir, 'chunked.out');
    expect(cli(['--impl', 'seq-flash', '--chunk-mb', '0.01', '-q', input, out], cpuOnly).code).toBe(0);
    expect(readFileSync(out)).toEqual(readFileSync(join(dir, 'seq-flash.out')));
  });
});

describe('hw4-cli on bad input', () => {
  const precious = join(dir, 'precious.out');
  const bad = (name: string, bytes: Uint8Array): string => {
    const path = join(dir, name);
    writeFileSync(path, bytes);
    return path;
  };
  const header = (B: number, N: number, d: number): Buffer => Buffer.from(encodeHeader({ B, N, d }));
  const nan = Buffer.concat([header(1, 1, 1), Buffer.from(Float32Array.from([1, Number.NaN, 2]).buffer)]);

  it.each([
    ['empty file', bad('empty.bin', new Uint8Array(0)), 3, /shorter than the 12-byte header/],
    ['short file', bad('short.bin', new Uint8Array(7)), 3, /7 bytes/],
    ['zero N', bad('zero.bin', header(1, 0, 4)), 3, /N must be positive/],
    ['truncated', bad('trunc.bin', Buffer.concat([header(2, 4, 4), Buffer.alloc(100)])), 3, /truncated/],
    ['trailing bytes', bad('trail.bin', Buffer.concat([header(1, 1, 1), Buffer.alloc(16)])), 3, /4 trailing bytes/],
    ['huge claim', bad('huge.bin', Buffer.concat([header(2 ** 30, 128, 32), Buffer.alloc(1012)])), 3, /truncated/],
    ['NaN', bad('nan.bin', nan), 3, /1 non-finite value .*batch 0, K, row 0, column 0/],
    ['missing input', join(dir, 'does-not-exist.bin'), 4, /does not exist/],
  ] as const)('%s: one-line error, exit %i, existing output untouched', (_name, path, code, pattern) => {
    writeFileSync(precious, 'keep me');
    const run = cli(['--impl', 'cpu', path, precious], cpuOnly);
    expect(run.code).toBe(code);
    const lines = ownLines(run.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^hw4-cli: error: /);
    expect(lines[0]).toMatch(pattern);
    expect(readFileSync(precious, 'utf8')).toBe('keep me');
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });


  it('a missing output folder fails before computing, exit 4', () => {
    const run = cli(['--impl', 'cpu', input, join(dir, 'no', 'such', 'out.bin')], cpuOnly);
    expect(run.code).toBe(4);
    expect(ownLines(run.stderr)).toEqual([expect.stringMatching(/folder .* does not exist; create it first/)]);
  });

  it('refuses to write the output over the input', () => {
    const before = readFileSync(input);
    const run = cli(['--impl', 'cpu', input, input], cpuOnly);
    expect(run.code).toBe(4);
    expect(ownLines(run.stderr)[0]).toMatch(/is the input file itself/);
    expect(readFileSync(input)).toEqual(before);
  });

  it.each([
    [['--impl', 'nope', 'a', 'b'], /unknown rung "nope"; choose one of seq-attention/],
    [['--impl', 'in.bin', 'out.bin'], /unknown rung "in.bin"; choose one of seq-attention/],
    [['--bogus', 'a', 'b'], /Unknown option '--bogus'/],
    [['only-one.bin'], /needs INPUT and OUTPUT/],
    [['gen', 'x.bin'], /gen needs --shape/],
    [['gen', '--shape', '1,2', 'x.bin'], /B,N,d/],
    [['gen', '--shape', '1,2,3', '--kind', 'weird', 'x.bin'], /unknown data kind "weird"/],
    [['--impl', 'cpu', '--threads', '0', 'a', 'b'], /--threads 0: expected a positive integer/],
  ])('usage error %j: one line, exit 2', (args, pattern) => {
    const run = cli(args, cpuOnly);
    expect(run.code).toBe(2);
    expect(ownLines(run.stderr)).toEqual([expect.stringMatching(pattern)]);
    expect(existsSync('x.bin')).toBe(false);
  });
});

/** The oracle's output as floats, from the Buffer's own bytes: its `.buffer` may be larger than the file (it is under
 * Node 24's readFileSync). */
function expectedValues(): Float32Array {
  const bytes = readFileSync(join(dir, 'expected.bin'));
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

describe('hw4-cli check', () => {
  it('fails with exit 5 and the first mismatches when an output is wrong', () => {
    const wrong = join(dir, 'wrong.out');
    const data = expectedValues();
    data[2 * 77 * 32 + 5 * 32 + 7] = (data[2 * 77 * 32 + 5 * 32 + 7] ?? 0) + 0.5;
    writeFileSync(wrong, data);
    const run = cli(['check', input, wrong, '--json', '-q']);
    expect(run.code).toBe(5);
    const result = JSON.parse(run.stdout) as { pass: boolean; firstMismatches: { batch: number; row: number; col: number }[] };
    expect(result.pass).toBe(false);
    expect(result.firstMismatches[0]).toMatchObject({ batch: 2, row: 5, col: 7 });
  });

  it('--rows checks sampled rows only (always including the last row of each batch)', () => {
    const good = cli(['check', input, join(dir, 'expected.bin'), '--rows', '5', '--json', '-q']);
    expect(good.code, good.stderr).toBe(0);
    expect((JSON.parse(good.stdout) as { count: number }).count).toBe(3 * 5 * 32);
    const wrong = join(dir, 'wrong-last-row.out');
    const data = expectedValues();
    data[1 * 77 * 32 + 76 * 32 + 3] = (data[1 * 77 * 32 + 76 * 32 + 3] ?? 0) - 1;
    writeFileSync(wrong, data);
    const bad = cli(['check', input, wrong, '--rows', '5', '--json', '-q']);
    expect(bad.code).toBe(5);
    expect((JSON.parse(bad.stdout) as { firstMismatches: unknown[] }).firstMismatches[0]).toMatchObject({ batch: 1, row: 76, col: 3 });
  });

  it('rejects an output whose size does not match the input', () => {
    const run = cli(['check', input, input]);
    expect(run.code).toBe(3);
    expect(ownLines(run.stderr)[0]).toMatch(/output file is \d+ bytes but B=3, N=77, d=32 needs 29568/);
  });
});

describe('hw4-cli information', () => {
  it('--help answers with usage, exit codes and examples', () => {
    const run = cli(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Usage/);
    expect(run.stdout).toMatch(/Exit codes/);
    expect(run.stdout).toMatch(/Examples/);
  });

  it('--version prints the version', () => {
    expect(cli(['--version']).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('--list --json lists every rung with availability, and says why the GPU is missing', () => {
    const run = cli(['--list', '--json'], cpuOnly);
    expect(run.code).toBe(0);
    const listed = JSON.parse(run.stdout) as {
      rungs: { id: string; index: number; parent: string | null; kind: string; available: boolean; reason?: string }[];
      adapter: unknown;
      gpuUnavailableReason?: string;
    };
    expect(listed.adapter).toBeNull();
    expect(listed.gpuUnavailableReason).toMatch(/FA_GPU=off/);
    const rungs = listed.rungs;
    expect(rungs.map((r) => r.index)).toEqual(rungs.map((_, i) => i + 1));
    // The ladder is a tree: every rung but the first names the rung it changes.
    expect(rungs[0]?.parent).toBeNull();
    expect(rungs.slice(1).filter((r) => typeof r.parent !== 'string')).toEqual([]);
    expect(rungs.find((r) => r.id === 'staged-matrix')?.parent).toBe('compensated-matrix');
    for (const rung of rungs) {
      expect(typeof rung.id).toBe('string');
      expect(['cpu', 'gpu']).toContain(rung.kind);
      expect(rung.available).toBe(rung.kind === 'cpu');
      if (!rung.available) expect(rung.reason).toMatch(/FA_GPU=off/);
    }
    const text = cli(['--list'], cpuOnly);
    expect(text.stdout).toMatch(/GPU: none \(GPU disabled by FA_GPU=off\)/);
  });

  it('writes the same file in many chunks, the last one partial, as in one', () => {
    const input = join(dir, 'chunks.bin');
    expect(cli(['gen', '--shape', '7,100,32', '--seed', '4', '-q', input]).code).toBe(0);
    const whole = join(dir, 'chunks-whole.out');
    const pieces = join(dir, 'chunks-pieces.out');
    expect(cli(['--impl', 'seq-flash', '-q', input, whole], cpuOnly).code).toBe(0);
    // 0.2 MiB holds 5 batches of 100×32: chunks of 5 and 2 batches.
    expect(cli(['--impl', 'seq-flash', '-q', '--chunk-mb', '0.2', input, pieces], cpuOnly).code).toBe(0);
    expect(readFileSync(pieces).equals(readFileSync(whole))).toBe(true);
  });

  it('--list says which rung a run without --impl would use, and why', () => {
    const run = cli(['--list', '--json', '--shape', '3,100,64'], cpuOnly);
    expect(run.code).toBe(0);
    const { choices } = JSON.parse(run.stdout) as { choices: { shape: { B: number; N: number; d: number }; rung: string; reason: string }[] };
    expect(choices.map((c) => [c.shape, c.rung])).toEqual([[{ B: 3, N: 100, d: 64 }, 'cpu']]);
    expect(choices[0]?.reason).toMatch(/no GPU/);
    const text = cli(['--list'], cpuOnly).stdout;
    expect(text).toMatch(/Without --impl, hw4-cli would use/);
    expect(text).toMatch(/B=26, N=32768, d=64: cpu, no GPU/);
    expect(cli(['--list', '--shape', '3,x,64'], cpuOnly).code).toBe(2);
  });

  it('ladder runs every available rung on a generated input and prints the table', () => {
    const run = cli(['ladder', '--shape', '2,64,32', '--json', '-q'], cpuOnly);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as { rungs: { id: string; ran: boolean; comparison?: { pass: boolean } }[] };
    const ran = result.rungs.filter((r) => r.ran);
    expect(ran.map((r) => r.id)).toEqual(expect.arrayContaining(['seq-attention', 'seq-flash', 'cpu']));
    expect(ran.every((r) => r.comparison?.pass)).toBe(true);
  });
});
