/**
 * hw4-cli sweep --over n|batch|d: a scaling study. The chosen rungs (and PyTorch's SDPA, where present) run at each
 * value of one dimension of the shape, the others fixed, each validated on sampled rows against the float64 oracle
 * before it is timed, exactly as the bench does (benchShape). Writes <adapter>-<study>.json, .md (times and the
 * fitted log-log slopes) and .svg (a log-log chart), and prints the markdown.
 */
import { cpus } from 'node:os';
import { join } from 'node:path';
import { adapterName } from '@fa/core';
import { parseShape, writeFileAtomic, type Shape } from '@fa/io/node';
import { isPositiveInteger, numberFlag, parse, stringFlag, type Values } from '../args.js';
import { SWEEP_OPTIONS } from '../command-line.js';
import type { BenchShape } from '../bench/report.js';
import { checkReportFiles, checkReportFolder, makeReportFolder } from '../bench/report-folder.js';
import { sweepMarkdown, sweepShape, sweepSvg, type SweepReport, type SweepStudy } from '../bench/sweep-report.js';
import { torchUnavailable } from '../bench/torch.js';
import { makeEnv } from '../env.js';
import { computeUnitFor, tilesMarkdown, tilesSvg, type TilesReport } from '../bench/tiles-report.js';
import { EXIT, ExitError, UsageError } from '../exit-codes.js';
import { reporter, type Reporter } from '../output.js';
import { checkTileRungs, gridOf, tileStudy, tilesShapeOf, TILES_RUNGS } from './sweep-tiles.js';
import { benchShape, checkShape, distinctRungs } from './bench.js';
import { needsGpu } from './run.js';

/** Each study's default values and fixed dimensions (the swept one 0). */
export const SWEEP_DEFAULTS: Record<SweepStudy, { values: number[]; base: Shape }> = {
  n: { values: [64, 128, 256, 512, 1000, 1024, 2048, 4096, 8192, 16384, 32768], base: { B: 4, N: 0, d: 64 } },
  batch: { values: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024], base: { B: 0, N: 1024, d: 64 } },
  d: { values: [16, 32, 48, 64, 80, 96, 112, 128], base: { B: 4, N: 4096, d: 0 } },
};

/** The rungs a study runs without --impl: one per stage of the ladder that teaches something about scaling. */
export const SWEEP_RUNGS = 'fused-split-q,q-registers,lean-loop,resident-o';

/** --over's study, or a one-line UsageError. */
export function studyOf(text: string | undefined): SweepStudy | 'tiles' {
  if (text === undefined) throw new UsageError('sweep needs --over n, --over batch, --over d (the dimension to vary) or --over tiles (tile sizes at one shape)');
  if (text !== 'n' && text !== 'batch' && text !== 'd' && text !== 'tiles') throw new UsageError(`--over ${text}: give n (sequence length), batch, d (head size) or tiles (tile sizes)`);
  return text;
}

/** The file name of a report: the adapter's vendor and device, then the study. */
function reportSlug(adapter: string, study: string): string {
  return `${adapter.split(' / ').slice(0, 2).join('-').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'unknown'}-${study}`;
}

/** Writes <dir>/<slug>.json, .md and .svg, each atomically. */
async function writeReport(dir: string, slug: string, json: unknown, markdown: string, svg: string): Promise<string> {
  makeReportFolder(dir);
  const path = join(dir, slug);
  await writeFileAtomic(`${path}.json`, [Buffer.from(`${JSON.stringify(json, null, 2)}\n`)]);
  await writeFileAtomic(`${path}.md`, [Buffer.from(markdown)]);
  await writeFileAtomic(`${path}.svg`, [Buffer.from(svg)]);
  return path;
}

/** --values: at least two distinct positive integers, sorted; d a multiple of 4. */
export function valuesOf(text: string | undefined, study: SweepStudy): number[] {
  if (text === undefined) return SWEEP_DEFAULTS[study].values;
  const values = text.split(',').map((v) => Number(v.trim()));
  const bad = values.find((v) => !Number.isSafeInteger(v) || v < 1 || (study === 'd' && v % 4 !== 0));
  if (bad !== undefined) throw new UsageError(`--values ${text}: give positive integers, comma-separated${study === 'd' ? ', each a multiple of 4 (head sizes)' : ''}`);
  const sorted = [...new Set(values)].sort((a, b) => a - b);
  if (sorted.length < 2) throw new UsageError(`--values ${text}: give at least two different values to fit a slope`);
  return sorted;
}

/** The shape at each value, each one the hw4 format can hold (checked as bench checks --shapes), or a one-line UsageError. */
export function pointShapes(study: SweepStudy, base: Shape, points: readonly number[], text: string | undefined): Shape[] {
  return points.map((value) => {
    const shape = sweepShape(study, base, value);
    return checkShape(shape, `--values ${text ?? points.join(',')}: shape ${shape.B}×${shape.N}×${shape.d}`);
  });
}

/** --base B,N,d: the fixed dimensions (the swept one is ignored, so any number there). */
export function baseOf(text: string | undefined, study: SweepStudy): Shape {
  if (text === undefined) return SWEEP_DEFAULTS[study].base;
  const parts = text.split(',');
  const swept = study === 'batch' ? 0 : study === 'n' ? 1 : 2;
  if (parts.length === 3) parts[swept] = '4'; // ignored: any number or *, checked by the values instead
  const shape = parseShape(parts.join(','));
  return study === 'n' ? { ...shape, N: 0 } : study === 'batch' ? { ...shape, B: 0 } : { ...shape, d: 0 };
}

const cpuName = (): string => `${cpus()[0]?.model ?? 'unknown'} ×${cpus().length}`;

/** The options every study shares: repeats, the per-cell budget, where the report goes. */
function commonOptions(values: Values) {
  return {
    repeats: numberFlag(values, 'repeats', isPositiveInteger, 'a positive integer') ?? 5,
    budgetSeconds: numberFlag(values, 'budget-s', (n) => n > 0, 'a positive number of seconds') ?? 40,
    outDir: stringFlag(values, 'out') ?? 'docs/scaling',
  };
}

/** sweep --over tiles (sweep-tiles.ts): a grid of tile sizes per rung at one shape, on the GPU. */
async function tilesCommand(values: Values, args: string[], out: Reporter): Promise<number> {
  if (values.values !== undefined) throw new UsageError('--over tiles takes --grid "AXIS=V,V;AXIS=V,V" for the tile sizes, not --values');
  const rungs = distinctRungs(stringFlag(values, 'impl') ?? TILES_RUNGS);
  checkTileRungs(rungs);
  const grid = gridOf(stringFlag(values, 'grid'), rungs);
  const shape = tilesShapeOf(stringFlag(values, 'base'));
  const { repeats, budgetSeconds, outDir } = commonOptions(values);
  checkReportFolder(outDir);
  const env = await makeEnv({ gpu: true });
  if (!env.gpu) throw new ExitError(`sweep --over tiles needs a GPU: ${env.gpuUnavailableReason ?? 'no adapter'}`, EXIT.failure);
  const adapter = adapterName(env.gpu.report);
  checkReportFiles(outDir, join(outDir, reportSlug(adapter, 'tiles')));
  const command = `hw4-cli sweep ${args.join(' ')}`.trim();
  const unit = computeUnitFor(env.gpu.report);
  out.info(`sweep over tiles at ${shape.B}×${shape.N}×${shape.d} on ${adapter}; occupancy for ${unit.name}`);
  const ctx = { repeats, budgetSeconds, rates: new Map<string, number>(), python: 'python3', torchReason: 'not part of the tile study', torchDtypes: [], command, info: out.info };
  const studies = [];
  for (const [k, rung] of rungs.entries()) {
    out.info(`[${k + 1}/${rungs.length}] ${rung.id}`);
    studies.push(await tileStudy(rung, shape, env, grid, ctx));
  }
  const report: TilesReport = { date: new Date().toISOString().slice(0, 10), adapter, command, study: 'tiles', shape, computeUnit: unit, rungs: studies };
  const markdown = tilesMarkdown(report);
  const path = await writeReport(outDir, reportSlug(adapter, 'tiles'), { ...report, cpu: cpuName() }, markdown, tilesSvg(report));
  out.info(`wrote ${path}.{json,md,svg}`);
  if (out.json) out.result(report);
  else process.stdout.write(`${markdown}\n`);
  return EXIT.ok;
}

export async function sweepCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse('sweep', args, SWEEP_OPTIONS);
  if (positionals.length > 0) throw new UsageError(`hw4-cli sweep takes no file arguments (got ${positionals.join(' ')}); see --help`);
  const out = reporter(values.quiet === true, values.json === true);
  const study = studyOf(stringFlag(values, 'over'));
  if (study === 'tiles') return tilesCommand(values, args, out);
  if (values.grid !== undefined) throw new UsageError('--grid sets tile sizes: use it with --over tiles');
  const points = valuesOf(stringFlag(values, 'values'), study);
  const base = baseOf(stringFlag(values, 'base'), study);
  const studied = pointShapes(study, base, points, stringFlag(values, 'values'));
  const rungs = distinctRungs(stringFlag(values, 'impl') ?? SWEEP_RUNGS);
  const { repeats, budgetSeconds, outDir } = commonOptions(values);
  const python = stringFlag(values, 'python') ?? process.env.FA_PYTHON ?? 'python3';
  checkReportFolder(outDir);
  const env = await makeEnv({ gpu: needsGpu(rungs), threads: numberFlag(values, 'threads', isPositiveInteger, 'a positive integer') });
  const torchReason = values['no-torch'] === true ? 'not requested (--no-torch)' : torchUnavailable(python);
  const adapter = env.gpu ? adapterName(env.gpu.report) : `no GPU (${env.gpuUnavailableReason ?? 'unknown'})`;
  checkReportFiles(outDir, join(outDir, reportSlug(adapter, study)));
  const command = `hw4-cli sweep ${args.join(' ')}`.trim();
  out.info(`sweep over ${study} on ${adapter}; PyTorch: ${torchReason ?? 'yes'}`);
  const rates = new Map<string, number>();
  const shapes: BenchShape[] = [];
  for (const [k, shape] of studied.entries()) {
    out.info(`[${k + 1}/${points.length}] ${shape.B}×${shape.N}×${shape.d}`);
    shapes.push(await benchShape(shape, { rungs, env, repeats, budgetSeconds, rates, python, torchReason, torchDtypes: ['fp32'], command, info: out.info }));
  }
  const report: SweepReport = { date: new Date().toISOString().slice(0, 10), adapter, command, study, base, values: points, shapes };
  const markdown = sweepMarkdown(report);
  const path = await writeReport(outDir, reportSlug(adapter, study), { ...report, cpu: cpuName() }, markdown, sweepSvg(report));
  out.info(`wrote ${path}.{json,md,svg}`);
  if (out.json) out.result(report);
  else process.stdout.write(`${markdown}\n`);
  return EXIT.ok;
}
