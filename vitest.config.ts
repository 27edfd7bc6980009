import { defineConfig } from 'vitest/config';

const project = (name: string, dir: string) => ({
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
      project('@fa/ladder', 'packages/ladder'),
      project('hw4-cli', 'apps/hw4-cli'),
    ],
  },
});
