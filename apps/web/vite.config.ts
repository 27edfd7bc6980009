/**
 * The teaching page builds to static files with relative paths (`base: './'`): dist/ works from any folder or static
 * server, offline. Rung packages resolve to their built dist files, as any consumer's bundler sees them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import type { BenchReference } from './src/bench-reference.js';

/** The parts of an `hw4-cli bench` result file (docs/bench/*.json) the page shows. */
interface BenchFile {
  date: string;
  adapter: string;
  cpu: string;
  shapes: {
    shape: { B: number; N: number; d: number };
    cells: { id: string; ran: boolean; ms?: number; tflops?: number; timing?: string }[];
  }[];
}

const BENCH_DIR = fileURLToPath(new URL('../../docs/bench/', import.meta.url));
const REFERENCE = 'virtual:bench-reference';

/**
 * `virtual:bench-reference`: the H100 measurements of docs/bench (hw4-cli bench's result file), cut down at build time
 * to each shape's time and GFLOP/s per rung, so the page shows them beside the reader's own without shipping the file.
 */
function benchReference(): Plugin {
  return {
    name: 'bench-reference',
    resolveId: (source) => (source === REFERENCE ? `\0${REFERENCE}` : undefined),
    load(id) {
      if (id !== `\0${REFERENCE}`) return undefined;
      const file = readdirSync(BENCH_DIR).find((name) => /h100.*\.json$/i.test(name));
      if (file === undefined) throw new Error(`no H100 bench result (*h100*.json) in ${BENCH_DIR}`);
      this.addWatchFile(join(BENCH_DIR, file));
      const bench = JSON.parse(readFileSync(join(BENCH_DIR, file), 'utf8')) as BenchFile;
      const reference: BenchReference = {
        adapter: bench.adapter,
        cpu: bench.cpu,
        date: bench.date,
        source: `docs/bench/${file}`,
        shapes: bench.shapes.map(({ shape, cells }) => ({
          shape,
          rungs: Object.fromEntries(
            cells.filter((c) => c.ran && c.ms !== undefined && c.tflops !== undefined).map((c) => [c.id, { ms: c.ms ?? 0, gflops: (c.tflops ?? 0) * 1000 }]),
          ),
        })),
      };
      return `export default ${JSON.stringify(reference)};`;
    },
  };
}

export default defineConfig({
  base: './',
  plugins: [benchReference()],
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', chunkSizeWarningLimit: 2048 },
  worker: { format: 'es' },
});
