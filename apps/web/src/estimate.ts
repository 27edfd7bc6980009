/**
 * How long a run will take, before it starts: each rung's time from its work (4·B·N²·d flops) and a rough rate, plus
 * the checking (the float64 oracle, and the plain float32 or f16 computation the verdict compares with). Rates: the
 * CPU rungs and the oracle as measured in a browser's worker; GPU rungs on a software adapter at a software adapter's
 * rate plus the shader compilation it does on the first run; on a real GPU, a tenth of the H100 rate of the same rung
 * at the nearest bench shape. Rough by nature (within a few times either way): the page says so, and `Estimator`
 * rescales what is left by what the finished rungs took.
 */
import type { RunEnv, Rung } from '@fa/core';
import { attentionFlops, type Shape } from '@fa/io';
import { nearestBenchShape, type BenchReference } from './bench-reference.js';

// Measured on the CI machine (2 shared cores) in headless Chromium 156 and Firefox ESR 153: seq-attention 0.64 and
// seq-flash 0.48 GFLOP/s at 1×512×64; the oracle's 256 sampled rows at 1×100000×64 (6.6 GFLOP) in 7-14 s; GPU rungs
// on SwiftShader 0.2-1.4 GFLOP/s at 1×512×64, and the whole ladder there in 40 s, about 2 s per GPU rung.
/** float32 CPU rungs (seq-attention, seq-flash) in a browser's worker, GFLOP/s. */
export const CPU_GFLOPS = 0.5;
/** The float64 oracle in the worker, GFLOP/s. */
export const ORACLE_GFLOPS = 0.4;
/** A GPU rung on a software adapter (SwiftShader, lavapipe), GFLOP/s, and its pipeline compilation, ms. */
export const SOFTWARE_GPU_GFLOPS = 1;
export const SOFTWARE_GPU_SETUP_MS = 1500;
/** A real GPU taken as this share of an H100, and its setup per rung (pipelines, buffers, upload), ms. */
export const SHARE_OF_H100 = 0.1;
export const GPU_SETUP_MS = 200;
/** A GPU rung without an H100 measurement, GFLOP/s on a real GPU. */
const DEFAULT_GPU_GFLOPS = 100;

/** The oracle covers all of O up to this many multiply-adds (B·N²·d), sampled rows above (run-ladder.ts). */
export const WHOLE_ORACLE_LIMIT = 2 ** 27;
export const SAMPLED_ROWS = 256;

export type Stage = 'cpu' | 'gpu' | 'check';

export interface Estimate {
  /** Milliseconds per rung id that can run, and 'check' for the checking. */
  ms: Map<string, number>;
  stage: Map<string, Stage>;
}

export const CHECK = 'check';

export function isSoftwareAdapter(env: RunEnv): boolean {
  const report = env.gpu?.report;
  if (!report) return false;
  return report.isFallbackAdapter || /swiftshader|llvmpipe|lavapipe|software/i.test(`${report.vendor} ${report.architecture} ${report.device} ${report.description}`);
}

export function estimateRun(shape: Shape, rungs: readonly Rung[], env: RunEnv, reference: BenchReference, runnable: (rung: Rung) => boolean): Estimate {
  const flops = attentionFlops(shape);
  const ms = new Map<string, number>();
  const stage = new Map<string, Stage>();
  const software = isSoftwareAdapter(env);
  const bench = nearestBenchShape(reference, shape);
  // The rung at the nearest bench shape, else its best at any bench shape.
  const h100Gflops = (id: string): number | undefined => bench?.rungs[id]?.gflops ?? (Math.max(0, ...reference.shapes.map((s) => s.rungs[id]?.gflops ?? 0)) || undefined);
  const cpuMs = flops / CPU_GFLOPS / 1e6;
  let gpuRuns = false;
  let f16Runs = false;
  for (const rung of rungs) {
    if (!runnable(rung)) continue;
    if (rung.kind === 'cpu') {
      ms.set(rung.id, cpuMs);
      stage.set(rung.id, 'cpu');
      continue;
    }
    gpuRuns = true;
    if (rung.reducedPrecision !== undefined) f16Runs = true;
    const gflops = software ? SOFTWARE_GPU_GFLOPS : (h100Gflops(rung.id) ?? DEFAULT_GPU_GFLOPS) * SHARE_OF_H100;
    ms.set(rung.id, (software ? SOFTWARE_GPU_SETUP_MS : GPU_SETUP_MS) + flops / gflops / 1e6);
    stage.set(rung.id, 'gpu');
  }
  if (ms.size > 0) {
    const { B, N, d } = shape;
    const oracleFlops = B * N * N * d > WHOLE_ORACLE_LIMIT ? 4 * Math.min(SAMPLED_ROWS, B * N) * N * d : flops;
    let check = oracleFlops / ORACLE_GFLOPS / 1e6;
    // The verdict of a GPU rung compares with seq-attention's error: computed apart when seq-attention does not run.
    if (gpuRuns && !rungs.some((r) => r.id === 'seq-attention' && ms.has(r.id))) check += cpuMs;
    if (f16Runs) check += cpuMs;
    ms.set(CHECK, check);
    stage.set(CHECK, 'check');
  }
  return { ms, stage };
}

/** Estimates rescaled by what finished: each stage by the ratio of its finished parts' time to their estimate. */
export class Estimator {
  private readonly taken = new Map<Stage, { estimated: number; actual: number }>();

  constructor(readonly base: Estimate) {}

  /** A part (a rung id, or CHECK) finished after `actualMs` of wall time. */
  observe(key: string, actualMs: number): void {
    const stage = this.base.stage.get(key);
    const estimated = this.base.ms.get(key);
    if (stage === undefined || estimated === undefined) return;
    const sum = this.taken.get(stage) ?? { estimated: 0, actual: 0 };
    this.taken.set(stage, { estimated: sum.estimated + estimated, actual: sum.actual + actualMs });
  }

  /** The estimate of a part, rescaled. */
  ms(key: string): number | undefined {
    const base = this.base.ms.get(key);
    const stage = this.base.stage.get(key);
    if (base === undefined || stage === undefined) return undefined;
    const sum = this.taken.get(stage);
    const ratio = sum && sum.estimated > 0 ? Math.min(100, Math.max(0.01, sum.actual / sum.estimated)) : 1;
    return base * ratio;
  }

  /** The estimated time of the parts not done yet. */
  remaining(done: ReadonlySet<string>): number {
    let total = 0;
    for (const key of this.base.ms.keys()) if (!done.has(key)) total += this.ms(key) ?? 0;
    return total;
  }
}

/** "0.4 s", "12 s", "5 min", "3.2 h", "4 days". */
export function formatDuration(ms: number): string {
  const s = ms / 1000;
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 90) return `${s.toFixed(0)} s`;
  if (s < 90 * 60) return `${(s / 60).toFixed(0)} min`;
  if (s < 48 * 3600) return `${(s / 3600).toFixed(1)} h`;
  return `${(s / 86400).toFixed(0)} days`;
}
