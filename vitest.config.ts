import { readFileSync } from 'node:fs';
import { defineConfig, type Plugin } from 'vitest/config';

/** `import code from './kernel.wgsl'` gives the file's text, as the tsup build does with its text loader. */
const wgslAsText: Plugin = {
  name: 'wgsl-as-text',
  load(id) {
    return id.endsWith('.wgsl') ? `export default ${JSON.stringify(readFileSync(id, 'utf8'))};` : null;
  },
};

const project = (name: string, dir: string) => ({
  plugins: [wgslAsText],
  resolve: { conditions: ['source', 'import', 'node', 'default'] },
  ssr: { resolve: { conditions: ['source', 'import', 'node', 'default'] } },
  test: { name, root: dir, include: ['test/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000 },
});

export default defineConfig({
  test: {
    pool: 'forks',
    reporters: ['default', './scripts/summary-reporter.mjs'],
    projects: [
      project('@fa/io', 'packages/io'),
      project('@fa/core', 'packages/core'),
      project('@fa/reference', 'packages/reference'),
      project('@fa/naive', 'packages/naive'),
      project('@fa/fused', 'packages/fused'),
      project('@fa/ladder', 'packages/ladder'),
      project('@fa/sdpa', 'packages/sdpa'),
      project('hw4-cli', 'apps/hw4-cli'),
      project('@fa/web', 'apps/web'),
    ],
  },
});
