/**
 * hw4-cli --list [--json] [--shape B,N,d]: the rungs in ladder order, whether each can run here and why not, the GPU
 * adapter, and which rung a run without --impl would use (for the given shape, or for each bench shape) and why.
 */
import { adapterName, unavailableReason, type AdapterReport, type RunEnv } from '@fa/core';
import { formatBytes, formatShape, parseShape, type Shape } from '@fa/io/node';
import { chooseRung, IMPLEMENTATIONS } from '@fa/ladder';
import { parse, stringFlag } from '../args.js';
import { LIST_OPTIONS } from '../command-line.js';
import { DEFAULT_BENCH_SHAPES } from './bench.js';
import { makeEnv } from '../env.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { textTable } from '../table.js';

/** hw4-cli --list [--json]. */
export async function listCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse('list', args, LIST_OPTIONS);
  if (positionals.length > 0) throw new UsageError(`--list takes no file arguments (got ${positionals.join(' ')})`);
  const shapeText = stringFlag(values, 'shape');
  const shapes = (shapeText ?? DEFAULT_BENCH_SHAPES).split(/\s+/).filter((t) => t.length > 0).map(parseShape);
  const env = await makeEnv({ gpu: true });
  process.stdout.write(values.json === true ? `${JSON.stringify(listReport(env, shapes), null, 2)}\n` : `${formatList(env, shapes)}\n`);
  return EXIT.ok;
}

export interface ListedRung {
  id: string;
  index: number;
  /** The id of the rung this one changes: the ladder is a tree (null for the first rung). */
  parent: string | null;
  title: string;
  delta: string;
  kind: 'cpu' | 'gpu';
  requires: string[];
  /** Operands rounded below float32 (f16): may miss the 5e-3 contract; only run when named. */
  reducedPrecision?: 'f16';
  /** Operands kept in f16's range (up to 65504): only run when named, and refused on inputs beyond it. */
  reducedRange?: 'f16';
  /** A product kernel (@fa/sdpa) on hw4's layout, not a lesson of the ladder. */
  product?: true;
  available: boolean;
  reason?: string;
}

export function listRungs(env: RunEnv): ListedRung[] {
  return IMPLEMENTATIONS.map((rung) => {
    const reason = unavailableReason(rung, env);
    const entry: ListedRung = {
      id: rung.id,
      index: rung.index,
      parent: rung.parent,
      title: rung.title,
      delta: rung.delta,
      kind: rung.kind,
      requires: [...(rung.requires ?? [])],
      ...(rung.reducedPrecision ? { reducedPrecision: rung.reducedPrecision } : {}),
      ...(rung.reducedRange ? { reducedRange: rung.reducedRange } : {}),
      ...(rung.product ? { product: rung.product } : {}),
      available: reason === undefined,
    };
    if (reason !== undefined) entry.reason = reason;
    return entry;
  });
}

/** The rung a run without --impl would use for a shape, and why. */
export interface ListedChoice {
  shape: Shape;
  rung: string;
  reason: string;
}

export function listChoices(env: RunEnv, shapes: readonly Shape[]): ListedChoice[] {
  return shapes.map((shape) => {
    const { rung, reason } = chooseRung(shape, env, IMPLEMENTATIONS);
    return { shape, rung: rung.id, reason };
  });
}

/** What `--list --json` prints: the rungs, the GPU adapter (or why there is none), and the default choices. */
export interface ListReport {
  rungs: ListedRung[];
  choices: ListedChoice[];
  /** The adapter the GPU rungs would use, or null without one. */
  adapter: (AdapterReport & { name: string }) | null;
  gpuUnavailableReason?: string;
}

export function listReport(env: RunEnv, shapes: readonly Shape[]): ListReport {
  const report: ListReport = { rungs: listRungs(env), choices: listChoices(env, shapes), adapter: env.gpu ? { name: adapterName(env.gpu.report), ...env.gpu.report } : null };
  if (!env.gpu) report.gpuUnavailableReason = env.gpuUnavailableReason ?? 'unknown reason';
  return report;
}

export function formatList(env: RunEnv, shapes: readonly Shape[]): string {
  const rows = listRungs(env).map((r) => [r.product ? 'product' : String(r.index), r.id, r.kind, r.available ? 'yes' : 'no', r.available ? r.title : r.reason ?? '']);
  const lines = ["Rungs, slowest idea first, then the product's kernels (@fa/sdpa):", textTable(['#', 'id', 'kind', 'here', 'title, or why not here'], rows), ''];
  lines.push(env.gpu ? formatAdapter(env.gpu.report) : `GPU: none (${env.gpuUnavailableReason ?? 'unknown reason'})`);
  lines.push('', 'Without --impl, hw4-cli would use (choose another shape with --shape B,N,d):');
  for (const choice of listChoices(env, shapes)) lines.push(`  ${formatShape(choice.shape)}: ${choice.rung}, ${choice.reason}`);
  return lines.join('\n');
}

export function formatAdapter(report: AdapterReport): string {
  const l = report.limits;
  const subgroups =
    report.subgroupMinSize === undefined ? '' : `, subgroup size ${report.subgroupMinSize}-${report.subgroupMaxSize ?? report.subgroupMinSize}`;
  return [
    `GPU: ${adapterName(report)}${report.isFallbackAdapter ? ' (software adapter: without --impl, hw4-cli uses the faster cpu rung)' : ''}`,
    `  features: ${report.features.join(', ')}`,
    `  limits: workgroup storage ${formatBytes(l.maxComputeWorkgroupStorageSize)}, storage binding ${formatBytes(l.maxStorageBufferBindingSize)}, ` +
      `buffer ${formatBytes(l.maxBufferSize)}, ${l.maxComputeInvocationsPerWorkgroup} invocations per workgroup${subgroups}`,
    `  bounds checks: ${report.boundsChecks === false ? 'off (FA_BOUNDS_CHECKS=1 or --bounds-checks turns them on)' : 'on'}`,
  ].join('\n');
}
