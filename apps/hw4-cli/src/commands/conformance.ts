/**
 * hw4-cli conformance [--impl IDS] [--json]: the conformance suite of the tests, as a command, so any machine (the GPU
 * machine too) can check every rung against the float64 oracle on the awkward cases. The table (or, with --json, the
 * results) goes to stdout; skips and failures are also said on stderr. Exit 5 when any rung fails.
 */
import { unavailableReason } from '@fa/core';
import { CONFORMANCE_CASES, checkConformance, type ConformanceResult } from '@fa/ladder';
import { isPositiveInteger, numberFlag, parse, stringFlag } from '../args.js';
import { CONFORMANCE_OPTIONS } from '../command-line.js';
import { makeEnv } from '../env.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { reporter } from '../output.js';
import { textTable } from '../table.js';
import { needsGpu, resolveRungs } from './run.js';

export async function conformanceCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse('conformance', args, CONFORMANCE_OPTIONS);
  if (positionals.length > 0) throw new UsageError(`hw4-cli conformance takes no file arguments (got ${positionals.join(' ')})`);
  const out = reporter(values.quiet === true, values.json === true);
  const rungs = resolveRungs(stringFlag(values, 'impl'));
  const env = await makeEnv({ gpu: needsGpu(rungs), threads: numberFlag(values, 'threads', isPositiveInteger, 'a positive integer') });
  const results: ConformanceResult[] = [];
  const skipped: { rung: string; reason: string }[] = [];
  for (const rung of rungs) {
    const missing = unavailableReason(rung, env);
    if (missing !== undefined) {
      skipped.push({ rung: rung.id, reason: missing });
      out.info(`${rung.id}: skipped, ${missing}`);
      continue;
    }
    for (const testCase of CONFORMANCE_CASES) {
      const result = await checkConformance(rung, testCase, env);
      results.push(result);
      if (!result.pass) out.info(result.detail);
    }
  }
  const failed = results.filter((r) => !r.pass).length;
  if (out.json) {
    out.result({
      passed: results.length - failed,
      failed,
      skipped,
      results: results.map(({ rung, case: name, declined, pass, comparison, baseline }) => ({
        rung,
        case: name,
        declined,
        pass,
        maxAbsError: comparison?.maxAbsError,
        baselineMaxAbsError: baseline?.maxAbsError,
      })),
    });
    return failed > 0 ? EXIT.mismatch : EXIT.ok;
  }
  const rows = results.map((r) => [
    r.rung,
    r.case,
    r.declined !== undefined ? 'declined' : r.pass ? 'PASS' : 'FAIL',
    r.comparison ? r.comparison.maxAbsError.toExponential(1) : '-',
    r.baseline ? r.baseline.maxAbsError.toExponential(1) : r.declined ?? '-',
  ]);
  const skips = skipped.map((s) => `skipped ${s.rung}: ${s.reason}\n`).join('');
  // The baseline is seq-attention's error (float32), or a plain f16 computation's for a rung of reduced precision.
  process.stdout.write(`${textTable(['rung', 'case', 'result', 'max error', 'baseline'], rows)}\n${results.length - failed} passed, ${failed} failed\n${skips}`);
  return failed > 0 ? EXIT.mismatch : EXIT.ok;
}
