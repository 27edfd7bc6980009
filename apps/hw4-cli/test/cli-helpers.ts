import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
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

/** Runs the built CLI (the test script builds first). */
export function cli(args: string[], env: Record<string, string> = {}): CliResult {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
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
