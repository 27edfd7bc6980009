/**
 * hw4-cli ladder: the quick tour. Generates one input, computes the float64 oracle, runs every rung that can run
 * here on it, checks each against the oracle and prints the ladder table (time, GFLOP/s, speedup, error). A rung of
 * reduced precision (f16 operands) beyond 5e-3 is shown as such, not as a failure: it promises no more.
 */
import { canRun, runAll } from '@fa/core';
import { NO_ADAPTER_HINT } from '@fa/core/node';
import { attentionFlops, compareOutputs, formatShape, generateInput, parseDataKind, parseShape, type Comparison } from '@fa/io/node';
import { attentionOracle } from '@fa/reference';
import { isNonNegativeInteger, isPositiveInteger, numberFlag, parse, stringFlag } from '../args.js';
import { LADDER_OPTIONS } from '../command-line.js';
import { GPU_NOT_REQUESTED, makeEnv } from '../env.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { reporter } from '../output.js';
import { milliseconds, textTable } from '../table.js';
import { needsGpu, resolveRungs } from './run.js';
import { formatAdapter } from './list.js';

export const DEFAULT_LADDER_SHAPE = '4,512,64';

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
  const shape = parseShape(stringFlag(values, 'shape') ?? DEFAULT_LADDER_SHAPE);
  const kind = parseDataKind(stringFlag(values, 'kind') ?? 'uniform');
  const seed = numberFlag(values, 'seed', isNonNegativeInteger, 'a non-negative integer') ?? 1;
  const rungs = resolveRungs(stringFlag(values, 'impl'));
  const env = await makeEnv({ gpu: needsGpu(rungs), threads: numberFlag(values, 'threads', isPositiveInteger, 'a positive integer') });

  out.info(`ladder on ${formatShape(shape)}, ${kind} data, seed ${seed}: ${(attentionFlops(shape) / 1e6).toFixed(0)} MFLOP per rung`);
  const input = generateInput({ shape, kind, seed });
  const oracle = attentionOracle(input, shape);
  const rows: LadderRow[] = [];
  let baselineError: number | undefined;
  let below: LadderRow | undefined;
  for (const rung of rungs) {
    const allowed = canRun(rung, shape, env);
    if (allowed !== true) {
      rows.push({ id: rung.id, index: rung.index, kind: rung.kind, ran: false, reason: allowed });
      continue;
    }
    out.info(`  running ${rung.id} ...`);
    const runner = await rung.prepare(env, shape);
    let row: LadderRow;
    try {
      const start = performance.now();
      const { output, gpuMs } = await runAll(runner, input, shape);
      const ms = performance.now() - start;
      const comparison = compareOutputs(output, oracle, shape);
      baselineError ??= rung.id === 'seq-attention' ? comparison.maxAbsError : undefined;
      row = { id: rung.id, index: rung.index, kind: rung.kind, ran: true, ms, comparison, gflops: attentionFlops(shape) / (gpuMs ?? ms) / 1e6 };
      if (gpuMs !== undefined) row.gpuMs = gpuMs;
      if (below?.ms !== undefined) row.speedupOverBelow = (below.gpuMs ?? below.ms) / (gpuMs ?? ms);
      if (baselineError !== undefined && baselineError > 0) row.errorRatio = comparison.maxAbsError / baselineError;
      if (rung.reducedPrecision !== undefined) row.reducedPrecision = rung.reducedPrecision;
    } finally {
      await runner.dispose();
    }
    rows.push(row);
    below = row;
  }
  const failed = rows.filter((r) => r.comparison && !r.comparison.pass && r.reducedPrecision === undefined);
  if (out.json) {
    out.result({ shape, kind, seed, adapter: env.gpu?.report, gpuUnavailableReason: env.gpu ? undefined : env.gpuUnavailableReason, rungs: rows });
  }
  out.info(
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
  );
  out.info(
    `errors are max |O - O_float64| over ${shape.B * shape.N * shape.d} elements (the format's tolerance is 5e-3); ` +
      `"error ÷ seq-attention's" compares a rung's error with the plain float32 rung's: below 1 is more accurate, not faster`,
  );
  if (env.gpu) out.info(formatAdapter(env.gpu.report));
  else if (env.gpuUnavailableReason !== GPU_NOT_REQUESTED) {
    out.info(`GPU: none (${env.gpuUnavailableReason ?? 'unknown reason'})${env.gpuUnavailableReason?.includes('lavapipe') ? '' : `; ${NO_ADAPTER_HINT}`}`);
  }
  return failed.length > 0 ? EXIT.mismatch : EXIT.ok;
}
