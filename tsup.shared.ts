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
