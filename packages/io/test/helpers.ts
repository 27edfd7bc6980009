import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** A fresh temporary folder, removed after the test file. */
export function tempFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fa-io-'));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}
