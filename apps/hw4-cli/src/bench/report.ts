/**
 * The bench's results as JSON, markdown tables and an SVG chart. Every number in them comes from one bench run.
 */
import type { AdapterReport } from '@fa/core';
import type { Shape } from '@fa/io/node';
import { markdownTable } from '../table.js';

export { benchSvg } from './chart.js';

export interface BenchCell {
  id: string;
  /** When and by which command this cell was measured (a benchmark may run in parts). */
  date?: string;
  command?: string;
  index: number;
  kind: 'cpu' | 'gpu';
  /** The rung rounds its operands to f16: timed up to an error of 5e-2 instead of 5e-3. */
  reducedPrecision?: 'f16';
  ran: boolean;
  reason?: string;
  /** The rung cannot run this shape on this adapter (`reason` says why), as opposed to skipped for time or failed. */
  unsupported?: true;
  wallMs?: number;
  gpuMs?: number;
  /** GPU time when measured, else wall time: the median of the repeats. */
  ms?: number;
  /** The fastest and slowest repeat (same measure as `ms`). */
  msMin?: number;
  msMax?: number;
  /** How `ms` was measured: 'steady' = back-to-back kernels after warm-up; 'run' = whole runs (upload, kernel, readback). */
  timing?: 'steady' | 'run';
  tflops?: number;
  repeats?: number;
  maxError?: number;
  speedupOverBelow?: number;
  belowId?: string;
  speedupOverNaive?: number;
  /** Our time ÷ PyTorch's time (lower is better; 1 = as fast). */
  timeVsTorch?: number;
}

export type TorchCell = { ms: number; msMin?: number; msMax?: number; tflops: number; maxError: number; version: string; device: string } | { reason: string };

export interface BenchShape {
  shape: Shape;
  /** When and by which command this shape was measured. */
  date: string;
  command: string;
  gflop: number;
  floorWallMs?: number;
  /** PyTorch's SDPA in fp32 (the reference for `timeVsTorch`), and in fp16 when the bench was asked for it. */
  torch?: TorchCell;
  torchFp16?: TorchCell;
  cells: BenchCell[];
}

export interface BenchReport {
  date: string;
  adapter: string;
  adapterReport?: AdapterReport;
  cpu: string;
  node: string;
  command: string;
  repeats: number;
  budgetSeconds: number;
  sampledRows: number;
  shapes: BenchShape[];
}

const shapeName = (s: Shape): string => `${s.B}×${s.N}×${s.d}`;
const ms = (x: number): string => (x < 1 ? x.toFixed(3) : x < 100 ? x.toFixed(2) : x.toFixed(0));
const rate = (tflops: number): string => (tflops >= 1 ? `${tflops.toFixed(1)} TF` : `${(tflops * 1000).toPrecision(3)} GF`);
const times = (x: number): string => (x >= 100 ? `${x.toFixed(0)}×` : x >= 10 ? `${x.toFixed(1)}×` : `${x.toFixed(2)}×`);

/** One table row per PyTorch precision in the report (fp32 always, fp16 when some shape has it), `text` per shape. */
function torchRows(report: BenchReport, text: (cell: TorchCell | undefined) => string): string[][] {
  const rows = [['PyTorch SDPA fp32', ...report.shapes.map((s) => text(s.torch))]];
  if (report.shapes.some((s) => s.torchFp16 !== undefined)) rows.push(['PyTorch SDPA fp16', ...report.shapes.map((s) => text(s.torchFp16))]);
  return rows;
}

export function benchMarkdown(report: BenchReport): string {
  const header = ['rung', ...report.shapes.map((s) => shapeName(s.shape))];
  const rungIds = [...new Map(report.shapes.flatMap((s) => s.cells.map((c) => [c.id, c.index] as const))).entries()];
  const cell = (s: BenchShape, id: string): BenchCell | undefined => s.cells.find((c) => c.id === id);
  const skipped = (c: BenchCell | undefined): string => `— ${c?.reason ?? ''}`.trim();

  const timeRows = [
    ['copy floor (upload + readback, wall)', ...report.shapes.map((s) => (s.floorWallMs === undefined ? '—' : `${ms(s.floorWallMs)} ms`))],
    ...rungIds.map(([id, index]) => [
      `${index} \`${id}\``,
      ...report.shapes.map((s) => {
        const c = cell(s, id);
        if (!c?.ran || c.ms === undefined) return skipped(c);
        return `${ms(c.ms)} ms · ${rate(c.tflops ?? 0)}${c.gpuMs === undefined ? ' (wall)' : ''}`;
      }),
    ]),
    ...torchRows(report, (t) => (t && 'ms' in t ? `${ms(t.ms)} ms · ${rate(t.tflops)}` : `— ${t?.reason ?? ''}`)),
  ];
  const spread = (min: number | undefined, median: number | undefined, max: number | undefined): string =>
    median === undefined ? '—' : `${ms(min ?? median)} / ${ms(median)} / ${ms(max ?? median)}`;
  const spreadRows = [
    ...rungIds.map(([id, index]) => [
      `${index} \`${id}\``,
      ...report.shapes.map((s) => {
        const c = cell(s, id);
        return c?.ran ? `${spread(c.msMin, c.ms, c.msMax)}${c.repeats === undefined ? '' : ` (${c.repeats})`}` : '—';
      }),
    ]),
    ...torchRows(report, (t) => (t && 'ms' in t ? spread(t.msMin, t.ms, t.msMax) : '—')),
  ];
  const speedRows = rungIds.map(([id, index]) => [
    `${index} \`${id}\``,
    ...report.shapes.map((s) => {
      const c = cell(s, id);
      if (!c?.ran) return '—';
      const parts = [];
      if (c.speedupOverBelow !== undefined) parts.push(`${times(c.speedupOverBelow)} over ${c.belowId ?? 'below'}`);
      if (c.speedupOverNaive !== undefined && c.id !== 'naive' && c.belowId !== 'naive') parts.push(`${times(c.speedupOverNaive)} over naive`);
      if (c.timeVsTorch !== undefined) parts.push(`${times(c.timeVsTorch)} PyTorch's time`);
      return parts.join('; ') || '—';
    }),
  ]);
  const errorRows = [
    ...rungIds.map(([id, index]) => [
      `${index} \`${id}\``,
      ...report.shapes.map((s) => {
        const c = cell(s, id);
        return c?.ran && c.maxError !== undefined ? c.maxError.toExponential(1) : '—';
      }),
    ]),
    ...torchRows(report, (t) => (t && 'ms' in t ? t.maxError.toExponential(1) : '—')),
  ];
  return [
    `## ${report.adapter}, ${report.date}`,
    '',
    `Measured by ${runsOf(report).join(', ')}; Node ${report.node}, CPU ${report.cpu}.`,
    'Inputs: uniform in [-3, 3], seed 1. Each rung\'s output of a first run is checked against the float64 oracle on sampled',
    `rows before it is timed (a rung beyond 5e-3 is not timed${reducedNote(report)}). GPU rungs: median kernel time from timestamp queries over up`,
    'to 5 dispatches run back to back after warm-up dispatches (the GPU at its working clock, as PyTorch\'s CUDA-event timing',
    'measures it); CPU rungs and the copy floor (upload and readback, no math): median wall time of up to 5 runs after a',
    'warm-up. TF = TFLOP/s, GF = GFLOP/s, counted as 4·B·N²·d. A rung whose first run is longer than half the per-cell budget',
    `keeps that run as its only sample; a CPU rung whose estimated time per run is over the budget (${report.budgetSeconds} s) is`,
    'skipped, with the estimate shown.',
    ...(report.adapterReport?.isFallbackAdapter === true
      ? ['This software adapter compiles a kernel at its first dispatch: a GPU rung whose check run is over half the budget', 'runs once more, and that run counts instead.']
      : []),
    '',
    '### Time and throughput',
    '',
    markdownTable(header, timeRows),
    '',
    '### Spread of the repeats: min / median / max, ms',
    '',
    markdownTable(header, spreadRows),
    '',
    '### Speedups (time of the other ÷ time of this rung; for PyTorch, this rung\'s time ÷ PyTorch\'s)',
    '',
    markdownTable(header, speedRows),
    '',
    `### Max abs error against the float64 oracle on ${report.sampledRows} sampled rows`,
    '',
    markdownTable(header, errorRows),
    '',
  ].join('\n');
}

/** Where a rung of reduced precision (f16 operands) has cells: the looser limit it is timed under. */
function reducedNote(report: BenchReport): string {
  return report.shapes.some((s) => s.cells.some((c) => c.reducedPrecision !== undefined)) ? '; one with f16 operands, beyond 5e-2' : '';
}

/** Every command that measured part of the report, with its date, in first-seen order. */
function runsOf(report: BenchReport): string[] {
  const runs = report.shapes.flatMap((s) => [
    `\`${s.command}\` (${s.date})`,
    ...s.cells.filter((c) => c.command !== undefined).map((c) => `\`${c.command ?? ''}\` (${c.date ?? s.date})`),
  ]);
  return [...new Set(runs)];
}
