import { describe, expect, it } from 'vitest';
import { benchSvg } from '../src/bench/chart.js';
import { benchSvg as fromReport, type BenchCell, type BenchReport } from '../src/bench/report.js';

const cell = (id: string, index: number, tflops?: number): BenchCell =>
  tflops === undefined ? { id, index, kind: 'gpu', ran: false, reason: 'skipped: over budget' } : { id, index, kind: 'gpu', ran: true, tflops, ms: 1 };

const report: BenchReport = {
  date: '2026-11-22',
  adapter: 'test <gpu>',
  cpu: 'cpu',
  node: 'v20',
  command: 'hw4-cli bench',
  repeats: 5,
  budgetSeconds: 40,
  sampledRows: 16,
  shapes: [
    {
      shape: { B: 2, N: 256, d: 64 },
      date: '2026-11-22',
      command: 'hw4-cli bench',
      gflop: 0.0336,
      floorWallMs: 0.5,
      torch: { ms: 0.01, tflops: 3.36, maxError: 1e-6, version: '2', device: 'gpu' },
      // First appearance is not ladder order; the cpu cell was skipped.
      cells: [cell('fused-split-q', 7, 0.9), cell('naive', 4, 0.4), cell('cpu', 3), cell('fused', 5, 0.05)],
    },
    {
      shape: { B: 1, N: 1024, d: 32 },
      date: '2026-11-22',
      command: 'hw4-cli bench',
      gflop: 0.134,
      cells: [cell('cpu', 3, 0.002), cell('naive', 4, 0.5), cell('fused-split-q', 7, 1.2)],
    },
  ],
};

const svg = benchSvg(report);
const bars = (shape: number): { id: string; x: number }[] =>
  [...svg.matchAll(/<rect class="bar" data-shape="(\d+)" data-rung="([^"]+)" x="([\d.]+)"/g)]
    .filter((m) => Number(m[1]) === shape)
    .map((m) => ({ id: m[2] ?? '', x: Number(m[3]) }));

describe('bench chart', () => {
  it('is still reachable from report.ts', () => {
    expect(fromReport(report)).toBe(svg);
  });

  it('has an opaque background right after the svg element, so it reads on dark pages too', () => {
    const [, second] = svg.split('\n');
    expect(second).toMatch(/^<rect class="background" x="0" y="0" width="960" height="\d+" fill="#ffffff"\/>$/);
    expect(svg).toMatch(/<svg [^>]*fill="#222222"/);
  });

  it('draws the bars of each shape in ladder order, without empty slots for skipped cells', () => {
    expect(bars(0).map((b) => b.id)).toEqual(['naive', 'fused', 'fused-split-q']);
    expect(bars(1).map((b) => b.id)).toEqual(['cpu', 'naive', 'fused-split-q']);
    const xs = bars(0).map((b) => b.x);
    const steps = xs.slice(1).map((x, k) => x - (xs[k] ?? 0));
    expect(new Set(steps.map((s) => s.toFixed(1))).size).toBe(1);
    const legend = [...svg.matchAll(/<g class="legend">.*?<text[^>]*>([^<]+)<\/text><\/g>/g)].map((m) => m[1]);
    expect(legend).toEqual(['3 cpu', '4 naive', '5 fused', '7 fused-split-q', 'PyTorch fp32', 'copy floor']);
  });

  it('writes each bar\'s value as text, and draws PyTorch and the copy floor as reference lines', () => {
    const labels = [...svg.matchAll(/<text class="value"[^>]*>([^<]+)<\/text>/g)].map((m) => m[1]);
    expect(labels).toEqual(['0.40', '0.050', '0.90', '0.0020', '0.50', '1.2']);
    expect(svg).toMatch(/<line class="ref torch" data-shape="0"/);
    expect(svg).toMatch(/PyTorch 3\.4<\/text>/);
    // 0.0336 GFLOP in 0.5 ms: 0.0672 TFLOP/s.
    expect(svg).toMatch(/<line class="ref floor" data-shape="0"/);
    expect(svg).toMatch(/copy floor 0\.067<\/text>/);
    expect(svg).not.toMatch(/data-shape="1" x1/);
    expect(svg).toContain('test &lt;gpu&gt;');
  });
});
