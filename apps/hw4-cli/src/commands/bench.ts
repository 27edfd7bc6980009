/**
 * hw4-cli bench: rungs × shapes on generated inputs. For each shape: the copy-only floor, PyTorch's SDPA when
 * present (fp32, and fp16 with --torch-dtype), then every rung in ladder order with warm-up and median of repeats, GPU time from timestamps, TFLOP/s,
 * speedups over the rung below and over naive, and the max error on sampled rows against the float64 oracle.
 * Writes JSON, a markdown table and an SVG chart, and prints the time table last.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { adapterName, canRun, prepareCopyFloor, runAll, type Runner, type Rung, type RunEnv } from '@fa/core';
import { attentionFlops, DEFAULT_TOLERANCE, generateInput, Hw4FormatError, parseShape, validateShape, writeFileAtomic, writeHw4Input, type Shape } from '@fa/io/node';
import { attentionOracleRows, compareRows, outputRows, sampleRows } from '@fa/reference';
import { isPositiveInteger, numberFlag, parse, stringFlag } from '../args.js';
import { BENCH_OPTIONS } from '../command-line.js';
import { settledTimings, warmUpMs } from '../bench/warm-up.js';
import { measure, median, type Timing } from '../bench/measure.js';
import { benchMarkdown, benchSvg, type BenchCell, type BenchReport, type BenchShape } from '../bench/report.js';
import { checkReportFiles, checkReportFolder, makeReportFolder, readEarlierReport, reportSlug } from '../bench/report-folder.js';
import { parseTorchDtypes, timeTorch, torchUnavailable, type TorchDtype } from '../bench/torch.js';
import { makeEnv } from '../env.js';
import { EXIT, UsageError } from '../exit-codes.js';
import { reporter } from '../output.js';
import { needsGpu, resolveRungs } from './run.js';

/** The shapes the ladder's docs report: the large cases of the original suite and one beyond it. */
export const DEFAULT_BENCH_SHAPES = '13600,128,32 10,2048,64 500,2048,64 4,32768,32 2,32768,64 26,32768,64';
const SAMPLED_ROWS = 16;
/**
 * The error up to which a rung of reduced precision (f16 operands, e.g. `f16-matrix`) is still timed: it may miss 5e-3
 * on ordinary data, as PyTorch's fp16 SDPA does, but an error ten times that means a wrong kernel, not rounding.
 */
const REDUCED_PRECISION_LIMIT = 10 * DEFAULT_TOLERANCE;

export async function benchCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse('bench', args, BENCH_OPTIONS);
  if (positionals.length > 0) throw new UsageError(`hw4-cli bench takes no file arguments (got ${positionals.join(' ')}); see --help`);
  const out = reporter(values.quiet === true, values.json === true);
  const shapes = benchShapesOf(stringFlag(values, 'shapes') ?? DEFAULT_BENCH_SHAPES);
  const rungs = distinctRungs(stringFlag(values, 'impl'));
  const repeats = numberFlag(values, 'repeats', isPositiveInteger, 'a positive integer') ?? 5;
  const budgetSeconds = numberFlag(values, 'budget-s', (n) => n > 0, 'a positive number of seconds') ?? 40;
  const outDir = stringFlag(values, 'out') ?? 'docs/bench';
  const python = stringFlag(values, 'python') ?? process.env.FA_PYTHON ?? 'python3';
  const torchDtypes = parseTorchDtypes(stringFlag(values, 'torch-dtype') ?? 'fp32');
  if (typeof torchDtypes === 'string') throw new UsageError(`--torch-dtype: ${torchDtypes}`);
  if (values.render === true) return renderOnly(outDir, out.info);
  checkReportFolder(outDir);
  const env = await makeEnv({ gpu: needsGpu(rungs), threads: numberFlag(values, 'threads', isPositiveInteger, 'a positive integer') });
  const torchReason = values['no-torch'] === true ? 'not requested (--no-torch)' : torchUnavailable(python);
  const adapter = env.gpu ? adapterName(env.gpu.report) : `no GPU (${env.gpuUnavailableReason ?? 'unknown'})`;
  // Where the report goes, checked before anything is measured: the files it replaces, and the earlier report it extends.
  const base = join(outDir, reportSlug(adapter));
  checkReportFiles(outDir, base);
  readBenchReport(outDir, `${base}.json`);
  out.info(`bench on ${adapter}; PyTorch: ${torchReason ?? `yes (${torchDtypes.join(', ')})`}`);

  /** Flops per wall millisecond each rung reached last, to estimate the next shape's time. */
  const rates = new Map<string, number>();
  const results: BenchShape[] = [];
  const command = `hw4-cli bench ${args.join(' ')}`.trim();
  for (const shape of shapes) {
    results.push(await benchShape(shape, { rungs, env, repeats, budgetSeconds, rates, python, torchReason, torchDtypes, command, info: out.info }));
  }

  const report: BenchReport = {
    date: new Date().toISOString().slice(0, 10),
    adapter,
    cpu: `${cpus()[0]?.model ?? 'unknown'} ×${cpus().length}`,
    node: process.version,
    command,
    repeats,
    budgetSeconds,
    sampledRows: SAMPLED_ROWS,
    shapes: results,
  };
  if (env.gpu) report.adapterReport = env.gpu.report;
  makeReportFolder(outDir);
  const previous = readBenchReport(outDir, `${base}.json`);
  if (previous && previous.adapter !== adapter) out.info(`hw4-cli: note: ${base}.json held a report of ${previous.adapter}; it is replaced`);
  if (previous) mergePrevious(report, previous);
  const markdown = await writeReport(report, base);
  out.info(`wrote ${base}.{json,md,svg}`);
  if (out.json) out.result(report);
  else process.stdout.write(`${markdown.split('### Speedups')[0] ?? markdown}\n`);
  return EXIT.ok;
}

/**
 * A shape the hw4 format can hold (B, N and d positive and within the header's int32, one batch within the readers'
 * limit), as `--shapes` is checked, or a one-line UsageError starting with `what`.
 */
export function checkShape(shape: Shape, what: string): Shape {
  try {
    return validateShape(shape, what);
  } catch (error) {
    throw error instanceof Hw4FormatError ? new UsageError(error.message) : error;
  }
}

/** --shapes: at least one shape B,N,d (separated by spaces or ';'), each valid and given once. */
export function benchShapesOf(text: string): Shape[] {
  const shapes = text.split(/[\s;]+/).filter((s) => s.length > 0).map(parseShape);
  if (shapes.length === 0) throw new UsageError(`--shapes "${text}" names no shape; give shapes B,N,d separated by spaces or ';', e.g. --shapes "4,1024,64 2,2048,64"`);
  const names = shapes.map((s) => `${s.B},${s.N},${s.d}`);
  const twice = names.find((name, k) => names.indexOf(name) !== k);
  if (twice !== undefined) throw new UsageError(`--shapes "${text}" gives ${twice} more than once; give each shape once`);
  return shapes;
}

/** --impl: the rungs named (all of the ladder without it), each once. */
export function distinctRungs(text: string | undefined): readonly Rung[] {
  const rungs = resolveRungs(text);
  const ids = rungs.map((rung) => rung.id);
  const twice = ids.find((id, k) => ids.indexOf(id) !== k);
  if (twice !== undefined) throw new UsageError(`--impl ${text ?? ''} names ${twice} more than once; name each rung once`);
  return rungs;
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Whether `x` is a measured shape of a bench report: B, N and d, and cells with an id and a ladder index. */
function isMeasuredShape(x: unknown): boolean {
  if (!isObject(x) || !isObject(x.shape) || !Array.isArray(x.cells)) return false;
  const { shape } = x;
  return ['B', 'N', 'd'].every((k) => typeof shape[k] === 'number') && x.cells.every((c: unknown) => isObject(c) && typeof c.id === 'string' && typeof c.index === 'number');
}

/** Why `value` is not a bench report (what mergePrevious and --render read), or undefined. */
function notBenchReport(value: unknown): string | undefined {
  if (!isObject(value)) return 'not a JSON object';
  if (typeof value.adapter !== 'string') return 'no "adapter" string';
  if (!Array.isArray(value.shapes)) return 'no "shapes" list';
  const bad = value.shapes.findIndex((s: unknown) => !isMeasuredShape(s));
  return bad >= 0 ? `shape ${bad} is not a measured shape with cells` : undefined;
}

/** The bench report at `path`, or undefined where there is none; a file that is not one stops the run (exit 4), `fix` said. */
function readBenchReport(dir: string, path: string, fix = 'this run would replace it: move it away or delete it, then run again'): BenchReport | undefined {
  return readEarlierReport(dir, path, 'a bench report', notBenchReport, fix) as BenchReport | undefined;
}

/** Writes <base>.json, .md and .svg for `report` (speedups recomputed), returning the markdown. */
async function writeReport(report: BenchReport, base: string): Promise<string> {
  report.shapes.forEach(linkSpeedups);
  const markdown = benchMarkdown(report);
  await writeFileAtomic(`${base}.json`, [Buffer.from(`${JSON.stringify(report, null, 2)}\n`)]);
  await writeFileAtomic(`${base}.md`, [Buffer.from(markdown)]);
  await writeFileAtomic(`${base}.svg`, [Buffer.from(benchSvg(report))]);
  return markdown;
}

/** --render: rewrites the markdown and SVG of every report JSON in `dir` without measuring anything. */
async function renderOnly(dir: string, info: (line: string) => void): Promise<number> {
  checkReportFolder(dir);
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')) : [];
  if (files.length === 0) throw new UsageError(`--render: no bench JSON in ${dir}; run hw4-cli bench first`);
  // Every report read, and every file it rewrites checked, before the first is rewritten.
  const reports = files.map((file) => {
    const base = join(dir, file.replace(/\.json$/, ''));
    checkReportFiles(dir, base);
    return { base, report: readBenchReport(dir, `${base}.json`, '--render would rewrite it and its .md and .svg: move it out of the folder or fix it') };
  });
  for (const { base, report } of reports) {
    if (!report) continue;
    await writeReport(report, base);
    info(`rendered ${base}.{md,svg}`);
  }
  return EXIT.ok;
}

/**
 * Keeps what an earlier run on the same adapter wrote into the same file and this run did not measure (other shapes,
 * other rungs of a shape), so a long benchmark can run in parts. Each shape keeps the date and command of its last run.
 */
function mergePrevious(report: BenchReport, previous: BenchReport): void {
  if (previous.adapter !== report.adapter) return;
  const key = (s: BenchShape): string => `${s.shape.B}x${s.shape.N}x${s.shape.d}`;
  const merged = previous.shapes.map((old) => {
    const fresh = report.shapes.find((s) => key(s) === key(old));
    if (!fresh) return old;
    const cells = [...fresh.cells, ...old.cells.filter((c) => !fresh.cells.some((f) => f.id === c.id))].sort((a, b) => a.index - b.index);
    const torch = fresh.torch && 'ms' in fresh.torch ? fresh.torch : (old.torch ?? fresh.torch);
    const torchFp16 = fresh.torchFp16 && 'ms' in fresh.torchFp16 ? fresh.torchFp16 : (old.torchFp16 ?? fresh.torchFp16);
    return { ...fresh, cells, ...(torch ? { torch } : {}), ...(torchFp16 ? { torchFp16 } : {}) };
  });
  for (const s of report.shapes) if (!previous.shapes.some((p) => key(p) === key(s))) merged.push(s);
  report.shapes = merged;
}

export interface ShapeContext {
  rungs: readonly Rung[];
  env: RunEnv;
  repeats: number;
  budgetSeconds: number;
  rates: Map<string, number>;
  python: string;
  torchReason: string | undefined;
  torchDtypes: readonly TorchDtype[];
  command: string;
  info: (line: string) => void;
}

export async function benchShape(shape: Shape, ctx: ShapeContext): Promise<BenchShape> {
  const { env, info } = ctx;
  const flops = attentionFlops(shape);
  const name = `${shape.B}×${shape.N}×${shape.d}`;
  info(`${name}: ${(flops / 1e9).toPrecision(3)} GFLOP; generating input and sampled oracle rows`);
  const input = generateInput({ shape, seed: 1 });
  const rows = sampleRows(shape, SAMPLED_ROWS);
  const oracle = attentionOracleRows(input, shape, rows);
  /** Max abs error of the sampled rows of an output (given per row) against the oracle's. */
  const maxErrorOf = (rowValues: (ArrayLike<number> | undefined)[]): number => compareRows(shape, rows, rowValues, oracle).maxAbsError;
  const result: BenchShape = { shape, gflop: flops / 1e9, date: new Date().toISOString().slice(0, 10), command: ctx.command, cells: [] };

  if (env.gpu) {
    const floor = await prepareCopyFloor(env.gpu, shape);
    try {
      result.floorWallMs = (await measure(floor, input, shape, 1, ctx.repeats)).wallMs;
      info(`  copy floor: ${result.floorWallMs.toFixed(2)} ms wall`);
    } finally {
      await floor.dispose();
    }
  }

  if (ctx.torchReason === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'fa-bench-'));
    try {
      const path = join(dir, 'input.bin');
      await writeHw4Input(path, shape, input);
      for (const dtype of ['fp32', 'fp16'] as const) {
        const key = dtype === 'fp32' ? 'torch' : 'torchFp16';
        if (!ctx.torchDtypes.includes(dtype)) {
          if (dtype === 'fp32') result.torch = { reason: `not requested (--torch-dtype ${ctx.torchDtypes.join(',')})` };
          continue;
        }
        const torch = timeTorch(ctx.python, path, shape, rows, 1, ctx.repeats, dtype);
        if (typeof torch === 'string') result[key] = { reason: torch };
        else {
          result[key] = { ms: torch.ms, msMin: Math.min(...torch.times), msMax: Math.max(...torch.times), tflops: flops / torch.ms / 1e9, maxError: maxErrorOf(torch.sample), version: torch.version, device: torch.device };
          info(`  PyTorch ${torch.version} SDPA ${dtype}: ${torch.ms.toFixed(3)} ms`);
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  } else {
    result.torch = { reason: ctx.torchReason };
  }

  for (const rung of ctx.rungs) {
    const cell: BenchCell = { id: rung.id, index: rung.index, kind: rung.kind, ran: false, date: result.date, command: ctx.command };
    if (rung.reducedPrecision !== undefined) cell.reducedPrecision = rung.reducedPrecision;
    result.cells.push(cell);
    const allowed = canRun(rung, shape, env);
    if (allowed !== true) {
      cell.reason = allowed;
      cell.unsupported = true;
      continue;
    }
    try {
      const plan = await planRepeats(rung, shape, ctx);
      if (typeof plan === 'string') {
        cell.reason = plan;
        info(`  ${rung.id}: skipped, ${plan} (budget ${ctx.budgetSeconds} s)`);
        continue;
      }
      const runner = await rung.prepare(env, shape);
      try {
        // The first run is the check: a rung beyond the format's contract (DEFAULT_TOLERANCE) on the sampled rows is not
        // timed; a rung of reduced precision (f16 operands) is timed up to REDUCED_PRECISION_LIMIT, its error shown.
        const first = await measure(runner, input, shape, 0, 1);
        cell.maxError = maxErrorOf(outputRows(first.output, shape, rows));
        const limit = rung.reducedPrecision === undefined ? DEFAULT_TOLERANCE : REDUCED_PRECISION_LIMIT;
        if (!(cell.maxError <= limit)) {
          cell.reason = `wrong output: max error ${cell.maxError.toExponential(2)} on sampled rows, over ${limit}`;
          info(`  ${rung.id}: ${cell.reason}`);
          continue;
        }
        const basis = await withoutCompile(runner, input, shape, first, rung, ctx);
        const timing = await timeRung(runner, input, shape, basis, ctx);
        ctx.rates.set(rung.id, flops / basis.wallMs);
        Object.assign(cell, { ran: true, wallMs: basis.wallMs, ...timing, tflops: flops / timing.ms / 1e9 });
        const gpuMs = timing.timing === 'steady' ? timing.ms : basis.gpuMs;
        if (gpuMs !== undefined) cell.gpuMs = gpuMs;
        info(`  ${rung.id}: ${timing.ms.toFixed(3)} ms ${timing.timing === 'steady' ? 'GPU, steady' : basis.gpuMs === undefined ? 'wall' : 'GPU'} (${timing.repeats} runs), max error ${cell.maxError.toExponential(1)}`);
      } finally {
        await runner.dispose();
      }
    } catch (error) {
      cell.reason = `failed: ${(error as Error).message.split('\n')[0] ?? ''}`;
      info(`  ${rung.id}: ${cell.reason}`);
    }
  }

  return result;
}

/**
 * The run the timing starts from. A software adapter (lavapipe) may compile a kernel at its first dispatch, so a GPU
 * rung's check run there can take tens of seconds that no later run pays; where that run is over half the per-cell
 * budget (which would make it the only sample), the rung runs once more and that run counts instead.
 */
async function withoutCompile(runner: Runner, input: Float32Array, shape: Shape, first: Timing, rung: Rung, ctx: ShapeContext): Promise<Timing> {
  const coldMs = first.gpuMs ?? first.wallMs;
  if (rung.kind !== 'gpu' || ctx.env.gpu?.report.isFallbackAdapter !== true || coldMs <= (ctx.budgetSeconds * 1000) / 2) return first;
  return measure(runner, input, shape, 0, 1);
}

interface CellTiming {
  ms: number;
  msMin: number;
  msMax: number;
  repeats: number;
  timing: 'steady' | 'run';
}

/** Most warm-up kernels before a steady-state timing. */
const WARM_UP_MAX_RUNS = 2000;

/**
 * Times a checked runner. GPU runners whose whole input fits one run: back-to-back kernels after warm-up (about
 * warmUpMs(), 500 ms, of work in the same submission, so the GPU's clock governor has raised the SM clock: the H100
 * idles at 345 MHz against 1980, bench/warm-up.ts), timed again while the timings still get faster (settledTimings).
 * Otherwise whole runs (upload, kernel, readback), GPU
 * time when the runner reports it. Repeats stop at the per-cell budget; a first run over half of it is the only sample.
 */
async function timeRung(runner: Runner, input: Float32Array, shape: Shape, first: Timing, ctx: ShapeContext): Promise<CellTiming> {
  const budgetMs = ctx.budgetSeconds * 1000;
  const coldMs = first.gpuMs ?? first.wallMs;
  const affordable = Math.floor(budgetMs / Math.max(coldMs, 1e-3));
  const only = { ms: coldMs, msMin: coldMs, msMax: coldMs, repeats: 1 };
  if (affordable < 2) return { ...only, timing: 'run' };
  if (runner.timeKernel && shape.B <= runner.maxBatchesPerRun) {
    const repeats = Math.min(ctx.repeats, affordable - 1);
    const warmups = Math.min(WARM_UP_MAX_RUNS, Math.max(1, Math.ceil(warmUpMs() / Math.max(coldMs, 0.01))), Math.max(0, affordable - 1 - repeats));
    const timeKernel = runner.timeKernel.bind(runner, shape.B, warmups, repeats);
    // A software GPU has no clock to wait for; a real one is timed until its clock has settled.
    const samples = ctx.env.gpu?.report.isFallbackAdapter === true || warmUpMs() === 0 ? await timeKernel() : await settledTimings(timeKernel);
    if (samples) return { ms: median(samples), msMin: Math.min(...samples), msMax: Math.max(...samples), repeats: samples.length, timing: 'steady' };
  }
  const timing = await measure(runner, input, shape, 0, Math.min(ctx.repeats, affordable - 1));
  const samples = timing.gpuSamples ?? timing.wallSamples;
  return { ms: timing.gpuMs ?? timing.wallMs, msMin: Math.min(...samples), msMax: Math.max(...samples), repeats: timing.repeats, timing: 'run' };
}

/** Speedup of each rung over the rung below that ran, over naive, and its time relative to PyTorch's. */
function linkSpeedups(result: BenchShape): void {
  const ran = result.cells.filter((c) => c.ran && c.ms !== undefined);
  const naiveCell = ran.find((c) => c.id === 'naive');
  ran.forEach((c, k) => {
    const below = ran[k - 1];
    if (below?.ms !== undefined && c.ms !== undefined) {
      c.speedupOverBelow = below.ms / c.ms;
      c.belowId = below.id;
    }
    if (naiveCell?.ms !== undefined && c.ms !== undefined && c.index > naiveCell.index) c.speedupOverNaive = naiveCell.ms / c.ms;
    if (result.torch && 'ms' in result.torch && c.ms !== undefined) c.timeVsTorch = c.ms / result.torch.ms;
  });
}

/**
 * CPU rungs whose estimated time per run is over the budget are skipped (their rate barely depends on B). GPU rungs
 * always run once: their rate grows with the workgroups a shape launches, so an estimate from another shape misleads.
 */
async function planRepeats(rung: Rung, shape: Shape, ctx: ShapeContext): Promise<true | string> {
  if (rung.kind === 'gpu') return true;
  const rate = ctx.rates.get(rung.id) ?? (await calibrate(rung, shape, ctx));
  const estimateMs = attentionFlops(shape) / rate;
  return estimateMs > ctx.budgetSeconds * 1000 ? `est. ${(estimateMs / 1000).toFixed(0)} s per run` : true;
}

/** Flops per millisecond on a small slice of the shape (one batch, at most 256 rows), for the time estimate. */
async function calibrate(rung: Rung, shape: Shape, ctx: ShapeContext): Promise<number> {
  const small: Shape = { B: 1, N: Math.min(shape.N, 256), d: shape.d };
  const runner = await rung.prepare(ctx.env, small);
  try {
    const input = generateInput({ shape: small, seed: 2 });
    await runAll(runner, input, small);
    const start = performance.now();
    await runAll(runner, input, small);
    return attentionFlops(small) / Math.max(1e-3, performance.now() - start);
  } finally {
    await runner.dispose();
  }
}
