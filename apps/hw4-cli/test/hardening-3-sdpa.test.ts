/**
 * hw4-cli sdpa on awkward files and command lines: an output that is an input, OUTPUT and --lse committed together,
 * inputs read only as far as their header says, destinations checked before any work, strict numbers, standard
 * output written once, messages in the command's words, options of another mode refused, and the exit codes that
 * `sdpa --help` lists each reached by a run.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, createReadStream, linkSync, mkdirSync, openSync, readdirSync, readFileSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeNpy, parseNpy } from '@fa/io';
import { CLI, cli, ownLines, tempFolder, temporaries } from './cli-helpers.js';

const dir = tempFolder();
const NO_GPU = { FA_GPU: 'off' };
const OLD = 'OLD';

function values(count: number, seed: number): Float32Array {
  let state = seed;
  return Float32Array.from({ length: count }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state / 2 ** 32) * 2 - 1;
  });
}

const file = (name: string, bytes: Uint8Array | string): string => {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
};
const Q = file('q.npy', encodeNpy([1, 2, 3, 8], values(48, 1)));
const K = file('k.npy', encodeNpy([1, 2, 5, 8], values(80, 2)));
const V = file('v.npy', encodeNpy([1, 2, 5, 8], values(80, 3)));
const qBytes = readFileSync(Q);

let counter = 0;
/** A fresh folder with OUTPUT (out.npy) holding OLD. */
function outputFolder(): { folder: string; out: string } {
  const folder = join(dir, `folder-${counter++}`);
  mkdirSync(folder);
  const out = join(folder, 'out.npy');
  writeFileSync(out, OLD);
  return { folder, out };
}

function fifo(): string {
  const path = join(dir, `fifo-${counter++}`);
  execFileSync('mkfifo', [path]);
  return path;
}

interface Started {
  process: ChildProcess;
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
}

function startCli(args: string[], env: Record<string, string> = NO_GPU): Started {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  child.stdout.resume();
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => { resolve({ code, signal }); }));
  return { process: child, closed, stderr: () => stderr };
}

/** Resolves when `condition` holds (polled), or with false after `ms`. */
async function waitFor(condition: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

/** Whether a thread of process `pid` waits in open() for a FIFO's other end. */
function waitsForFifoPartner(pid: number): boolean {
  try {
    return readdirSync(`/proc/${pid}/task`).some((task) => readFileSync(`/proc/${pid}/task/${task}/wchan`, 'utf8') === 'wait_for_partner');
  } catch {
    return false;
  }
}

/** How the run ended, or undefined if it has not within `ms` (then it is killed). */
async function endsWithin(run: Started, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null } | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => { timer = setTimeout(() => { resolve(undefined); }, ms); });
  const ended = await Promise.race([run.closed, timeout]);
  clearTimeout(timer);
  if (ended === undefined) run.process.kill('SIGKILL');
  return ended;
}

/** Starts a run whose Q is a FIFO no one writes, and resolves once it waits in that FIFO's open. */
async function waitingOnFifo(extra: string[] = [], env: Record<string, string> = NO_GPU): Promise<{ run: Started; waiter: number }> {
  const run = startCli(['sdpa', fifo(), K, V, join(dir, `never-${counter++}.npy`), ...extra], env);
  let waiter = run.process.pid ?? 0;
  const found = await waitFor(() => {
    // Behind the stderr filter the child process waits; its id is the launcher's child.
    let children = '';
    try {
      children = readFileSync(`/proc/${run.process.pid ?? 0}/task/${run.process.pid ?? 0}/children`, 'utf8').trim();
    } catch {
      // ended already: the wait fails below
    }
    waiter = children === '' ? (run.process.pid ?? 0) : Number(children.split(' ')[0]);
    return waitsForFifoPartner(waiter);
  }, 10_000);
  expect(found, 'waiting in open()').toBe(true);
  return { run, waiter };
}

/** Exactly one line on stderr, the error. */
const oneError = (stderr: string, message: RegExp): void => {
  expect(ownLines(stderr), stderr).toEqual([expect.stringMatching(message)]);
};

describe('an OUTPUT or --lse that is an input is refused before anything is read (1, 3)', () => {
  const sub = join(dir, 'sub');
  mkdirSync(sub);
  const link = join(dir, 'q-link.npy');
  symlinkSync(Q, link);
  const hard = join(dir, 'q-hard.npy');
  linkSync(Q, hard);
  const mask = file('mask.npy', encodeNpy([5], values(5, 4)));
  // V is a FIFO no one writes: a run that read its inputs first would wait for ever.
  const waitingV = fifo();
  const cases: [string, string[], RegExp][] = [
    ['OUTPUT Q by the same name', [Q, K, waitingV, Q], /OUTPUT .*q\.npy is the input file Q itself; writing it would destroy the input, choose another path/],
    ['OUTPUT Q through ../', [Q, K, waitingV, `${sub}/../q.npy`], /OUTPUT .*is the input file Q \(.*q\.npy\) itself/],
    ['OUTPUT a symbolic link to Q', [Q, K, waitingV, link], /OUTPUT .*q-link\.npy is the input file Q/],
    ['OUTPUT a hard link to Q', [Q, K, waitingV, hard], /OUTPUT .*q-hard\.npy is the input file Q/],
    ['OUTPUT the mask', [Q, K, waitingV, mask, '--mask', mask], /OUTPUT .*mask\.npy is the input file the mask itself/],
    ['--lse Q', [Q, K, waitingV, join(dir, 'fresh.npy'), '--lse', Q], /--lse .*q\.npy is the input file Q itself/],
    ['--lse the hard link to Q', [Q, K, waitingV, join(dir, 'fresh.npy'), '--lse', hard], /--lse .*q-hard\.npy is the input file Q/],
  ];
  it.each(cases)('%s: exit 4, one line, the input unchanged', async (_what, args, message) => {
    const run = startCli(['sdpa', ...args]);
    const ended = await endsWithin(run, 5_000);
    expect(ended?.code, run.stderr()).toBe(4);
    oneError(run.stderr(), message);
    expect(readFileSync(Q)).toEqual(qBytes);
    expect(readFileSync(mask)).toEqual(Buffer.from(encodeNpy([5], values(5, 4))));
  });

  it('--lse that is OUTPUT (existing, or not yet, or through ./) is refused with exit 4', () => {
    const { folder, out } = outputFolder();
    for (const [output, lse] of [[out, out], [join(folder, 'new.npy'), join(folder, 'new.npy')], [out, join(folder, '.', 'out.npy')]] as const) {
      const run = cli(['sdpa', Q, K, V, output, '--lse', lse], NO_GPU);
      expect(run.code, run.stderr).toBe(4);
      oneError(run.stderr, /--lse .* is OUTPUT .* itself; one would replace the other, choose another path/);
    }
    expect(readFileSync(out, 'utf8')).toBe(OLD);
    expect(readdirSync(folder).sort()).toEqual(['out.npy']);
  });
});

describe('OUTPUT and --lse are committed together, or neither (2)', () => {
  it.each([
    ['in a missing folder', (folder: string) => join(folder, 'missing', 'lse.npy'), /folder .*missing does not exist; create it first/],
    ['a folder', (folder: string) => folder, /is a folder; give a file path/],
    ['a read-only file', (folder: string) => { const path = join(folder, 'ro.npy'); writeFileSync(path, OLD); chmodSync(path, 0o444); return path; }, /is read-only/],
    ['/dev/full', () => '/dev/full', /--lse \/dev\/full: no space left on the device/],
  ])('--lse %s: exit 4, OUTPUT as it was, no temporary file', (_what, lseOf, message) => {
    const { folder, out } = outputFolder();
    const run = cli(['sdpa', Q, K, V, out, '--lse', lseOf(folder)], NO_GPU);
    expect(run.code, run.stderr).toBe(4);
    oneError(run.stderr, message);
    expect(readFileSync(out, 'utf8')).toBe(OLD);
    expect(temporaries(folder)).toEqual([]);
  });

  it('--lse past the file size limit (a full disk for one file): exit 4, OUTPUT as it was', () => {
    const { folder, out } = outputFolder();
    // f16 tensors of head size 1: OUTPUT (2 bytes a row, 6 KiB) fits in 8 KiB, the log-sum-exps (4 bytes a row) do not.
    const q16 = file('q16-long.npy', encodeNpy([1, 1, 3000, 1], new Uint16Array(3000).fill(0x3c00)));
    const k16 = file('k16-short.npy', encodeNpy([1, 1, 3, 1], new Uint16Array(3).fill(0x3c00)));
    const run = spawnSync('bash', ['-c', 'ulimit -f 8 && exec "$@"', 'bash', process.execPath, CLI, 'sdpa', q16, k16, k16, out, '--lse', join(folder, 'lse.npy')], {
      encoding: 'utf8',
      env: { ...process.env, ...NO_GPU },
    });
    expect(run.status, run.stderr).toBe(4);
    oneError(run.stderr, /--lse .*lse\.npy: the file would grow past the largest size allowed/);
    expect(readFileSync(out, 'utf8')).toBe(OLD);
    expect(temporaries(folder)).toEqual([]);
    expect(readdirSync(folder)).toEqual(['out.npy']);
  });

  it('SIGTERM while --lse is a FIFO with no reader: exit 143, OUTPUT as it was, no temporary file', async () => {
    const { folder, out } = outputFolder();
    const run = startCli(['sdpa', Q, K, V, out, '--lse', fifo()]);
    expect(await waitFor(() => waitsForFifoPartner(run.process.pid ?? 0), 10_000), 'waiting in open()').toBe(true);
    expect(temporaries(folder), 'OUTPUT complete in its temporary file').toHaveLength(1);
    run.process.kill('SIGTERM');
    const ended = await endsWithin(run, 5_000);
    expect(ended?.code, run.stderr()).toBe(143);
    expect(readFileSync(out, 'utf8')).toBe(OLD);
    expect(temporaries(folder)).toEqual([]);
  });

  it('a FIFO as OUTPUT is written after --lse is complete, and --lse renamed into place after it', async () => {
    const { folder } = outputFolder();
    const out = fifo();
    const lse = join(folder, 'lse.npy');
    const received = new Promise<Buffer>((resolve) => {
      const parts: Buffer[] = [];
      createReadStream(out).on('data', (b) => parts.push(b as Buffer)).on('end', () => { resolve(Buffer.concat(parts)); });
    });
    const run = startCli(['sdpa', Q, K, V, out, '--lse', lse, '-q']);
    expect((await endsWithin(run, 10_000))?.code, run.stderr()).toBe(0);
    expect(parseNpy(await received).shape).toEqual([1, 2, 3, 8]);
    expect(parseNpy(readFileSync(lse)).shape).toEqual([1, 2, 3]);
  });
});

describe('inputs are read only as far as their header says (6)', () => {
  it('/dev/zero as Q: exit 3 at once, one line', async () => {
    const run = startCli(['sdpa', '/dev/zero', K, V, join(dir, 'zero.npy')]);
    expect((await endsWithin(run, 5_000))?.code, run.stderr()).toBe(3);
    oneError(run.stderr(), /Q \/dev\/zero: the bytes do not start with the \.npy magic/);
  });

  it.each([
    ['Q', (path: string) => [path, K, V]],
    ['the mask', (path: string) => [Q, K, V, '--mask', path]],
  ])('%s a FIFO fed a .npy file and then zeros for ever: exit 3 at once, nothing written', async (what, args) => {
    const path = fifo();
    const source = what === 'Q' ? Q : file(`mask-${counter++}.npy`, encodeNpy([5], values(5, 6)));
    const writer = spawn('sh', ['-c', 'cat "$1" /dev/zero > "$2"', 'sh', source, path], { stdio: 'ignore' });
    const out = join(dir, `endless-${counter++}.npy`);
    const all = args(path);
    const run = startCli(['sdpa', ...all.slice(0, 3), out, ...all.slice(3)]);
    const ended = await endsWithin(run, 5_000);
    writer.kill('SIGKILL');
    expect(ended?.code, run.stderr()).toBe(3);
    oneError(run.stderr(), new RegExp(`^hw4-cli: error: ${what} .*: the \\.npy stream goes on after the \\d+ bytes its header announces; give one \\.npy file and nothing after it$`));
    expect(readdirSync(dir)).not.toContain(basename(out));
  });

  it('standard input: a whole file is read, a short or a long one refused with exit 3', () => {
    const piped = (bytes: Uint8Array, out: string): ReturnType<typeof spawnSync> =>
      spawnSync(process.execPath, [CLI, 'sdpa', '-', K, V, out, '-q'], { input: bytes, env: { ...process.env, ...NO_GPU }, encoding: 'utf8' });
    const fromFile = join(dir, 'from-file.npy');
    expect(cli(['sdpa', Q, K, V, fromFile, '-q'], NO_GPU).code).toBe(0);
    const fromStdin = join(dir, 'from-stdin.npy');
    const whole = piped(qBytes, fromStdin);
    expect(whole.status, String(whole.stderr)).toBe(0);
    expect(readFileSync(fromStdin)).toEqual(readFileSync(fromFile));
    const short = piped(qBytes.subarray(0, qBytes.length - 4), join(dir, 'short.npy'));
    expect(short.status).toBe(3);
    oneError(String(short.stderr), /Q - \(standard input\): the \.npy input ended after 188 bytes of values but shape \(1, 2, 3, 8\) of 'f32' needs 192; give the whole file/);
    const long = piped(Buffer.concat([qBytes, Buffer.alloc(4)]), join(dir, 'long.npy'));
    expect(long.status).toBe(3);
    oneError(String(long.stderr), /Q - \(standard input\): the \.npy stream goes on after/);
  });

  it('a header that announces more than one buffer takes is refused before reading (a sparse file)', () => {
    const huge = join(dir, 'huge.npy');
    const header = encodeNpy([1, 1, 1, 0], new Float32Array(0)).subarray(0, 128);
    // The same header length with a shape of 2^31 floats (8 GiB): patch the shape text, keeping the padding.
    const text = Buffer.from(header).toString('latin1').replace("'shape': (1, 1, 1, 0), ", "'shape': (1, 1, 2, 1073741824), ");
    const fd = openSync(huge, 'w');
    writeSync(fd, Buffer.from(text.slice(0, 128), 'latin1'));
    closeSync(fd);
    execFileSync('truncate', ['-s', String(128 + 8 * 2 ** 30), huge]);
    const run = cli(['sdpa', huge, K, V, join(dir, 'huge-out.npy')], NO_GPU);
    expect(run.code, run.stderr).toBe(3);
    oneError(run.stderr, /Q .*huge\.npy: the \.npy array of shape \(1, 1, 2, 1073741824\) holds 8589934592 bytes, more than one buffer takes here/);
  });
});

describe('destinations are checked before anything is read (11)', () => {
  it.each([
    ['OUTPUT', (missing: string) => [missing]],
    ['--lse', (missing: string) => [join(dir, `fine-${counter++}.npy`), '--lse', missing]],
  ])('%s in a missing folder: exit 4 while Q is a FIFO no one writes', async (_what, outputs) => {
    const run = startCli(['sdpa', fifo(), K, V, ...outputs(join(dir, 'no-such-folder', 'x.npy'))]);
    const ended = await endsWithin(run, 5_000);
    expect(ended?.code, run.stderr()).toBe(4);
    oneError(run.stderr(), /no-such-folder does not exist; create it first/);
  });
});

describe('numbers and lengths are usage errors in the command line\'s words (13, 14)', () => {
  const out = join(dir, 'never-usage.npy');
  it.each([
    [['--cache-lengths', '4,5'], /--cache-lengths 4,5 gives 2 lengths but Q has batch 1; give one per batch/],
    [['--cache-lengths', '6'], /--cache-lengths 6: 6 is more than the 5 rows of K and V \(Lk\); give lengths from 0 to 5/],
    [['--cache-lengths', ''], /--cache-lengths '' is not a list of integers ≥ 0/],
    [['--cache-lengths', '0x3'], /--cache-lengths 0x3 is not a list of integers ≥ 0/],
    [['--window', ','], /--window , is not LEFT,RIGHT/],
    [['--window', '1e300,0'], /--window 1e300,0 is not LEFT,RIGHT/],
    [['--window', '0x10,0'], /--window 0x10,0 is not LEFT,RIGHT/],
    [['--window', ' 2,0'], /--window {2}2,0 is not LEFT,RIGHT/],
    [['--scale', ''], /--scale '' is not a finite decimal number/],
    [['--scale', '0x10'], /--scale 0x10 is not a finite decimal number/],
    [['--scale', 'Infinity'], /--scale Infinity is not a finite decimal number/],
  ])('%j: exit 2, one line', (flags, message) => {
    const run = cli(['sdpa', Q, K, V, out, ...flags], NO_GPU);
    expect(run.code, run.stderr).toBe(2);
    oneError(run.stderr, message);
  });

  it('decimal forms still work: --scale 1e-1, --window -1,0, --cache-lengths 5', () => {
    const run = cli(['sdpa', Q, K, V, join(dir, 'decimal.npy'), '--scale', '1e-1', '--window', '-1,0', '--cache-lengths', '5', '-q'], NO_GPU);
    expect(run.code, run.stderr).toBe(0);
  });

  it('the shared parser is strict for the other commands too: --threads 0x2, --seed \'\'', () => {
    expect(cli(['--impl', 'cpu', '--threads', '0x2', Q, out], NO_GPU)).toMatchObject({ code: 2, stderr: expect.stringMatching(/--threads 0x2: expected a positive integer, written in decimal/) as unknown });
    expect(cli(['gen', '--shape', '1,2,3', '--seed', '', out])).toMatchObject({ code: 2, stderr: expect.stringMatching(/--seed '': expected/) as unknown });
  });
});

describe('standard output is written once (15)', () => {
  it.each([
    [['-', '--json'], /OUTPUT - and --json both write to standard output/],
    [['-', '--lse', '-'], /OUTPUT - and --lse - would both go to standard output/],
    [[join(dir, 'o-json.npy'), '--lse', '-', '--json'], /--lse - and --json both write to standard output/],
  ])('%j: exit 2, nothing on stdout', (args, message) => {
    const run = cli(['sdpa', Q, K, V, ...args], NO_GPU);
    expect(run.code, run.stderr).toBe(2);
    oneError(run.stderr, message);
    expect(run.stdout).toBe('');
  });
});

describe('messages in the command\'s words (16)', () => {
  const out = join(dir, 'never-messages.npy');
  it('float16 mixed with float32 is said in NumPy\'s words', () => {
    const q16 = file('q16.npy', encodeNpy([1, 2, 3, 8], new Uint16Array(48).fill(0x3c00)));
    const run = cli(['sdpa', q16, K, V, out], NO_GPU);
    expect(run.code).toBe(3);
    oneError(run.stderr, /^hw4-cli: error: Q is float16 but K is float32; save all three with the same dtype$/);
  });

  it('a deeply nested header is refused in one line, not with a stack overflow', () => {
    const text = `{'descr': '<f4', 'fortran_order': False, 'shape': ${'('.repeat(60_000)}}`;
    const bytes = Buffer.concat([Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, text.length & 0xff, text.length >> 8]), Buffer.from(text, 'latin1')]);
    const run = cli(['sdpa', file('deep.npy', bytes), K, V, out], NO_GPU);
    expect(run.code).toBe(3);
    oneError(run.stderr, /deep\.npy: the \.npy header is not a Python dict literal \(tuples or lists nested more than 32 deep/);
  });

  it('- for two inputs is refused: standard input holds one file', () => {
    const run = cli(['sdpa', '-', K, '-', out], NO_GPU);
    expect(run.code).toBe(2);
    oneError(run.stderr, /Q and V are both - \(standard input\), which holds one file; give at most one of them as -/);
  });

  it('a folder, a loop of links, a missing file: words and a fix, no bare error codes', () => {
    const loop = [join(dir, 'loop-a'), join(dir, 'loop-b')] as const;
    symlinkSync(loop[1], loop[0]);
    symlinkSync(loop[0], loop[1]);
    for (const [input, message] of [
      [dir, /K .*: is a folder; give the path of a \.npy file/],
      [loop[0], /K .*loop-a: is a loop of symbolic links .*; point the link at a file or remove it/],
      [join(dir, 'missing.npy'), /K .*missing\.npy: .*missing\.npy does not exist; check the path/],
    ] as const) {
      const run = cli(['sdpa', Q, input, V, out], NO_GPU);
      expect(run.code).toBe(4);
      oneError(run.stderr, message);
      expect(run.stderr).not.toMatch(/\bE[A-Z]{3,}\b|ERR_/);
    }
  });

  it('a child behind the stderr filter killed outright: exit 137 and a line saying so', async () => {
    const { run, waiter } = await waitingOnFifo([], { ...NO_GPU, FA_STDERR_FILTER: 'always', XDG_CACHE_HOME: join(dir, 'cache') });
    expect(waiter, 'a child process').not.toBe(run.process.pid);
    process.kill(waiter, 'SIGKILL');
    const ended = await endsWithin(run, 5_000);
    expect(ended?.code).toBe(137);
    oneError(run.stderr(), /^hw4-cli: error: the process running the command was killed by SIGKILL \(sent by a user, or by the system when memory runs out\)/);
  });
});

describe('options of another mode are refused (17)', () => {
  it.each([
    [['--list', Q, K, V, 'o.npy'], /sdpa --list takes no files \(got .*\); drop them, or drop --list/],
    [['--list', '--bench'], /--list and --bench are separate commands; give one of them/],
    [['--list', '--causal'], /--causal is an option of a run on files .*, not of sdpa --list; drop it/],
    [[Q, K, V, 'o.npy', '--dtype', 'f16'], /--dtype is an option of sdpa --conformance, not of a run on files/],
    [[Q, K, V, 'o.npy', '--cases', '1'], /--cases is an option of sdpa --bench, not of a run on files/],
    [['--bench', '--impl', 'cpu-fp32'], /--impl is an option of a run on files .* and sdpa --conformance, not of sdpa --bench/],
  ])('%j: exit 2, one line', (args, message) => {
    const run = cli(['sdpa', ...args], NO_GPU);
    expect(run.code, run.stderr).toBe(2);
    oneError(run.stderr, message);
  });
});

describe('FA_SDPA_TUNING that is not sizes is refused before any GPU work', () => {
  it.each([
    [['--bench', '--no-torch', '--cases', '9'], '{"bogus":1}'],
    [['--bench', '--no-torch', '--cases', '9'], 'matrixKeysPerTile=32'],
    [['--conformance'], '{"matrixKeysPerTile":1.5}'],
    [['--conformance'], '[16]'],
  ])('%j with %s: exit 2, one line', (args, tuning) => {
    // No GPU here: the refusal comes first, or the command would say it needs one.
    const run = cli(['sdpa', ...args], { ...NO_GPU, FA_SDPA_TUNING: tuning });
    expect(run.code, run.stderr).toBe(2);
    oneError(run.stderr, /^hw4-cli: error: FA_SDPA_TUNING is .*; give a JSON object of integers with keys keysPerTile, .*matrixKeysPerTile.*, or unset it$/);
  });
});

describe('FA_BENCH_ALLOCATIONS that is not a count is refused before any GPU work', () => {
  it.each(['0', '1.5', 'two', '101', '-3'])('%s: exit 2, one line', (count) => {
    const run = cli(['sdpa', '--bench', '--no-torch', '--cases', '9'], { ...NO_GPU, FA_BENCH_ALLOCATIONS: count });
    expect(run.code, run.stderr).toBe(2);
    oneError(run.stderr, /^hw4-cli: error: FA_BENCH_ALLOCATIONS is .*; give a whole number of buffer sets from 1 to 100, or unset it$/);
  });
});

describe('values on which float32 could overflow (Q and K of about 1e20)', () => {
  const big = (name: string, shape: number[], seed: number): string => file(name, encodeNpy(shape, Float32Array.from(values(shape.reduce((a, n) => a * n, 1), seed), (x) => x * 1e20)));
  const bigQ = big('big-q.npy', [1, 2, 3, 8], 4);
  const bigK = big('big-k.npy', [1, 2, 5, 8], 5);

  it('the default computes them in float64 and says so: exit 0, finite OUTPUT', () => {
    const out = join(dir, 'big-out.npy');
    const run = cli(['sdpa', bigQ, bigK, V, out], NO_GPU);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/note: .*could overflow.*computed in float64/);
    expect(run.stderr).toMatch(/computed by cpu-fp64/);
    const written = parseNpy(readFileSync(out)).data as Float32Array;
    expect(written.every((x) => Number.isFinite(x))).toBe(true);
  });

  it('--impl cpu-fp32 refuses them: exit 2, one line, nothing written', () => {
    const { out } = outputFolder();
    const run = cli(['sdpa', bigQ, bigK, V, out, '--impl', 'cpu-fp32'], NO_GPU);
    expect(run.code, run.stderr).toBe(2);
    oneError(run.stderr, /cpu-fp32 could overflow float32 on these values: .*; leave the implementation to the default choice/);
    expect(readFileSync(out, 'utf8')).toBe(OLD);
  });
});

describe('sdpa --help', () => {
  const help = cli(['sdpa', '--help']).stdout;

  it('names --scale in the usage line', () => {
    expect(help.slice(0, help.indexOf('\n\n'))).toMatch(/--scale S/);
    expect(cli(['--help']).stdout).toMatch(/hw4-cli sdpa .*--scale S/);
  });

  /**
   * One run per exit code sdpa --help lists, but 1 and 5: they need a GPU that fails (a GPU error, NaN from a kernel,
   * a kernel over its limit in sdpa --conformance), which no command line can bring about.
   */
  const SCENARIOS: Record<number, () => Promise<{ code: number | null; stderr: string }> | { code: number | null; stderr: string }> = {
    0: () => cli(['sdpa', Q, K, V, join(dir, 'ok.npy'), '-q'], NO_GPU),
    2: () => cli(['sdpa', Q, K, V, join(dir, 'x.npy'), '--window', '3'], NO_GPU),
    3: () => cli(['sdpa', Q, K, file('nan.npy', encodeNpy([1, 2, 5, 8], Float32Array.from(values(80, 3), (x, i) => (i === 5 ? Number.NaN : x)))), join(dir, 'nan-out.npy')], NO_GPU),
    4: () => cli(['sdpa', Q, K, V, Q], NO_GPU),
    129: () => signalled('SIGHUP'),
    130: () => signalled('SIGINT'),
    143: () => signalled('SIGTERM'),
  };

  async function signalled(signal: NodeJS.Signals): Promise<{ code: number | null; stderr: string }> {
    const { run } = await waitingOnFifo();
    run.process.kill(signal);
    const ended = await endsWithin(run, 5_000);
    return { code: ended?.code ?? null, stderr: run.stderr() };
  }

  const section = help.slice(help.indexOf('Exit codes'));
  const listed = [...section.matchAll(/(?:^|\s{2})(\d{1,3})\s{2,}/gm)].map((m) => Number(m[1]));

  it('lists 0 to 5 and the signals, and nothing else; 1 and 5 as failures of the GPU', () => {
    expect(listed).toEqual([0, 1, 2, 3, 4, 5, 129, 130, 143]);
    expect(section).toMatch(/^ {2}1 {4}compute or GPU failure: a GPU error/m);
    expect(section).toMatch(/^ {2}5 {4}sdpa --conformance found an error over its limit/m);
  });

  it.each(listed.filter((code) => code !== 1 && code !== 5))('exit %i: a run produces it, with one error line', async (code) => {
    const scenario = SCENARIOS[code];
    expect(scenario, `a scenario for ${code}`).toBeDefined();
    const result = await (scenario as () => Promise<{ code: number | null; stderr: string }>)();
    expect(result.code, result.stderr).toBe(code);
    if (code !== 0) expect(ownLines(result.stderr).filter((l) => l.startsWith('hw4-cli:')), result.stderr).toHaveLength(1);
  });
});
