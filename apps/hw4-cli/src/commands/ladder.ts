/**
 * hw4-cli ladder: the quick tour. Generates one input, computes the float64 oracle, runs the rungs on it, checks each
 * against the oracle and prints the ladder table (time, GFLOP/s, speedup, error) on stdout; progress and notes go to
 * stderr. A rung of reduced precision (f16 operands) beyond 5e-3 is shown as such, not as a failure: it promises no
 * more.
 *
 * Which rungs: every rung (and the product's kernel after them) on a real GPU, or with no GPU (the GPU rungs then say why they did not run). On a software
 * adapter (Mesa's llvmpipe, SwiftShader), which compiles each kernel on the CPU at its first run, the quick ladder: the
 * CPU rungs and one GPU rung of each family at a small shape, about a minute instead of several; `--impl all` runs every
 * rung, `--impl quick` the quick set anywhere.
 */
import { adapterName, canRun, runAll, type AdapterReport, type Rung } from '@fa/core';
import { NO_ADAPTER_HINT } from '@fa/core/node';
import { attentionFlops, compareOutputs, formatShape, generateInput, parseDataKind, parseShape, type Comparison, type Shape } from '@fa/io/node';
import { LADDER } from '@fa/ladder';
import { attentionOracle } from '@fa/reference';
import { isNonNegativeInteger, isPositiveInteger, numberFlag, parse, stringFlag } from '../args.js';
import { LADDER_OPTIONS } from '../command-line.js';
import { GPU_NOT_REQUESTED, makeEnv } from '../env.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { reporter } from '../output.js';
import { milliseconds, seconds, textTable } from '../table.js';
import { needsGpu, resolveRungs } from './run.js';
import { formatAdapter } from './list.js';

export const DEFAULT_LADDER_SHAPE = '4,512,64';

/**
 * The quick ladder's shape: small enough that the software GPU compiles every kernel of the quick set in seconds
 * (at d = 16 the cheapest head size to compile, docs/ci.md), large enough for several tiles and two batches.
 */
export const QUICK_LADDER_SHAPE = '2,128,16';

/**
 * The GPU rungs of the quick ladder: one per family of the ladder (docs/ladder.md), each the family's last or best
 * known rung that compiles in seconds on a software GPU. A rung added to a family needs nothing here; a new family
 * adds its line.
 */
export const QUICK_GPU_RUNGS: readonly { family: string; id: string }[] = [
  { family: 'one dispatch per step (4)', id: 'naive' },
  { family: 'fused kernels (5-7)', id: 'fused-split-q' },
  { family: 'seed stages (8-13)', id: 'q-registers' },
  { family: 'register tiles (14-15)', id: 'prefetch' },
  { family: 'fp32 branch (18-22)', id: 'lean-loop' },
  { family: 'matrix-unit branch (16-17, 23-25)', id: 'resident-o' },
];

/** `--impl` values that name a set of rungs instead of rungs. */
const RUNG_SETS = ['all', 'quick'] as const;

/** A software adapter: a GPU implemented on the CPU, whose times say nothing of a real GPU's. */
export function isSoftwareAdapter(report: AdapterReport | undefined): boolean {
  if (!report) return false;
  return report.isFallbackAdapter || /swiftshader|llvmpipe|lavapipe|software/i.test(`${report.vendor} ${report.architecture} ${report.device} ${report.description}`);
}

/** What a ladder run runs: the rungs and the shape, and whether it is the quick ladder. */
export interface LadderPlan {
  rungs: readonly Rung[];
  shape: Shape;
  quick: boolean;
}

/**
 * The plan for `hw4-cli ladder` with these `--impl` and `--shape` values on this adapter (undefined: no GPU): the
 * quick ladder where the adapter is software and no rungs are named (or `--impl quick`), else the rungs named (all
 * by default) at the shape given, or the default shape.
 */
export function ladderPlan(impl: string | undefined, shape: string | undefined, adapter: AdapterReport | undefined): LadderPlan {
  const set = RUNG_SETS.find((name) => name === impl?.trim());
  const quick = set === 'quick' || (impl === undefined && isSoftwareAdapter(adapter));
  const rungs = quick ? quickRungs() : resolveRungs(set === 'all' ? undefined : impl);
  return { rungs, shape: parseShape(shape ?? (quick ? QUICK_LADDER_SHAPE : DEFAULT_LADDER_SHAPE)), quick };
}

/** The quick ladder's rungs in ladder order: the CPU rungs and QUICK_GPU_RUNGS. */
export function quickRungs(): readonly Rung[] {
  const gpu = new Set(QUICK_GPU_RUNGS.map((r) => r.id));
  return LADDER.filter((rung) => rung.kind === 'cpu' || gpu.has(rung.id));
}

interface LadderRow {
  id: string;
  index: number;
  kind: string;
  ran: boolean;
  reason?: string;
  reducedPrecision?: 'f16';
  ms?: number;
  gpuMs?: number;
  gflops?: number;
  speedupOverBelow?: number;
  comparison?: Comparison;
  errorRatio?: number;
}

export async function ladderCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse('ladder', args, LADDER_OPTIONS);
  if (positionals.length > 0) throw new UsageError(`hw4-cli ladder takes no file arguments (got ${positionals.join(' ')}); see --help`);
  const out = reporter(values.quiet === true, values.json === true);
  const impl = stringFlag(values, 'impl');
  const shapeFlag = stringFlag(values, 'shape');
  const kind = parseDataKind(stringFlag(values, 'kind') ?? 'uniform');
  const seed = numberFlag(values, 'seed', isNonNegativeInteger, 'a non-negative integer') ?? 1;
  // Usage errors (a bad rung, shape) before the GPU starts: the plan without an adapter names the same rungs.
  const named = ladderPlan(impl, shapeFlag, undefined);
  const env = await makeEnv({ gpu: needsGpu(named.rungs), threads: numberFlag(values, 'threads', isPositiveInteger, 'a positive integer') });
  const { rungs, shape, quick } = ladderPlan(impl, shapeFlag, env.gpu?.report);
  const software = isSoftwareAdapter(env.gpu?.report);

  const flops = attentionFlops(shape);
  const runnable = rungs.filter((rung) => canRun(rung, shape, env) === true).length;
  out.info(
    `ladder on ${formatShape(shape)}, ${kind} data, seed ${seed}: ${(flops / 1e6).toFixed(0)} MFLOP per rung, ${runnable} of ${rungs.length} rungs can run here` +
      (quick ? ` (the quick ladder: the CPU rungs and one GPU rung per family; --impl all runs every rung)` : ''),
  );
  if (software) out.info(`  a software GPU compiles each kernel at its first run, on the CPU: seconds per GPU rung`);
  const input = generateInput({ shape, kind, seed });
  const oracle = attentionOracle(input, shape);
  const rows: LadderRow[] = [];
  let baselineError: number | undefined;
  let below: LadderRow | undefined;
  const started = performance.now();
  for (const rung of rungs) {
    const allowed = canRun(rung, shape, env);
    if (allowed !== true) {
      rows.push({ id: rung.id, index: rung.index, kind: rung.kind, ran: false, reason: allowed });
      continue;
    }
    const t0 = performance.now();
    if (!out.quiet) process.stderr.write(`  [${rows.filter((r) => r.ran).length + 1}/${runnable}] ${rung.id} ... `);
    const runner = await rung.prepare(env, shape);
    let row: LadderRow;
    try {
      const start = performance.now();
      const { output, gpuMs } = await runAll(runner, input, shape);
      const ms = performance.now() - start;
      const comparison = compareOutputs(output, oracle, shape);
      baselineError ??= rung.id === 'seq-attention' ? comparison.maxAbsError : undefined;
      row = { id: rung.id, index: rung.index, kind: rung.kind, ran: true, ms, comparison, gflops: flops / (gpuMs ?? ms) / 1e6 };
      if (gpuMs !== undefined) row.gpuMs = gpuMs;
      if (below?.ms !== undefined) row.speedupOverBelow = (below.gpuMs ?? below.ms) / (gpuMs ?? ms);
      if (baselineError !== undefined && baselineError > 0) row.errorRatio = comparison.maxAbsError / baselineError;
      if (rung.reducedPrecision !== undefined) row.reducedPrecision = rung.reducedPrecision;
    } finally {
      await runner.dispose();
    }
    if (!out.quiet) process.stderr.write(`${seconds(performance.now() - t0)}\n`);
    rows.push(row);
    below = row;
  }
  out.info(`  ${rows.filter((r) => r.ran).length} rungs in ${seconds(performance.now() - started)}`);
  const failed = rows.filter((r) => r.comparison && !r.comparison.pass && r.reducedPrecision === undefined);
  const machine = env.gpu ? `GPU ${adapterName(env.gpu.report)}` : env.gpuUnavailableReason === GPU_NOT_REQUESTED ? 'CPU rungs only' : 'no GPU';
  const table = [
    `${formatShape(shape)}, ${kind} data, seed ${seed}; ${machine}${quick ? '; the quick ladder' : ''}`,
    textTable(
      ['#', 'id', 'kind', 'time', 'GFLOP/s', 'speedup over below', 'max error', 'error ÷ seq-attention\'s', 'result'],
      rows.map((r) =>
        r.ran && r.comparison
          ? [
              String(r.index),
              r.id,
              r.kind,
              milliseconds(r.gpuMs ?? r.ms ?? 0) + (r.gpuMs === undefined ? '' : ' gpu'),
              (r.gflops ?? 0).toFixed(2),
              r.speedupOverBelow === undefined ? '-' : `${r.speedupOverBelow.toFixed(1)}x`,
              r.comparison.maxAbsError.toExponential(1),
              r.errorRatio === undefined ? '-' : r.errorRatio.toFixed(2),
              r.comparison.pass ? 'PASS' : r.reducedPrecision ? `over 5e-3 (${r.reducedPrecision} operands)` : 'FAIL',
            ]
          : [String(r.index), r.id, r.kind, '-', '-', '-', '-', '-', `skipped: ${r.reason === env.gpuUnavailableReason ? 'no GPU (see below)' : (r.reason ?? '')}`],
      ),
    ),
    `errors are max |O - O_float64| over ${shape.B * shape.N * shape.d} elements (the format's tolerance is 5e-3); ` +
      `"error ÷ seq-attention's" compares a rung's error with the plain float32 rung's: below 1 is more accurate, not faster`,
  ].join('\n');
  if (out.json) {
    out.result({ shape, kind, seed, quick, adapter: env.gpu?.report, gpuUnavailableReason: env.gpu ? undefined : env.gpuUnavailableReason, rungs: rows });
    out.info(table);
  } else {
    process.stdout.write(`${table}\n`);
  }
  if (env.gpu) out.info(formatAdapter(env.gpu.report));
  else if (env.gpuUnavailableReason !== GPU_NOT_REQUESTED) {
    out.info(`GPU: none (${env.gpuUnavailableReason ?? 'unknown reason'})${env.gpuUnavailableReason?.includes('lavapipe') ? '' : `; ${NO_ADAPTER_HINT}`}`);
  }
  if (software) {
    out.info(
      [
        'Note: this GPU is a software one, running on these CPU cores and compiling each kernel at its first run, so its',
        'times do not show how the rungs compare on a real GPU. For that: the H100 tables in docs/ladder.md, the teaching',
        'page on your own GPU (npm run web), or on a machine with a GPU `npx hw4-cli ladder` (every rung at',
        `${formatShape(parseShape(DEFAULT_LADDER_SHAPE))}).${quick ? ' Here `npx hw4-cli ladder --impl all` runs every rung, for minutes.' : ''}`,
      ].join('\n'),
    );
  }
  return failed.length > 0 ? EXIT.mismatch : EXIT.ok;
}
