import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

export const CLI = fileURLToPath(new URL('../bin/hw4-cli.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

let cacheHome: string | undefined;

/** A cache folder of the tests' own, so runs never read or write hw4-cli's cache in the home folder. */
export function testCacheHome(): string {
  if (cacheHome === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'fa-cli-cache-'));
    afterAll(() => {
      rmSync(dir, { recursive: true, force: true });
    });
    cacheHome = dir;
  }
  return cacheHome;
}

/** Runs the built CLI (the test script builds first). */
export function cli(args: string[], env: Record<string, string> = {}): CliResult {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    env: { ...process.env, XDG_CACHE_HOME: testCacheHome(), ...env },
    timeout: 300_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

export function tempFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fa-cli-'));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** stderr without the two warnings Dawn prints on the software GPU. */
export function ownLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => l.length > 0 && !l.startsWith('Warning: maxDynamic'));
}

/** The writer's temporary files in `folder`. */
export function temporaries(folder: string): string[] {
  return readdirSync(folder).filter((f) => f.endsWith('.tmp'));
}

/**
 * Starts `hw4-cli --impl seq-attention INPUT folder/out.bin` on the CPU (slow enough to be caught), sends `signal`
 * the moment its temporary output file appears (watched, not polled: the signal then often lands while the file's
 * creation is still being reported back to the program, the hardest moment to clean up after); resolves with the
 * exit code and stderr.
 */
export async function interrupt(input: string, signal: NodeJS.Signals, folder: string): Promise<{ code: number | null; stderr: string }> {
  let watcher: ReturnType<typeof watch> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const created = new Promise<void>((resolve) => {
    watcher = watch(folder, () => { resolve(); });
    timer = setTimeout(resolve, 10_000);
  });
  const run = spawn(process.execPath, [CLI, '--impl', 'seq-attention', input, join(folder, 'out.bin')], { env: { ...process.env, FA_GPU: 'off' } });
  let stderr = '';
  run.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const closed = new Promise<number | null>((resolve) => run.on('close', resolve));
  await created;
  watcher?.close();
  clearTimeout(timer);
  run.kill(signal);
  return { code: await closed, stderr };
}
