import { describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, cli, ownLines, tempFolder, testCacheHome } from './cli-helpers.js';

const dir = tempFolder();
const env = { ...process.env, FA_GPU: 'off', XDG_CACHE_HOME: testCacheHome() };
const input = join(dir, 'in.bin');
cli(['gen', '--shape', '2,256,64', '--seed', '3', input, '-q']);
const reference = join(dir, 'reference.out');
cli(['--impl', 'cpu', '-q', input, reference], env);

/** The commands that write standard output: generating an input (384 KiB) and running one (128 KiB of output). */
const writers = [
  ['gen', ['gen', '--shape', '2,256,64', '-q', '-']],
  ['run', ['--impl', 'cpu', '-q', input, '-']],
] as const;

/** Runs the CLI with standard output on the file `path` opened for writing; `shell` wraps the command (a limit). */
function toFile(args: readonly string[], path: string, shell?: string): { code: number | null; stderr: string } {
  const fd = openSync(path, 'w');
  try {
    const [command, argv] = shell === undefined ? [process.execPath, [CLI, ...args]] : ['bash', ['-c', `${shell}; exec "$0" "$@"`, process.execPath, CLI, ...args]];
    const result = spawnSync(command, argv, { env, stdio: ['ignore', fd, 'pipe'], encoding: 'utf8', timeout: 60_000 });
    return { code: result.status, stderr: result.stderr };
  } finally {
    closeSync(fd);
  }
}

/** One line of our own, with no Node stack trace or unhandled 'error' event. */
function expectOneLine(stderr: string, pattern: RegExp): void {
  expect(ownLines(stderr), stderr).toEqual([expect.stringMatching(pattern)]);
  expect(stderr).not.toMatch(/Unhandled|^\s+at /m);
}

describe('standard output that cannot take all the bytes', () => {
  it.each(writers)('%s: a short write (file size limit) is a failed write, exit 4, not a silent success', (name, args) => {
    const path = join(dir, `limited-${name}.bin`);
    // 64 KiB: the first write is cut short, the rest of it fails with EFBIG.
    const run = toFile(args, path, 'ulimit -f 64');
    expect(run.code, run.stderr).toBe(4);
    expectOneLine(run.stderr, /^hw4-cli: error: output standard output: the file would grow past the largest size allowed/);
    expect(statSync(path).size).toBe(64 * 1024);
  });

  it.skipIf(!existsSync('/dev/full'))(`gen and run to a full device (/dev/full): exit 4 with one line${existsSync('/dev/full') ? '' : ' (skipped: no /dev/full here)'}`, () => {
    for (const [name, args] of writers) {
      const run = toFile(args, '/dev/full');
      expect(run.code, `${name}: ${run.stderr}`).toBe(4);
      expectOneLine(run.stderr, /^hw4-cli: error: output standard output: no space left on the device$/);
    }
  });

  it.skipIf(!existsSync('/dev/full'))(`a usage error or a --json report on a full standard output: its own exit code (2) or 4, one line${existsSync('/dev/full') ? '' : ' (skipped: no /dev/full here)'}`, () => {
    const usage = toFile(['--bogus'], '/dev/full');
    expect(usage.code, usage.stderr).toBe(2);
    expectOneLine(usage.stderr, /^hw4-cli: error: Unknown option '--bogus'/);
    const report = toFile(['--list', '--json'], '/dev/full');
    expect(report.code, report.stderr).toBe(4);
    expectOneLine(report.stderr, /^hw4-cli: error: standard output: ENOSPC.*; the report was not written$/);
  });

  it('a pipe whose reader closes early: exit 4 with one line', async () => {
    // 12 MiB, far more than the pipe holds: the writer is still writing when the reader goes.
    const run = spawn(process.execPath, [CLI, 'gen', '--shape', '16,1024,64', '-q', '-'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    run.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    run.stdout.once('data', () => run.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => run.on('close', resolve));
    expect(code, stderr).toBe(4);
    expectOneLine(stderr, /^hw4-cli: error: output standard output: the reader closed the pipe before all the data was written$/);
  });

  it.each(writers)('%s: standard output that takes everything still gets every byte', (name, args) => {
    const path = join(dir, `whole-${name}.bin`);
    const run = toFile(args, path);
    expect(run.code, run.stderr).toBe(0);
    expect(statSync(path).size).toBe(name === 'gen' ? 12 + 2 * 3 * 256 * 64 * 4 : 2 * 256 * 64 * 4);
    if (name === 'run') expect(readFileSync(path)).toEqual(readFileSync(reference));
  });
});

describe('gen --shape beyond what the header holds', () => {
  it.each(['2147483648,1,1', '4294967297,1,1', '1,1,2147483648'])('--shape %s: exit 2, one line naming the limit, nothing written', (shape) => {
    const out = join(dir, 'huge.bin');
    // Under a 1 MiB file size limit, so a shape taken by mistake cannot fill the disk with its 25 GB or more.
    const run = toFile(['gen', '--shape', shape, out], join(dir, 'huge.stdout'), 'ulimit -f 1024');
    expect(run.code).toBe(2);
    expectOneLine(run.stderr, /^hw4-cli: error: shape ".*": [BNd] = \d+ does not fit the header's int32; give B, N and d of at most 2147483647$/);
    expect(existsSync(out)).toBe(false);
  });
});
