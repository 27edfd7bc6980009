/**
 * hw4-cli --list [--json]: the rungs in ladder order, whether each can run here and why not, and the GPU adapter.
 */
import { adapterName, unavailableReason, type AdapterReport, type RunEnv } from '@fa/core';
import { formatBytes } from '@fa/io';
import { LADDER } from '@fa/ladder';
import { parse } from '../args.js';
import { makeEnv } from '../env.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { textTable } from '../table.js';

export const LIST_OPTIONS = { json: { type: 'boolean' } } as const;

/** hw4-cli --list [--json]. */
export async function listCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse('list', args, LIST_OPTIONS);
  if (positionals.length > 0) throw new UsageError(`--list takes no file arguments (got ${positionals.join(' ')})`);
  const env = await makeEnv({ gpu: true });
  process.stdout.write(values.json === true ? `${JSON.stringify(listReport(env), null, 2)}\n` : `${formatList(env)}\n`);
  return EXIT.ok;
}

export interface ListedRung {
  id: string;
  index: number;
  title: string;
  delta: string;
  kind: 'cpu' | 'gpu';
  requires: string[];
  available: boolean;
  reason?: string;
}

export function listRungs(env: RunEnv): ListedRung[] {
  return LADDER.map((rung) => {
    const reason = unavailableReason(rung, env);
    const entry: ListedRung = {
      id: rung.id,
      index: rung.index,
      title: rung.title,
      delta: rung.delta,
      kind: rung.kind,
      requires: [...(rung.requires ?? [])],
      available: reason === undefined,
    };
    if (reason !== undefined) entry.reason = reason;
    return entry;
  });
}

/** What `--list --json` prints: the rungs, and the GPU adapter (or why there is none). */
export interface ListReport {
  rungs: ListedRung[];
  /** The adapter the GPU rungs would use, or null without one. */
  adapter: (AdapterReport & { name: string }) | null;
  gpuUnavailableReason?: string;
}

export function listReport(env: RunEnv): ListReport {
  const report: ListReport = { rungs: listRungs(env), adapter: env.gpu ? { name: adapterName(env.gpu.report), ...env.gpu.report } : null };
  if (!env.gpu) report.gpuUnavailableReason = env.gpuUnavailableReason ?? 'unknown reason';
  return report;
}

export function formatList(env: RunEnv): string {
  const rows = listRungs(env).map((r) => [String(r.index), r.id, r.kind, r.available ? 'yes' : 'no', r.available ? r.title : r.reason ?? '']);
  const lines = ['Rungs, slowest idea first (the default is the highest one that can run the input\'s shape):', textTable(['#', 'id', 'kind', 'here', 'title, or why not here'], rows), ''];
  lines.push(env.gpu ? formatAdapter(env.gpu.report) : `GPU: none (${env.gpuUnavailableReason ?? 'unknown reason'})`);
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
  ].join('\n');
}
