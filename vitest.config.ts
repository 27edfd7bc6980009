import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { defineConfig, type Plugin } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** `import code from './kernel.wgsl'` gives the file's text, as the tsup build does with its text loader. */
const wgslAsText: Plugin = {
  name: 'wgsl-as-text',
  load(id) {
    return id.endsWith('.wgsl') ? `export default ${JSON.stringify(readFileSync(id, 'utf8'))};` : null;
  },
};

const project = (name: string, dir: string, extra: { maxWorkers?: number; sequence?: { groupOrder: number } } = {}) => ({
  plugins: [wgslAsText],
  resolve: { conditions: ['source', 'import', 'node', 'default'] },
  ssr: { resolve: { conditions: ['source', 'import', 'node', 'default'] } },
  test: { name, root: dir, include: ['test/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000, ...extra },
});

/**
 * The GPU test files (the ladder's conformance suite in two files, encoded, ...; the rungs' own in @fa/optimized and
 * @fa/tensor: row-split, tensor) run after the other projects, two files at a time even on two cores: most of their
 * time is the software GPU compiling pipelines, one core per device, and their wait for it costs no CPU
 * (packages/ladder/test/gpu-env.ts). docs/ci.md has the times.
 */
const GPU_FILES_AT_ONCE = 2;

/** The projects whose test files run as GPU files (see above): one group, after the others. */
const GPU_PROJECT = { maxWorkers: Math.max(GPU_FILES_AT_ONCE, availableParallelism() - 1), sequence: { groupOrder: 1 } };

/** The files of the conformance suite, the longest of the GPU files. */
const CONFORMANCE_FILE = /[\\/]conformance[^\\/]*\.test\.ts$/;

/**
 * Vitest's order (failed, then longest in the last run; on a fresh clone, which has no last run, the largest files
 * first), with the conformance files at the head of their group: started last, one of them would run alone at the end.
 */
class ConformanceFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification): number => spec.project.config.sequence.groupOrder * 2 + (CONFORMANCE_FILE.test(spec.moduleId) ? 0 : 1);
    return sorted.map((spec, k) => ({ spec, k })).sort((a, b) => rank(a.spec) - rank(b.spec) || a.k - b.k).map(({ spec }) => spec);
  }
}

export default defineConfig({
  test: {
    pool: 'forks',
    sequence: { sequencer: ConformanceFirst },
    reporters: ['default', './scripts/summary-reporter.mjs'],
    projects: [
      project('@fa/io', 'packages/io'),
      project('@fa/core', 'packages/core'),
      project('@fa/reference', 'packages/reference'),
      project('@fa/naive', 'packages/naive'),
      project('@fa/fused', 'packages/fused'),
      project('@fa/optimized', 'packages/optimized', GPU_PROJECT),
      project('@fa/tensor', 'packages/tensor', GPU_PROJECT),
      project('@fa/ladder', 'packages/ladder', GPU_PROJECT),
      project('@fa/sdpa', 'packages/sdpa'),
      project('hw4-cli', 'apps/hw4-cli'),
      project('@fa/web', 'apps/web'),
      project('@fa/experiments', 'experiments'),
    ],
  },
});
