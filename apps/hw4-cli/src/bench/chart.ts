/**
 * The bench chart: TFLOP/s per shape on a log scale, one bar per rung that ran (in ladder order, no gaps for the
 * skipped), each bar's value written above it, and two reference lines per shape: PyTorch's fp32 SDPA, and the copy
 * floor (the rate a run would reach if it took only the time of uploading the input and reading the output back).
 * Drawn on its own white background, so it reads the same on light and dark pages.
 */
import type { Shape } from '@fa/io/node';
import type { BenchReport, BenchShape } from './report.js';

/** Colors that stay distinct on white, by position in the series (the ladder order). */
const PALETTE = ['#8c564b', '#e377c2', '#7f7f7f', '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#17becf', '#bcbd22', '#393b79', '#637939', '#843c39', '#7b4173', '#3182bd'];
const TEXT = '#222222';
const GRID = '#dddddd';
const TORCH = '#d62728';
const FLOOR = '#555555';

interface Bar {
  id: string;
  index: number;
  tflops: number;
}

const shapeName = (s: Shape): string => `${s.B}×${s.N}×${s.d}`;

/** TFLOP/s as a short label: 2 significant digits below 10, whole numbers above. */
export function formatRate(tflops: number): string {
  return tflops >= 10 ? tflops.toFixed(0) : tflops >= 0.001 ? tflops.toPrecision(2) : tflops.toExponential(0);
}

/** The rungs that ran on a shape, in ladder order. */
function barsOf(shape: BenchShape): Bar[] {
  return shape.cells
    .filter((c) => c.ran && c.tflops !== undefined && c.tflops > 0)
    .map((c) => ({ id: c.id, index: c.index, tflops: c.tflops ?? 0 }))
    .sort((a, b) => a.index - b.index);
}

function torchRate(shape: BenchShape): number | undefined {
  return shape.torch && 'ms' in shape.torch ? shape.torch.tflops : undefined;
}

/** GFLOP ÷ ms = TFLOP/s: the rate of a run that took only the copy floor's time. */
function floorRate(shape: BenchShape): number | undefined {
  return shape.floorWallMs === undefined || shape.floorWallMs <= 0 ? undefined : shape.gflop / shape.floorWallMs;
}

export function benchSvg(report: BenchReport): string {
  const groups = report.shapes.map((s) => ({ shape: s, bars: barsOf(s), torch: torchRate(s), floor: floorRate(s) }));
  // Every rung that ran anywhere, in ladder order: one color each, the same in every group.
  const series = [...new Map(groups.flatMap((g) => g.bars.map((b) => [b.id, b.index] as const))).entries()].sort((a, b) => a[1] - b[1]);
  const color = new Map(series.map(([id], k) => [id, PALETTE[k % PALETTE.length] ?? TEXT]));
  const values = groups.flatMap((g) => [...g.bars.map((b) => b.tflops), g.torch, g.floor]).filter((v): v is number => v !== undefined && v > 0);
  const lo = Math.pow(10, Math.floor(Math.log10(Math.min(...values, 1))));
  const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(...values, 1)) + 0.15));

  const width = 960;
  const left = 64;
  const right = 20;
  const top = 56;
  const bottom = 380;
  const legendRows = Math.ceil((series.length + 2) / 4);
  const height = bottom + 44 + legendRows * 20 + 28;
  const groupWidth = (width - left - right) / Math.max(1, groups.length);
  const maxBars = Math.max(1, ...groups.map((g) => g.bars.length));
  const barWidth = Math.min(36, (groupWidth - 24) / maxBars);
  const y = (v: number): number => bottom - ((Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * (bottom - top);
  const f = (x: number): string => x.toFixed(1);

  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12" fill="${TEXT}">`,
    `<rect class="background" x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${left}" y="22" font-size="15" font-weight="bold">TFLOP/s (log scale, higher is better), ${escapeXml(report.adapter)}, ${escapeXml(report.date)}</text>`,
    `<text x="${left}" y="40" font-size="11">bars: rungs in ladder order (kernel time); dashed: PyTorch fp32 SDPA; dotted: copy floor (upload + readback only)</text>`,
  ];
  for (let e = Math.log10(lo); e <= Math.log10(hi) + 1e-9; e++) {
    const v = Math.pow(10, e);
    parts.push(`<line x1="${left}" x2="${width - right}" y1="${f(y(v))}" y2="${f(y(v))}" stroke="${GRID}"/>`);
    parts.push(`<text x="${left - 6}" y="${f(y(v) + 4)}" text-anchor="end">${v >= 1 ? v.toFixed(0) : v.toPrecision(1)}</text>`);
  }
  groups.forEach((g, k) => {
    const x0 = left + k * groupWidth;
    const start = x0 + (groupWidth - g.bars.length * barWidth) / 2;
    g.bars.forEach((bar, j) => {
      const x = start + j * barWidth;
      const top = y(bar.tflops);
      parts.push(
        `<rect class="bar" data-shape="${k}" data-rung="${escapeXml(bar.id)}" x="${f(x)}" y="${f(top)}" width="${f(barWidth - 2)}" height="${f(bottom - top)}" fill="${color.get(bar.id) ?? TEXT}"><title>${bar.index} ${escapeXml(bar.id)}: ${formatRate(bar.tflops)} TFLOP/s</title></rect>`,
      );
      const cx = x + (barWidth - 2) / 2;
      parts.push(`<text class="value" font-size="10" text-anchor="start" transform="translate(${f(cx + 3)} ${f(top - 3)}) rotate(-90)">${formatRate(bar.tflops)}</text>`);
    });
    const reference = (kind: 'torch' | 'floor', value: number | undefined, label: string, stroke: string, dash: string): void => {
      if (value === undefined || value <= 0) return;
      parts.push(`<line class="ref ${kind}" data-shape="${k}" x1="${f(x0 + 6)}" x2="${f(x0 + groupWidth - 6)}" y1="${f(y(value))}" y2="${f(y(value))}" stroke="${stroke}" stroke-width="2" stroke-dasharray="${dash}"/>`);
      parts.push(`<text class="ref-label" x="${f(x0 + groupWidth - 8)}" y="${f(y(value) - 4)}" font-size="10" text-anchor="end" fill="${stroke}">${label} ${formatRate(value)}</text>`);
    };
    reference('torch', g.torch, 'PyTorch', TORCH, '8 4');
    reference('floor', g.floor, 'copy floor', FLOOR, '2 3');
    parts.push(`<text x="${f(x0 + groupWidth / 2)}" y="${bottom + 18}" text-anchor="middle">${shapeName(g.shape.shape)}</text>`);
    if (g.bars.length === 0) parts.push(`<text x="${f(x0 + groupWidth / 2)}" y="${bottom - 8}" text-anchor="middle" font-size="10">no rung ran</text>`);
  });
  parts.push(`<line x1="${left}" x2="${width - right}" y1="${bottom}" y2="${bottom}" stroke="${TEXT}"/>`);
  const legend: [string, string, string][] = [
    ...series.map(([id, index]): [string, string, string] => [`${index} ${id}`, color.get(id) ?? TEXT, 'bar']),
    ['PyTorch fp32', TORCH, 'torch'],
    ['copy floor', FLOOR, 'floor'],
  ];
  legend.forEach(([label, fill, kind], k) => {
    const lx = left + (k % 4) * 220;
    const ly = bottom + 50 + Math.floor(k / 4) * 20;
    const mark =
      kind === 'bar'
        ? `<rect x="${lx}" y="${ly - 10}" width="12" height="12" fill="${fill}"/>`
        : `<line x1="${lx}" x2="${lx + 14}" y1="${ly - 4}" y2="${ly - 4}" stroke="${fill}" stroke-width="2" stroke-dasharray="${kind === 'torch' ? '8 4' : '2 3'}"/>`;
    parts.push(`<g class="legend">${mark}<text x="${lx + 18}" y="${ly}">${escapeXml(label)}</text></g>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
