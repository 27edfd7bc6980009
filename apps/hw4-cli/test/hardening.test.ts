import { describe, expect, it } from 'vitest';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, createReadStream, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { encodeHeader } from '@fa/io/node';
import { CLI, cli, interrupt, ownLines, tempFolder, temporaries } from './cli-helpers.js';

const dir = tempFolder();
const cpuOnly = { FA_GPU: 'off' };
const input = join(dir, 'in.bin');
cli(['gen', '--shape', '2,40,16', '--seed', '3', input, '-q']);
const reference = join(dir, 'reference.out');
cli(['--impl', 'cpu', '-q', input, reference], cpuOnly);

function file(name: string, shape: { B: number; N: number; d: number }, values: (i: number) => number): string {
  const path = join(dir, name);
  const data = Float32Array.from({ length: shape.B * 3 * shape.N * shape.d }, (_, i) => values(i));
  writeFileSync(path, Buffer.concat([Buffer.from(encodeHeader(shape)), Buffer.from(data.buffer)]));
  return path;
}

const floats = (path: string): Float32Array => {
  const bytes = readFileSync(path);
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
};

/** Runs the CLI with `stdin` piped in; resolves with its exit code and output bytes. */
function cliPiped(args: string[], stdin: Buffer): { code: number | null; stdout: Buffer; stderr: string } {
  const result = spawnSync(process.execPath, [CLI, ...args], { input: stdin, env: { ...process.env, ...cpuOnly } });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr.toString() };
}

describe('special outputs (defect 1)', () => {
  it('a FIFO as OUTPUT gets the bytes and stays a FIFO', async () => {
    const fifo = join(dir, 'out.fifo');
    execFileSync('mkfifo', [fifo]);
    const received = new Promise<Buffer>((resolve) => {
      const parts: Buffer[] = [];
      createReadStream(fifo).on('data', (b) => parts.push(b as Buffer)).on('end', () => { resolve(Buffer.concat(parts)); });
    });
    const run = spawn(process.execPath, [CLI, '--impl', 'cpu', '-q', input, fifo], { env: { ...process.env, ...cpuOnly } });
    const code = await new Promise<number | null>((resolve) => run.on('close', resolve));
    expect(code).toBe(0);
    expect(await received).toEqual(readFileSync(reference));
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  });

  it.skipIf(process.getuid?.() !== 0)(`a character device as OUTPUT is written to, not replaced${process.getuid?.() === 0 ? '' : ' (skipped: needs root for mknod)'}`, () => {
    const device = join(dir, 'null-copy');
    execFileSync('mknod', [device, 'c', '1', '3']);
    const run = cli(['--impl', 'cpu', '-q', input, device], cpuOnly);
    expect(run.code, run.stderr).toBe(0);
    expect(lstatSync(device).isCharacterDevice()).toBe(true);
  });

  it('a symbolic link as OUTPUT is written through to its target, like cp', () => {
    const target = join(dir, 'target.out');
    const link = join(dir, 'link.out');
    writeFileSync(target, 'old');
    symlinkSync(target, link);
    expect(cli(['--impl', 'cpu', '-q', input, link], cpuOnly).code).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(target)).toEqual(readFileSync(reference));
  });

  it('- as OUTPUT writes standard output, - as INPUT reads standard input (checked as a stream)', () => {
    const bytes = readFileSync(input);
    const piped = cliPiped(['--impl', 'cpu', '-q', '-', '-'], bytes);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toEqual(readFileSync(reference));
    const short = cliPiped(['--impl', 'cpu', '-q', '-', join(dir, 'short.out')], bytes.subarray(0, 100));
    expect(short.code).toBe(3);
    expect(ownLines(short.stderr)).toEqual([expect.stringMatching(/standard input: stream is truncated/)]);
    expect(existsSync(join(dir, 'short.out'))).toBe(false);
    const long = cliPiped(['--impl', 'cpu', '-q', '-', join(dir, 'long.out')], Buffer.concat([bytes, Buffer.alloc(4)]));
    expect(long.code).toBe(3);
    expect(ownLines(long.stderr)).toEqual([expect.stringMatching(/trailing bytes/)]);
    expect(cli(['--json', input, '-'], cpuOnly).code).toBe(2);
  });
});

describe('large magnitudes (defect 2)', () => {
  // Uniform ±40 at N = 256, d = 32: float32 rungs measured 5e-3 to 8e-3 off, beyond the 5e-3 contract.
  const large = join(dir, 'large.bin');
  cli(['gen', '--shape', '1,256,32', '--kind', 'large', '--seed', '2', large, '-q']);

  it('a float32 rung named with --impl refuses to write a file beyond the tolerance, exit 2', () => {
    const output = join(dir, 'large.out');
    writeFileSync(output, 'keep me');
    const run = cli(['--impl', 'seq-flash', large, output], cpuOnly);
    expect(run.code).toBe(2);
    expect(ownLines(run.stderr)).toEqual([
      expect.stringMatching(/rung seq-flash computes in float32 and cannot promise the tolerance 0.005 on this input: its scores reach about .*--impl cpu.*--allow-inaccurate/),
    ]);
    expect(readFileSync(output, 'utf8')).toBe('keep me');
  });

  it('--allow-inaccurate runs it anyway, with a note', () => {
    const output = join(dir, 'large-anyway.out');
    const run = cli(['--impl', 'seq-flash', '--allow-inaccurate', large, output], cpuOnly);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/note: --allow-inaccurate: seq-flash computes in float32/);
  });

  it('the default run is within 5e-3 of the float64 oracle', () => {
    const output = join(dir, 'large-default.out');
    expect(cli(['-q', large, output], cpuOnly).code).toBe(0);
    expect(cli(['check', '-q', large, output]).code).toBe(0);
  });
});

describe('overflow and NaN (defect 3)', () => {
  const shape = { B: 2, N: 8, d: 4 };
  const size = shape.N * shape.d;
  // Batch 0: Q and K of magnitude 1e30 (finite, but scores of 1e60 overflow float32); batch 1: ordinary values.
  const huge = file('huge.bin', shape, (i) => Math.sin(i) * (i < 2 * size ? 1e30 : 1));

  it('finite input whose scores overflow float32: said in terms of the input, not as a bug', () => {
    const named = cli(['--impl', 'seq-flash', huge, join(dir, 'huge-named.out')], cpuOnly);
    expect(named.code).toBe(2);
    expect(ownLines(named.stderr)[0]).toMatch(/float32 products overflow \(scores up to about 1\.\de\+60/);
    const anyway = cli(['--impl', 'seq-flash', '--allow-inaccurate', '-q', huge, join(dir, 'huge-anyway.out')], cpuOnly);
    expect(anyway.code).toBe(1);
    expect(ownLines(anyway.stderr)).toEqual([expect.stringMatching(/overflowed float32 at \(batch 0, .*this input is finite but .*use the float64 cpu rung/)]);
    expect(anyway.stderr).not.toMatch(/a bug/);
    expect(existsSync(join(dir, 'huge-anyway.out'))).toBe(false);
  });

  it('the default run computes it with the float64 rung, and check agrees', () => {
    const output = join(dir, 'huge.out');
    const run = cli(['-q', huge, output], cpuOnly);
    expect(run.code, run.stderr).toBe(0);
    expect(cli(['check', '-q', huge, output]).code).toBe(0);
  });

  it('--allow-non-finite passes NaN through: NaN rows out where the input has NaN/Inf, the rest correct', () => {
    // Batch 0: NaN in Q row 2; batch 1: +Inf in K row 5, so all of batch 1 depends on it.
    const nan = file('nan-rows.bin', shape, (i) => (i === 2 * shape.d + 1 ? Number.NaN : i === 3 * size + size + 5 * shape.d ? Infinity : Math.cos(i)));
    for (const impl of ['seq-flash', 'cpu']) {
      const output = join(dir, `nan-${impl}.out`);
      const run = cli(['--impl', impl, '--allow-non-finite', '-q', nan, output], cpuOnly);
      expect(run.code, run.stderr).toBe(0);
      const O = floats(output);
      const nanAt = [...O].map((x, i) => (Number.isNaN(x) ? i : -1)).filter((i) => i >= 0);
      const row2 = Array.from({ length: shape.d }, (_, c) => 2 * shape.d + c);
      const batch1 = Array.from({ length: size }, (_, k) => size + k);
      expect(nanAt).toEqual([...row2, ...batch1]);
      const check = cli(['check', '--allow-non-finite', '-q', nan, output]);
      expect(check.code, check.stderr).toBe(0);
    }
    expect(cli(['check', '-q', nan, join(dir, 'nan-cpu.out')]).code).toBe(3);
  });
});

describe('stale temporary files (defect 4; the signals are in exit-codes.test.ts)', () => {
  const slow = join(dir, 'slow.bin');
  cli(['gen', '--shape', '1,2048,64', '--seed', '1', slow, '-q']);

  it('a run killed outright leaves its temporary file; the next run for the same output removes it', async () => {
    const folder = join(dir, 'killed');
    mkdirSync(folder);
    await interrupt(slow, 'SIGKILL', folder);
    expect(temporaries(folder)).toHaveLength(1);
    expect(cli(['--impl', 'cpu', '-q', input, join(folder, 'out.bin')], cpuOnly).code).toBe(0);
    expect(temporaries(folder)).toEqual([]);
  });
});

describe('exit codes and arguments (defect 5)', () => {
  const fresh = (name: string): string => join(dir, name);

  it.each([
    ['gen --shape 1,2', ['gen', '--shape', '1,2', fresh('g1.bin')], /shape "1,2" is not three positive integers/],
    ['gen --kind weird', ['gen', '--shape', '1,2,3', '--kind', 'weird', fresh('g2.bin')], /unknown data kind "weird"/],
    ['ladder --shape 0,1,1', ['ladder', '--shape', '0,1,1'], /B = 0/],
    ['bench --shapes 1,2', ['bench', '--shapes', '1,2', '--no-torch'], /shape "1,2"/],
    ['--impl twice', ['--impl', 'cpu', '--impl', 'seq-flash', input, fresh('twice.out')], /--impl is given twice \(cpu, then seq-flash\); give it once/],
    ['--tolerance -1', ['check', '--tolerance', '-1', input, reference], /--tolerance -1: expected a non-negative number/],
    ['-t -1', ['check', '-t', '-1', input, reference], /--tolerance -1: expected a non-negative number/],
    ['--range -5', ['gen', '--shape', '1,2,3', '--range', '-5', fresh('g3.bin')], /--range -5: expected a positive number/],
    ['--range 1e39', ['gen', '--shape', '1,2,3', '--range', '1e39', fresh('g4.bin')], /--range 1e39: expected a positive number up to 3.4e38/],
    ['--threads above the cores', ['--impl', 'cpu', '--threads', String(availableParallelism() + 1), input, fresh('t.out')], /this machine has \d+ cores?; give at most/],
  ])('%s is a usage error: one line, exit 2, nothing written', (_name, args, pattern) => {
    const run = cli(args, cpuOnly);
    expect(run.code).toBe(2);
    expect(ownLines(run.stderr)).toEqual([expect.stringMatching(pattern)]);
    expect(run.stderr).not.toMatch(/ambiguous/);
    expect(readdirSync(dir).filter((f) => /^g\d\.bin|twice|^t\.out/.test(f))).toEqual([]);
  });

  it('an input that is a folder is a file-system error, exit 4', () => {
    const run = cli(['--impl', 'cpu', dir, fresh('folder.out')], cpuOnly);
    expect(run.code).toBe(4);
    expect(ownLines(run.stderr)).toEqual([expect.stringMatching(/is a folder; give the path of an hw4 input file/)]);
  });

  it('a read-only OUTPUT is refused, exit 4, and stays as it was', () => {
    const target = fresh('read-only.out');
    writeFileSync(target, 'keep');
    chmodSync(target, 0o444);
    const run = cli(['--impl', 'cpu', input, target], cpuOnly);
    expect(run.code).toBe(4);
    expect(ownLines(run.stderr)).toEqual([expect.stringMatching(/is read-only \(mode 444\); make it writable/)]);
    expect(readFileSync(target, 'utf8')).toBe('keep');
  });

  it('a trailing slash on OUTPUT is an error, exit 4, and writes no file of that name', () => {
    const run = cli(['--impl', 'cpu', input, `${fresh('name')}/`], cpuOnly);
    expect(run.code).toBe(4);
    expect(ownLines(run.stderr)).toEqual([expect.stringMatching(/ends with a slash, so it names a folder/)]);
    expect(existsSync(fresh('name'))).toBe(false);
  });
});
