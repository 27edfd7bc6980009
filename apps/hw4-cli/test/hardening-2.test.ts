import { describe, expect, it } from 'vitest';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isNativeLine } from '../src/stderr-filter.js';
import { CLI, cli, ownLines, tempFolder, temporaries } from './cli-helpers.js';

const dir = tempFolder();
const cpuOnly = { FA_GPU: 'off' };
const input = join(dir, 'in.bin');
cli(['gen', '--shape', '2,40,16', '--seed', '3', input, '-q']);
// One batch that takes seq-attention many seconds (11 s on a quiet 2-core machine).
const oneLongBatch = join(dir, 'long-batch.bin');
cli(['gen', '--shape', '1,8192,32', '--seed', '1', oneLongBatch, '-q']);
const OLD = 'OLD';

let counter = 0;
/** A fresh folder inside the test's folder. */
function freshFolder(): string {
  const folder = join(dir, `folder-${counter++}`);
  mkdirSync(folder);
  return folder;
}

/** A fresh folder with OUTPUT (out.bin) holding OLD. */
function outputFolder(): { folder: string; out: string } {
  const folder = freshFolder();
  const out = join(folder, 'out.bin');
  writeFileSync(out, OLD);
  return { folder, out };
}

/** Resolves when `condition` holds (polled), or with false after `ms`. */
async function waitFor(condition: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) return false;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return true;
}

/** Whether process `pid` still runs (a zombie, ended but not yet reaped, does not). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

interface Started {
  process: ChildProcess;
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
}

function start(command: string, args: string[], env: Record<string, string>, cwd?: string): Started {
  const child = spawn(command, args, { env: { ...process.env, ...env }, ...(cwd ? { cwd } : {}) });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => { resolve({ code, signal }); }));
  return { process: child, closed, stderr: () => stderr };
}

const startCli = (args: string[], env: Record<string, string> = {}): Started => start(process.execPath, [CLI, ...args], env);

/** The id of the process writing OUTPUT's temporary file in `folder` (its name carries it), once the file is there. */
async function writerPid(folder: string): Promise<number> {
  expect(await waitFor(() => temporaries(folder).length === 1, 30_000), 'temporary file created').toBe(true);
  return Number(/\.(\d+)\.[0-9a-f]{8}\.tmp$/.exec(temporaries(folder)[0] ?? '')?.[1]);
}

/** Whether a thread of process `pid` waits in open() for a FIFO's other end (true as well where /proc cannot tell). */
function waitsForFifoPartner(pid: number): boolean {
  try {
    return readdirSync(`/proc/${pid}/task`).some((task) => readFileSync(`/proc/${pid}/task/${task}/wchan`, 'utf8') === 'wait_for_partner');
  } catch {
    return true;
  }
}

/** Resolves with how the run ended, or undefined if it has not within `ms` (then it is killed). */
async function endsWithin(run: Started, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null } | undefined> {
  const timeout = new Promise<undefined>((resolve) => setTimeout(() => { resolve(undefined); }, ms));
  const ended = await Promise.race([run.closed, timeout]);
  if (ended === undefined) run.process.kill('SIGKILL');
  return ended;
}

describe('a run does not outlive what waits for it (defects 1, 2)', () => {
  it('the child behind the stderr filter stops when its launcher is killed outright, and OUTPUT stays as it was', async () => {
    const { folder, out } = outputFolder();
    const cache = freshFolder();
    const launcher = startCli(['--impl', 'seq-attention', oneLongBatch, out], { ...cpuOnly, FA_STDERR_FILTER: 'always', XDG_CACHE_HOME: cache });
    const child = await writerPid(folder);
    expect(child, 'OUTPUT written by a child process').not.toBe(launcher.process.pid);
    launcher.process.kill('SIGKILL');
    expect((await launcher.closed).signal).toBe('SIGKILL');
    expect(await waitFor(() => !running(child), 5_000), 'child still running').toBe(true);
    expect(readFileSync(out, 'utf8')).toBe(OLD);
    expect(temporaries(folder)).toEqual([]);
  });

  const repository = fileURLToPath(new URL('../../../', import.meta.url));
  const npx = spawnSync('npx', ['--version'], { encoding: 'utf8' }).status === 0 && existsSync(join(repository, 'node_modules/.bin/hw4-cli'));

  it.skipIf(!npx)(`npx hw4-cli stops when npx is terminated (npm passes SIGTERM to its shell only), and OUTPUT stays as it was${npx ? '' : ' (skipped: no npx, or hw4-cli not linked in node_modules/.bin)'}`, async () => {
    const { folder, out } = outputFolder();
    const run = start('npx', ['--no-install', 'hw4-cli', '--impl', 'seq-attention', oneLongBatch, out], cpuOnly, repository);
    const writer = await writerPid(folder);
    run.process.kill('SIGTERM');
    const ended = await run.closed;
    expect(String(ended.signal ?? ended.code)).toMatch(/SIGTERM|143/);
    expect(await waitFor(() => !running(writer), 5_000), 'hw4-cli still running').toBe(true);
    expect(readFileSync(out, 'utf8')).toBe(OLD);
    expect(temporaries(folder)).toEqual([]);
  });
});

describe('signals end a CPU rung within its batch (defect 3)', () => {
  it.each(['seq-attention', 'seq-flash'])('%s: SIGINT a second into a batch of many seconds exits 130 at once, OUTPUT untouched', async (impl) => {
    const { folder, out } = outputFolder();
    const run = startCli(['--impl', impl, oneLongBatch, out], cpuOnly);
    await writerPid(folder);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const signalled = Date.now();
    run.process.kill('SIGINT');
    const ended = await endsWithin(run, 10_000);
    expect(ended?.code, run.stderr()).toBe(130);
    expect(Date.now() - signalled).toBeLessThan(3_000);
    expect(readFileSync(out, 'utf8')).toBe(OLD);
    expect(temporaries(folder)).toEqual([]);
  });
});

describe('a signal ends a run waiting on a FIFO with no other end (defect 4)', () => {
  it.each([
    ['INPUT with no writer', 'SIGINT', 130],
    ['OUTPUT with no reader', 'SIGTERM', 143],
  ] as const)('a FIFO as %s, then %s: exit %i', async (what, signal, code) => {
    const fifo = join(dir, `fifo-${counter++}`);
    execFileSync('mkfifo', [fifo]);
    const args = what.startsWith('INPUT') ? [fifo, join(dir, `fifo-out-${counter++}.bin`)] : [input, fifo];
    const run = startCli(['--impl', 'cpu', ...args], cpuOnly);
    const pid = run.process.pid ?? 0;
    expect(await waitFor(() => waitsForFifoPartner(pid), 10_000), 'waiting in open()').toBe(true);
    run.process.kill(signal);
    const ended = await endsWithin(run, 5_000);
    expect(ended?.code, run.stderr()).toBe(code);
    expect(ownLines(run.stderr())).toEqual([expect.stringMatching(new RegExp(`\\(${signal}\\); no output was written`))]);
  });
});

describe('the launcher reads the command line as main does (defect 5)', () => {
  const records = (cache: string): string[] => (existsSync(join(cache, 'hw4-cli')) ? readdirSync(join(cache, 'hw4-cli')) : []);

  it.each([
    ['-qi seq-flash', ['-qi', 'seq-flash']],
    ['-iseq-attention', ['-iseq-attention', '-q']],
    ['--impl=cpu', ['--impl=cpu', '-q']],
  ])('%s runs the CPU rung in one process and records nothing about Dawn', (_what, flags) => {
    const cache = freshFolder();
    const run = cli([...flags, input, join(dir, `cpu-${counter++}.out`)], { XDG_CACHE_HOME: cache });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    expect(records(cache)).toEqual([]);
  });

  it('a filtered run that did not load Dawn records nothing (FA_STDERR_FILTER=always)', () => {
    const cache = freshFolder();
    const run = cli(['--impl', 'seq-flash', '-q', input, join(dir, `filtered-${counter++}.out`)], { XDG_CACHE_HOME: cache, FA_STDERR_FILTER: 'always' });
    expect(run.code, run.stderr).toBe(0);
    expect(records(cache)).toEqual([]);
  });

  it('ladder and bench with CPU rungs only do not start the GPU, so Dawn prints nothing', () => {
    const cache = freshFolder();
    const ladder = cli(['ladder', '--impl', 'cpu', '--shape', '1,16,8'], { XDG_CACHE_HOME: cache });
    expect(ladder.code, ladder.stderr).toBe(0);
    const bench = cli(['bench', '--impl', 'cpu', '--shapes', '1,16,8', '--repeats', '1', '--no-torch', '--out', freshFolder()], { XDG_CACHE_HOME: cache });
    expect(bench.code, bench.stderr).toBe(0);
    for (const run of [ladder, bench]) expect(run.stderr.split('\n').filter(isNativeLine)).toEqual([]);
    expect(ladder.stderr).not.toMatch(/GPU: none/);
    expect(records(cache)).toEqual([]);
  });
});

describe('file-system errors are exit 4 (defects 6 to 8)', () => {
  it('check with a folder as OUTPUT', () => {
    const run = cli(['check', input, dir]);
    expect(run.code).toBe(4);
    expect(ownLines(run.stderr)).toEqual([expect.stringMatching(/OUTPUT .*: is a folder; give the path of an hw4 output file/)]);
  });

  it('a legal 250-character OUTPUT name is written', () => {
    const out = join(dir, 'x'.repeat(250));
    const run = cli(['--impl', 'cpu', '-q', input, out], cpuOnly);
    expect(run.code, run.stderr).toBe(0);
    expect(cli(['check', '-q', input, out]).code).toBe(0);
  });

  it('an OUTPUT in a loop of symbolic links is reported as such', () => {
    const [a, b] = [join(dir, 'loopA'), join(dir, 'loopB')];
    symlinkSync(b, a);
    symlinkSync(a, b);
    const run = cli(['--impl', 'cpu', input, a], cpuOnly);
    expect(run.code).toBe(4);
    expect(ownLines(run.stderr)).toEqual([expect.stringMatching(/output .*loopA: is a loop of symbolic links .*; point the link at a file or remove it/)]);
  });
});
