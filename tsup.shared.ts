import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Options } from 'tsup';

/** The one build recipe of every package: ESM for Node 20.19 and later (the oldest Node supported; 22 and 24 run it
 * as is), declarations, source maps, WGSL files as strings. */
export function packageBuild(entry: Record<string, string>, overrides: Options = {}): Options {
  return {
    entry,
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    dts: true,
    sourcemap: true,
    clean: true,
    splitting: false,
    loader: { '.wgsl': 'text' },
    ...overrides,
  };
}

/**
 * One entry per rung folder of a package (`src/NN-id/id.ts` → `dist/id.js`, the subpath export `./id`), for a build
 * with `splitting: true`: the index then only re-exports from one module per rung, so a bundler that imports one rung
 * (from the index, with `sideEffects: false`, or from its subpath) leaves the other rungs' kernels out.
 */
export function rungEntries(packageDir: string): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const folder of readdirSync(join(packageDir, 'src')).sort()) {
    const id = /^\d\d-([a-z0-9-]+)$/.exec(folder)?.[1];
    if (id === undefined) continue;
    const file = `src/${folder}/${id}.ts`;
    if (!existsSync(join(packageDir, file))) throw new Error(`rung folder ${folder} has no ${id}.ts`);
    entries[id] = file;
  }
  return entries;
}
