/**
 * The H100 reference the page shows beside the reader's own numbers: `hw4-cli bench` on an NVIDIA H100 (docs/bench),
 * cut down by the build (vite.config.ts, `virtual:bench-reference`) to each bench shape's steady-state kernel time and
 * GFLOP/s per rung. For the reader's shape the page takes the bench shape nearest to it.
 */
import type { Shape } from '@fa/io';

export interface BenchReference {
  /** The adapter as hw4-cli names it, and the host's CPU (where the CPU rungs ran). */
  adapter: string;
  cpu: string;
  date: string;
  /** The result file in the repository. */
  source: string;
  shapes: { shape: Shape; rungs: Record<string, { ms: number; gflops: number }> }[];
}

/** The bench shape nearest to `shape`: the same head size or the nearest, then the nearest N, then the nearest work. */
export function nearestBenchShape(reference: BenchReference, shape: Shape): BenchReference['shapes'][number] | undefined {
  const distance = (a: number, b: number): number => Math.abs(Math.log2(a / b));
  const work = (s: Shape): number => s.B * s.N * s.N * s.d;
  const key = (s: Shape): number[] => [distance(s.d, shape.d), distance(s.N, shape.N), distance(work(s), work(shape))];
  const before = (a: number[], b: number[]): boolean => {
    const k = a.findIndex((x, i) => x !== b[i]);
    return k !== -1 && (a[k] as number) < (b[k] as number);
  };
  let best: BenchReference['shapes'][number] | undefined;
  for (const entry of reference.shapes) if (best === undefined || before(key(entry.shape), key(best.shape))) best = entry;
  return best;
}
