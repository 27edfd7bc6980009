/**
 * The bench's results as JSON, markdown tables and an SVG chart. Every number in them comes from one bench run.
 */
import type { AdapterReport } from '@fa/core';
import type { Shape } from '@fa/io';
import { markdownTable } from '../table.js';

export interface BenchCell {
  id: string;
  /** When and by which command this cell was measured (a benchmark may run in parts). */
  date?: string;
  command?: string;
  index: number;
  kind: 'cpu' | 'gpu';
  ran: boolean;
  reason?: string;
  wallMs?: number;
  gpuMs?: number;
  /** GPU time when measured, else wall time. */
  ms?: number;
  tflops?: number;
  repeats?: number;
  maxError?: number;
  speedupOverBelow?: number;
  belowId?: string;
  speedupOverNaive?: number;
  /** Our time ÷ PyTorch's time (lower is better; 1 = as fast). */
  timeVsTorch?: number;
}

export interface BenchShape {
  shape: Shape;
  /** When and by which command this shape was measured. */
  date: string;
  command: string;
  gflop: number;
  floorWallMs?: number;
  torch?: { ms: number; tflops: number; maxError: number; version: string; device: string } | { reason: string };
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
    [
      'PyTorch SDPA fp32',
      ...report.shapes.map((s) => (s.torch && 'ms' in s.torch ? `${ms(s.torch.ms)} ms · ${rate(s.torch.tflops)}` : `— ${s.torch?.reason ?? ''}`)),
    ],
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
    ['PyTorch SDPA fp32', ...report.shapes.map((s) => (s.torch && 'ms' in s.torch ? s.torch.maxError.toExponential(1) : '—'))],
  ];
  return [
    `## ${report.adapter}, ${report.date}`,
    '',
    `Measured by ${runsOf(report).join(', ')}; Node ${report.node}, CPU ${report.cpu}.`,
    'Inputs: uniform in [-3, 3], seed 1. Times are medians of up to 5 runs after a warm-up run: GPU kernel time from timestamp',
    'queries for GPU rungs, wall time for CPU rungs and for the copy floor (upload and readback, no math). TF = TFLOP/s,',
    'GF = GFLOP/s, counted as 4·B·N²·d. A run longer than half the per-cell budget is its own only sample; a CPU rung whose',
    `estimated time per run is over the budget (${report.budgetSeconds} s) is skipped, with the estimate shown.`,
    '',
    '### Time and throughput',
    '',
    markdownTable(header, timeRows),
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

/** Every command that measured part of the report, with its date, in first-seen order. */
function runsOf(report: BenchReport): string[] {
  const runs = report.shapes.flatMap((s) => [
    `\`${s.command}\` (${s.date})`,
    ...s.cells.filter((c) => c.command !== undefined).map((c) => `\`${c.command ?? ''}\` (${c.date ?? s.date})`),
  ]);
  return [...new Set(runs)];
}

const PALETTE = ['#8c564b', '#e377c2', '#7f7f7f', '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#17becf', '#bcbd22'];

/** Grouped bars of TFLOP/s (log scale) per shape, one bar per rung that ran and one for PyTorch. */
export function benchSvg(report: BenchReport): string {
  const series = [...new Set(report.shapes.flatMap((s) => s.cells.filter((c) => c.ran && c.tflops !== undefined).map((c) => c.id)))];
  const hasTorch = report.shapes.some((s) => s.torch && 'ms' in s.torch);
  if (hasTorch) series.push('PyTorch fp32');
  const value = (s: BenchShape, id: string): number | undefined => {
    if (id === 'PyTorch fp32') return s.torch && 'ms' in s.torch ? s.torch.tflops : undefined;
    const c = s.cells.find((x) => x.id === id);
    return c?.ran ? c.tflops : undefined;
  };
  const values = report.shapes.flatMap((s) => series.map((id) => value(s, id))).filter((v): v is number => v !== undefined && v > 0);
  const lo = Math.pow(10, Math.floor(Math.log10(Math.min(...values, 1))));
  const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(...values, 1))));
  const width = 960;
  const height = 420;
  const left = 60;
  const bottom = 360;
  const top = 40;
  const groupWidth = (width - left - 20) / Math.max(1, report.shapes.length);
  const barWidth = Math.max(2, (groupWidth - 16) / Math.max(1, series.length));
  const y = (v: number): number => bottom - ((Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (bottom - top);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height + 20 * Math.ceil(series.length / 4)}" font-family="sans-serif" font-size="12">`,
    `<text x="${left}" y="20" font-size="14">TFLOP/s (log scale), ${escapeXml(report.adapter)}, ${report.date}</text>`,
  ];
  for (let e = Math.log10(lo); e <= Math.log10(hi); e++) {
    const v = Math.pow(10, e);
    parts.push(`<line x1="${left}" x2="${width - 20}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
    parts.push(`<text x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${v >= 1 ? v.toFixed(0) : v.toPrecision(1)}</text>`);
  }
  report.shapes.forEach((s, g) => {
    const x0 = left + g * groupWidth + 8;
    series.forEach((id, k) => {
      const v = value(s, id);
      if (v === undefined || v <= 0) return;
      const x = x0 + k * barWidth;
      parts.push(`<rect x="${x.toFixed(1)}" y="${y(v).toFixed(1)}" width="${(barWidth - 1).toFixed(1)}" height="${(bottom - y(v)).toFixed(1)}" fill="${PALETTE[k % PALETTE.length] ?? '#333'}"><title>${escapeXml(id)}: ${v.toFixed(3)} TFLOP/s</title></rect>`);
    });
    parts.push(`<text x="${(x0 + (groupWidth - 16) / 2).toFixed(1)}" y="${bottom + 16}" text-anchor="middle">${shapeName(s.shape)}</text>`);
  });
  series.forEach((id, k) => {
    const lx = left + (k % 4) * 220;
    const ly = bottom + 40 + Math.floor(k / 4) * 20;
    parts.push(`<rect x="${lx}" y="${ly - 10}" width="12" height="12" fill="${PALETTE[k % PALETTE.length] ?? '#333'}"/><text x="${lx + 16}" y="${ly}">${escapeXml(id)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
