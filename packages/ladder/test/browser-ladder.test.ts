/**
 * @fa/ladder/browser: the built browser entry bundles for a browser with no Node built-in, and lists the same rungs in
 * the same order as the main entry (ladder.ts's table), with the Node-only `cpu` rung declining with its reason.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import type { Rung } from '@fa/core';
import { LADDER } from '../src/index.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const builtBrowserEntry = fileURLToPath(new URL('../dist/browser.js', import.meta.url));

describe('@fa/ladder/browser', () => {
  it('bundles for a browser with no Node built-in', async () => {
    const result = await build({
      stdin: { contents: `export { LADDER, conformanceVerdict } from '@fa/ladder/browser';`, resolveDir: here, loader: 'ts' },
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    expect(result.errors).toEqual([]);
    expect(Object.keys(result.metafile.inputs).filter((path) => path.startsWith('node:') || path.includes('packages/reference/dist/node'))).toEqual([]);
  });

  it('lists the main ladder, with cpu declining in a browser', async () => {
    const browser = (await import(builtBrowserEntry)) as { LADDER: readonly Rung[] };
    expect(browser.LADDER.map((r) => `${r.index} ${r.id}`)).toEqual(LADDER.map((r) => `${r.index} ${r.id}`));
    const cpu = browser.LADDER.find((r) => r.id === 'cpu');
    expect(cpu?.supports({ B: 1, N: 1, d: 16 }, { threads: 1 })).toMatch(/worker threads/);
  });
});
