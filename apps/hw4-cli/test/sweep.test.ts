/**
 * hw4-cli sweep: the study's grid and its validation, the fitted slopes, the report's markdown and SVG, a CPU sweep
 * end to end, and (on the software GPU in CI) a GPU rung swept over N.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fitSlope, segmentSlopes, seriesOf, sweepMarkdown, sweepShape, sweepSvg, type SweepReport } from '../src/bench/sweep-report.js';
import { baseOf, studyOf, valuesOf } from '../src/commands/sweep.js';
import { cli, ownLines, tempFolder } from './cli-helpers.js';

const dir = tempFolder();
const NO_GPU = { FA_GPU: 'off' };

describe('the sweep grid', () => {
  it('varies one dimension of a base shape and validates what it is given', () => {
    expect(sweepShape('n', { B: 4, N: 0, d: 64 }, 1000)).toEqual({ B: 4, N: 1000, d: 64 });
    expect(sweepShape('batch', { B: 0, N: 1024, d: 64 }, 32)).toEqual({ B: 32, N: 1024, d: 64 });
    expect(sweepShape('d', { B: 4, N: 4096, d: 0 }, 80)).toEqual({ B: 4, N: 4096, d: 80 });
    expect(valuesOf('512,64,64,128', 'n')).toEqual([64, 128, 512]);
    expect(valuesOf(undefined, 'd')).toEqual([16, 32, 48, 64, 80, 96, 112, 128]);
    expect(baseOf('2,*,32', 'n')).toEqual({ B: 2, N: 0, d: 32 });
    expect(() => studyOf(undefined)).toThrow(/sweep needs --over n, --over batch or --over d/);
    expect(() => valuesOf('64', 'n')).toThrow(/at least two different values/);
    expect(() => valuesOf('16,18', 'd')).toThrow(/multiple of 4/);
    expect(() => valuesOf('0,8', 'batch')).toThrow(/positive integers/);
  });

  it('refuses bad arguments with one line and exit 2', () => {
    for (const [args, message] of [
      [['sweep'], /sweep needs --over/],
      [['sweep', '--over', 'length'], /--over length: give n/],
      [['sweep', '--over', 'n', '--values', '64'], /at least two different values/],
      [['sweep', '--over', 'n', '--impl', 'nope'], /unknown rung "nope"/],
    ] as const) {
      const run = cli([...args], NO_GPU);
      expect(run.code, run.stderr).toBe(2);
      expect(ownLines(run.stderr)).toHaveLength(1);
      expect(run.stderr).toMatch(message);
    }
  });
});

describe('the sweep report', () => {
  // Times of a rung that is flat up to N = 256 and quadratic after it, and PyTorch linear throughout.
  const values = [64, 128, 256, 512, 1024];
  const report: SweepReport = {
    date: '2026-11-24',
    adapter: 'test adapter',
    command: 'hw4-cli sweep --over n',
    study: 'n',
    base: { B: 4, N: 0, d: 64 },
    values,
    shapes: values.map((N) => ({
      shape: { B: 4, N, d: 64 },
      date: '2026-11-24',
      command: '',
      gflop: 1,
      torch: { ms: N / 64 } as never,
      cells: [{ id: 'lean-loop', index: 20, kind: 'gpu', ran: true, ms: N <= 256 ? 1 : (N / 256) ** 2 }],
    })),
  };

  it('fits the slope of log(time) over log(value), per half of the values', () => {
    expect(fitSlope([[1, 3], [2, 12], [4, 48]])).toBeCloseTo(2, 10);
    expect(fitSlope([[5, 1]])).toBeUndefined();
    const [lower, upper] = segmentSlopes((seriesOf(report)[0] as { points: [number, number][] }).points);
    expect(lower?.slope).toBeCloseTo(0, 10);
    expect(upper).toMatchObject({ from: 256, to: 1024 });
    expect(upper?.slope).toBeCloseTo(2, 10);
    expect(segmentSlopes((seriesOf(report)[1] as { points: [number, number][] }).points).map((g) => g.slope.toFixed(3))).toEqual(['1.000', '1.000']);
  });

  it('writes a table with the slopes, and a chart with a line and points per series', () => {
    const markdown = sweepMarkdown(report);
    expect(markdown).toMatch(/\| N \| lean-loop \| PyTorch fp32 \|/);
    expect(markdown).toMatch(/\| lean-loop \| 0\.00 \(N 64-256\), 2\.00 \(N 256-1024\) \|/);
    const svg = sweepSvg(report);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('<rect width="760" height="440" fill="#ffffff"/>'); // its own background: light and dark pages
    expect(svg.match(/<polyline data-series="([^"]+)"/g)).toEqual(['<polyline data-series="lean-loop"', '<polyline data-series="PyTorch fp32"']);
    expect(svg.match(/<circle /g)).toHaveLength(10);
    expect(svg).toContain('slope 0.00 → 2.00');
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
  });
});

describe('hw4-cli sweep, end to end', () => {
  it('sweeps CPU rungs over N, checked and timed, and writes the JSON, markdown and chart', () => {
    const out = join(dir, 'cpu');
    const run = cli(['sweep', '--over', 'n', '--values', '16,32,48', '--base', '1,*,8', '--impl', 'seq-attention', '--no-torch', '--out', out, '-q'], NO_GPU);
    expect(run.code, run.stderr).toBe(0);
    const files = readdirSync(out).sort();
    expect(files.map((f) => f.replace(/^.*-n\./, 'n.'))).toEqual(['n.json', 'n.md', 'n.svg']);
    const json = JSON.parse(readFileSync(join(out, files[0] as string), 'utf8')) as SweepReport;
    expect(json.values).toEqual([16, 32, 48]);
    expect(json.shapes.map((s) => s.cells.find((c) => c.id === 'seq-attention')?.ran)).toEqual([true, true, true]);
    expect(run.stdout).toMatch(/\| 48 \| [0-9.]+ \|/);
  });
});

const listing = JSON.parse(cli(['--list', '--json']).stdout) as { rungs: { id: string; available: boolean }[] };
const leanLoopHere = listing.rungs.find((r) => r.id === 'lean-loop')?.available === true;

describe.skipIf(!leanLoopHere)('hw4-cli sweep on the GPU', () => {
  it('sweeps a GPU rung over N, each point checked against the oracle', () => {
    const out = join(dir, 'gpu');
    const run = cli(['sweep', '--over', 'n', '--values', '40,80', '--base', '2,*,16', '--impl', 'lean-loop', '--no-torch', '--repeats', '2', '--out', out, '-q']);
    expect(run.code, run.stderr).toBe(0);
    const file = readdirSync(out).find((f) => f.endsWith('.json')) as string;
    const json = JSON.parse(readFileSync(join(out, file), 'utf8')) as SweepReport;
    const cells = json.shapes.map((s) => s.cells.find((c) => c.id === 'lean-loop'));
    expect(cells.map((c) => c?.ran)).toEqual([true, true]);
    expect(cells.every((c) => (c?.maxError ?? 1) < 1e-5)).toBe(true);
  }, 600_000);
});
