/**
 * hw4-cli sweep: the study's grid and its validation, the fitted slopes, the report's markdown and SVG, a CPU sweep
 * end to end, and (on the software GPU in CI) a GPU rung swept over N.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fitSlope, segmentSlopes, seriesOf, sweepMarkdown, sweepShape, sweepSvg, type SweepReport } from '../src/bench/sweep-report.js';
import { baseOf, studyOf, valuesOf } from '../src/commands/sweep.js';
import { checkTileRungs, gridOf, rungGrid, tilesShapeOf } from '../src/commands/sweep-tiles.js';
import { COMPUTE_UNITS, computeUnitFor, occupancy, tilesMarkdown, tilesSvg, type TilesReport } from '../src/bench/tiles-report.js';
import { LADDER } from '@fa/ladder';
import type { GpuContext, Rung, RunEnv } from '@fa/core';
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
    expect(() => studyOf(undefined)).toThrow(/sweep needs --over n, --over batch, --over d .* or --over tiles/);
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
      [['sweep', '--over', 'n', '--grid', 'BR=16'], /--grid sets tile sizes: use it with --over tiles/],
      [['sweep', '--over', 'tiles', '--impl', 'naive'], /naive has no tunable tile sizes; give --impl from .*fused-split-q/],
      [['sweep', '--over', 'tiles', '--values', '1,2'], /--over tiles takes --grid/],
      [['sweep', '--over', 'tiles', '--impl', 'lean-loop', '--grid', 'BR=16'], /lean-loop has no axis BR; its axes are WG and BC/],
      [['sweep', '--over', 'tiles', '--grid', 'BR=0'], /--grid BR=0: give AXIS=V,V,/],
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

function rung(id: string): Rung {
  return LADDER.find((r) => r.id === id) as Rung;
}
/** An H100's limits, enough for the plans (no device: footprints and plans only). */
const H100_ENV: RunEnv = {
  threads: 1,
  gpu: { report: { vendor: 'nvidia', architecture: 'hopper', subgroupMinSize: 32, limits: { maxComputeWorkgroupStorageSize: 49152, maxComputeInvocationsPerWorkgroup: 1024 } } } as unknown as GpuContext,
};

describe('the tile study', () => {
  it('parses --grid against the rungs\' axes and adds the plan\'s own sizes to the grid', () => {
    const rungs = [rung('fused-split-q'), rung('q-registers')];
    expect(gridOf('BR=32,16,16; BC=8', rungs)).toEqual({ BR: [16, 32], BC: [8] });
    expect(() => gridOf('WG=64', rungs)).toThrow(/fused-split-q has no axis WG; its axes are BR and BC/);
    expect(() => gridOf('BR=1.5', rungs)).toThrow(/positive integers/);
    expect(() => {
      checkTileRungs([rung('naive')]);
    }).toThrow(/naive has no tunable tile sizes/);
    expect(tilesShapeOf(undefined)).toEqual({ B: 16, N: 4096, d: 64 });
    expect(tilesShapeOf('2,100,32')).toEqual({ B: 2, N: 100, d: 32 });
    expect(rungGrid(rung('fused-split-q'), { BR: [16, 64] }, { BR: 40, BC: 40 })).toEqual({ rows: [16, 40, 64], columns: [8, 16, 32, 40, 64, 128] });
  });

  it('gives each pair of sizes the workgroup memory its kernel declares, or why it cannot run', () => {
    const shape = { B: 16, N: 4096, d: 64 };
    const tiles = rung('fused-split-q').tiles;
    // The plan: the largest square tiles that fit 48 KiB (1040·T + 4·T² bytes), balanced over N.
    expect(tiles?.planned(shape, H100_ENV)).toEqual({ BR: 40, BC: 40 });
    // K_j, V_j (2·32·64·4), Q_i, O_i (2·32·64·4), S (32·32·4) and four rows of 32 floats.
    expect(tiles?.footprint(shape, H100_ENV, { BR: 32, BC: 32 })).toMatchObject({ workgroupBytes: 37376, invocations: 128, workgroupsPerBatch: 128 });
    expect(tiles?.footprint(shape, H100_ENV, { BR: 64, BC: 32 })).toMatch(/needs 57.0 KiB of workgroup memory, over this GPU's 48.0 KiB/);
    expect(tiles?.footprint(shape, H100_ENV, { BR: 256, BC: 8 })).toMatch(/1 ≤ Br ≤ 128/);
    expect(rung('q-registers').tiles?.footprint(shape, H100_ENV, { BR: 64, BC: 128 })).toMatch(/1 ≤ Bc ≤ 64/);
    expect(rung('q-registers').tiles?.footprint(shape, H100_ENV, { BR: 2048, BC: 8 })).toMatch(/2048 invocations per workgroup, over this GPU's 1024/);
    // lean-loop at d = 64: H = 2, so WG = 128 gives Br = 128 rows and 32 row blocks a batch, 512 in all, short of the
    // plan's 640 workgroups: the keys are split in two. Bc must be a multiple of 16.
    expect(rung('lean-loop').tiles?.footprint(shape, H100_ENV, { WG: 128, BC: 32 })).toMatchObject({ invocations: 128, workgroupsPerBatch: 64 });
    expect(rung('lean-loop').tiles?.footprint(shape, H100_ENV, { WG: 128, BC: 24 })).toMatch(/not a multiple of 16/);
    expect(rung('lean-loop').tiles?.withTiles({ WG: 64, BC: 16 }).id).toBe('lean-loop');
  });

  it('counts the workgroups a compute unit holds by memory, invocations and its own limit', () => {
    const sm = COMPUTE_UNITS.hopper;
    // 48 KiB per SM as Dawn runs it: one workgroup of 37,376 bytes, two of 23,520 (the resident-workgroups counts).
    expect(occupancy({ workgroupBytes: 37376, invocations: 128 }, sm)).toEqual({ perUnit: 1, limitedBy: 'memory' });
    expect(occupancy({ workgroupBytes: 23520, invocations: 128 }, sm)).toEqual({ perUnit: 2, limitedBy: 'memory' });
    expect(occupancy({ workgroupBytes: 4096, invocations: 256 }, sm)).toEqual({ perUnit: 8, limitedBy: 'invocations' });
    expect(occupancy({ workgroupBytes: 1024, invocations: 32 }, sm)).toEqual({ perUnit: 32, limitedBy: 'workgroups' });
    expect(computeUnitFor({ vendor: 'nvidia', architecture: '', device: 'NVIDIA H100 80GB HBM3' })).toBe(sm);
    expect(computeUnitFor({ vendor: 'nvidia', architecture: '', device: 'NVIDIA H100 PCIe' }).units).toBe(114);
    expect(computeUnitFor({ vendor: 'mesa', architecture: '', device: 'llvmpipe' })).toBe(COMPUTE_UNITS.unknown);
  });

  it('draws a grid per rung in markdown and a heat map per rung in the SVG, the plan and the fastest marked', () => {
    const footprint = { workgroupBytes: 8192, invocations: 128, workgroupsPerBatch: 64, summary: '' };
    const cell = (BR: number, BC: number, ms?: number) => ({ sizes: { BR, BC }, ...(ms === undefined ? { reason: 'needs 57 KiB' } : { ms, footprint, occupancy: { perUnit: 4, limitedBy: 'memory' as const }, waves: 2 }) });
    const report: TilesReport = {
      date: '2026-11-25',
      adapter: 'test adapter',
      command: 'hw4-cli sweep --over tiles',
      study: 'tiles',
      shape: { B: 16, N: 4096, d: 64 },
      computeUnit: COMPUTE_UNITS.hopper,
      rungs: [{ id: 'fused-split-q', axes: rung('fused-split-q').tiles?.axes as never, rows: [16, 32], columns: [16, 32], planned: { BR: 32, BC: 32 }, cells: [cell(16, 16, 2), cell(16, 32, 1.5), cell(32, 16, 1), cell(32, 32)] }],
    };
    const markdown = tilesMarkdown(report);
    expect(markdown).toMatch(/\| BR \\ BC \| 16 \| 32 \|/);
    expect(markdown).toContain('| 32 | **1.00 ms**<br>8.0 KiB · 128 inv · 4/CU (memory) · 2 waves | — needs 57 KiB |');
    expect(markdown).toMatch(/Fastest: BR = 32, BC = 16, 1.00 ms. The plan chooses BR = 32, BC = 32./);
    const svg = tilesSvg(report);
    expect(svg.match(/<g data-rung="fused-split-q">/g)).toHaveLength(1);
    expect(svg.match(/data-cell="/g)).toHaveLength(4);
    expect(svg).toMatch(/data-cell="32,32"[^>]*stroke-width="3"/);
    expect(svg).toContain('1.00 ms ★');
    expect(svg).toContain('cannot run');
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

describe.skipIf(!leanLoopHere)(`hw4-cli sweep on the GPU${leanLoopHere ? '' : ' (skipped: lean-loop cannot run here, see hw4-cli --list)'}`, () => {
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

  it('sweeps a rung\'s tile sizes, each pair checked against the oracle, with the plan\'s own pair added', () => {
    const out = join(dir, 'tiles');
    const run = cli(['sweep', '--over', 'tiles', '--impl', 'fused-split-q', '--base', '1,64,16', '--grid', 'BR=16;BC=16', '--repeats', '2', '--out', out, '-q']);
    expect(run.code, run.stderr).toBe(0);
    const file = readdirSync(out).find((f) => f.endsWith('-tiles.json')) as string;
    const json = JSON.parse(readFileSync(join(out, file), 'utf8')) as TilesReport;
    const study = json.rungs[0];
    // The plan's largest square tiles: 32 on lavapipe (32 KiB of workgroup memory), 64 on a GPU with 48 KiB.
    const T = study?.planned?.BR as number;
    expect(study?.planned).toEqual({ BR: T, BC: T });
    expect([study?.rows, study?.columns]).toEqual([[16, T], [16, T]]);
    expect(study?.cells.map((c) => c.ms !== undefined && (c.maxError ?? 1) < 1e-5)).toEqual([true, true, true, true]);
    expect(readdirSync(out).filter((f) => f.includes('-tiles.')).sort().map((f) => f.replace(/^.*-tiles/, ''))).toEqual(['.json', '.md', '.svg']);
  }, 600_000);
});
