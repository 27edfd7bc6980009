import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Writable } from 'node:stream';
import { configDefaults, defineConfig, type Plugin } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** `import code from './kernel.wgsl'` gives the file's text, as the tsup build does with its text loader. */
const wgslAsText: Plugin = {
  name: 'wgsl-as-text',
  load(id) {
    return id.endsWith('.wgsl') ? `export default ${JSON.stringify(readFileSync(id, 'utf8'))};` : null;
  },
};

/**
 * Dawn (the webgpu package) writes its own messages from C++ straight to the test process's standard error: on the
 * software GPU, "Warning: maxDynamic… artificially reduced …" once per process (@fa/core/node makes one Dawn instance
 * per process); without a Vulkan driver, "Warning: Couldn't load Vulkan" and the source line. Dawn has no setting to
 * silence them and a test process cannot redirect its descriptor 2 (a socket to Vitest), so Vitest's side drops those
 * lines from what the test processes print, as hw4-cli's stderr filter does for the CLI
 * (apps/hw4-cli/src/stderr-filter.ts). FA_DEBUG=1 shows them.
 */
const DAWN_LINE = /^(Warning|Info): |^\s+at .*\.(cpp|cc|h|mm):\d+\)?$|^(ERROR|WARNING|INFO): \[Loader Message\]/;

const filtered = new WeakSet<object>();

/** Whether `text`, the start of a line, may be the start of one of Dawn's. */
const mayBeDawn = (text: string): boolean =>
  /^\s/.test(text) || ['Warning: ', 'Info: ', 'ERROR: ', 'WARNING: ', 'INFO: '].some((p) => p.startsWith(text) || text.startsWith(p));

/**
 * `stream` with Dawn's lines (and the empty line that ends some of them) left out. A line is held back until it ends
 * only while it may be one of Dawn's.
 */
function withoutDawnLines(stream: Writable): Writable {
  let pending = '';
  /** Part of the current line was passed on: the rest of it passes too. */
  let passing = false;
  let afterDawn = false;
  const keep = (line: string): boolean => {
    const drop = DAWN_LINE.test(line) || (afterDawn && line === '');
    afterDawn = drop;
    return !drop;
  };
  const write = (chunk: unknown, encoding?: unknown, callback?: unknown): boolean => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
    let out = '';
    let rest = pending + text;
    if (passing) {
      const end = rest.indexOf('\n');
      out += end < 0 ? rest : rest.slice(0, end + 1);
      rest = end < 0 ? '' : rest.slice(end + 1);
      passing = end < 0;
    }
    const lines = rest.split('\n');
    pending = lines.pop() ?? '';
    const kept = lines.filter(keep);
    if (kept.length > 0) out += `${kept.join('\n')}\n`;
    if (pending !== '' && !mayBeDawn(pending)) {
      out += pending;
      pending = '';
      passing = true;
    }
    const done = typeof encoding === 'function' ? encoding : callback;
    return stream.write(out, done as () => void);
  };
  // A test process's stderr is piped in here, and pipe() ends its destination when the source ends (unless that is
  // process.stderr itself): the stream goes on, only what was held back is written.
  const end = (...args: unknown[]): Writable => {
    const done = args.find((a) => typeof a === 'function') as (() => void) | undefined;
    const last = pending;
    pending = '';
    passing = false;
    stream.write(last === '' || !keep(last) ? '' : last, done);
    return stream;
  };
  return new Proxy(stream, {
    get(target, property) {
      if (property === 'write') return write;
      if (property === 'end') return end;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

const dawnLinesDropped: Plugin = {
  name: 'dawn-lines-dropped',
  configureVitest({ vitest }) {
    if (process.env.FA_DEBUG === '1' || filtered.has(vitest.logger)) return;
    filtered.add(vitest.logger);
    vitest.logger.errorStream = withoutDawnLines(vitest.logger.errorStream);
  },
};

/**
 * Two tiers of tests, by file name:
 * - `*.test.ts` in a package's `test/` folder: its own project (named after the package), run by `npm test`, which
 *   must finish in 5 minutes on a 2-core machine with the software GPU's shader cache empty (docs/ci.md has the
 *   budget). Every rung and kernel family runs there at least once, on a small shape.
 * - `*.conformance.test.ts` anywhere: the project `conformance`, run by `npm run test:conformance`: the exhaustive
 *   sweeps (every rung on every awkward case and head size, every rung through the CLI, cold), which CI runs with
 *   Dawn's bounds checks on.
 * `npx vitest run` runs both; `--project NAME` one project.
 */
const CONFORMANCE_TIER = '**/*.conformance.test.ts';

/**
 * Test files at once: at least two, even on two cores. Most of the long files' time is a process other than the test
 * process working, on one core (the software GPU compiling a pipeline, a CLI run, a browser), while the test process
 * waits without using a core: Dawn's polling waits a millisecond between turns in the projects with GPU setup
 * (packages/ladder/test/gpu-setup.ts).
 */
const FILES_AT_ONCE = Math.max(2, availableParallelism() - 1);

/** Run before each test file of the projects whose tests create Dawn devices or start CLI runs on the GPU. */
const GPU_SETUP = [fileURLToPath(new URL('packages/ladder/test/gpu-setup.ts', import.meta.url))];

interface ProjectOptions {
  /** Its tests create Dawn devices or run GPU rungs through the CLI: GPU_SETUP before each file. */
  gpu?: boolean;
  exclude?: string[];
  /** Milliseconds a test or hook may take (default two minutes). */
  timeout?: number;
}

const project = (name: string, dir: string, include: string[], { gpu = false, exclude, timeout = 120_000 }: ProjectOptions = {}) => ({
  plugins: [wgslAsText, dawnLinesDropped],
  resolve: { conditions: ['source', 'import', 'node', 'default'] },
  ssr: { resolve: { conditions: ['source', 'import', 'node', 'default'] } },
  test: { name, root: dir, include, exclude, setupFiles: gpu ? GPU_SETUP : [], testTimeout: timeout, hookTimeout: timeout },
});

/** A package's project: its `test/**\/*.test.ts`, without the conformance tier's files. */
const pkg = (name: string, dir: string, options: ProjectOptions = {}) =>
  project(name, dir, ['test/**/*.test.ts'], { exclude: [...configDefaults.exclude, CONFORMANCE_TIER], ...options });

/** The files of the conformance suite (conformance-smoke.test.ts, *.conformance.test.ts), the longest GPU files. */
const CONFORMANCE_FILE = /conformance[^\\/]*\.test\.ts$/;

/** Files that start the GPU in their own process or a browser: on the software GPU, the long ones. */
const GPU_FILE = /acquireNodeGpu|conformanceEnv|deviceForGroup|deviceOfItsOwn|nodeGpu\(|puppeteer/;

/**
 * Vitest's order (failed, then longest in the last run; on a fresh clone, which has no last run, the largest files
 * first), with the conformance files first and the other GPU and browser files next: a long file started last would
 * run alone at the end.
 */
class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification): number => {
      if (CONFORMANCE_FILE.test(spec.moduleId)) return 0;
      try {
        return GPU_FILE.test(readFileSync(spec.moduleId, 'utf8')) ? 1 : 2;
      } catch {
        return 2;
      }
    };
    const ranks = new Map(sorted.map((spec) => [spec, rank(spec)]));
    return sorted.map((spec, k) => ({ spec, k })).sort((a, b) => (ranks.get(a.spec) ?? 2) - (ranks.get(b.spec) ?? 2) || a.k - b.k).map(({ spec }) => spec);
  }
}

export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: FILES_AT_ONCE,
    sequence: { sequencer: LongFilesFirst },
    reporters: ['default', './scripts/summary-reporter.mjs'],
    projects: [
      pkg('@fa/io', 'packages/io'),
      pkg('@fa/core', 'packages/core', { gpu: true }),
      pkg('@fa/reference', 'packages/reference'),
      pkg('@fa/naive', 'packages/naive'),
      pkg('@fa/fused', 'packages/fused'),
      pkg('@fa/optimized', 'packages/optimized', { gpu: true }),
      pkg('@fa/tensor', 'packages/tensor', { gpu: true }),
      pkg('@fa/ladder', 'packages/ladder', { gpu: true }),
      pkg('@fa/sdpa', 'packages/sdpa', { gpu: true }),
      pkg('hw4-cli', 'apps/hw4-cli', { gpu: true }),
      pkg('@fa/web', 'apps/web'),
      pkg('@fa/experiments', 'experiments'),
      // A cold compile with Dawn's bounds checks on takes minutes for the largest kernels on the software GPU.
      project('conformance', '.', [`{packages,apps}/*/test/${CONFORMANCE_TIER}`, `experiments/test/${CONFORMANCE_TIER}`], {
        gpu: true,
        exclude: [...configDefaults.exclude],
        timeout: 600_000,
      }),
    ],
  },
});
