/**
 * @fa/ladder/browser lists the same rungs in the same order as the main entry (ladder.ts's table), with the Node-only
 * `cpu` rung declining with its reason. (That it bundles for a browser is checked in browser-bundle.test.ts.)
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Rung } from '@fa/core';
import { LADDER } from '../src/index.js';

const builtBrowserEntry = fileURLToPath(new URL('../dist/browser.js', import.meta.url));

describe('@fa/ladder/browser', () => {
  it('lists the main ladder, with cpu declining in a browser', async () => {
    const browser = (await import(builtBrowserEntry)) as { LADDER: readonly Rung[] };
    expect(browser.LADDER.map((r) => `${r.index} ${r.id}`)).toEqual(LADDER.map((r) => `${r.index} ${r.id}`));
    const cpu = browser.LADDER.find((r) => r.id === 'cpu');
    expect(cpu?.supports({ B: 1, N: 1, d: 16 }, { threads: 1 })).toMatch(/worker threads/);
  });
});
