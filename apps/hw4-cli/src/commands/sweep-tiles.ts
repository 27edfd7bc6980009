/**
 * hw4-cli sweep --over tiles: the tile study. Each chosen rung that exposes tunable tile sizes (`RungDefinition.tiles`)
 * runs its kernel at every pair of values of its two axes on one shape, plus its own plan's pair; each pair is checked
 * against the float64 oracle on sampled rows before it is timed (the bench's `benchShape`). Beside each time: the
 * workgroup memory and invocations of that pair, and how many such workgroups a compute unit holds (tiles-report.ts).
 * Writes <adapter>-tiles.json, .md (a grid per rung) and .svg (heat maps).
 */
import type { Rung, RunEnv } from '@fa/core';
import { parseShape, type Shape } from '@fa/io/node';
import { LADDER } from '@fa/ladder';
import type { BenchCell } from '../bench/report.js';
import { computeUnitFor, occupancy, type TileCell, type TileRungReport } from '../bench/tiles-report.js';
import { UsageError } from '../exit-codes.js';
import { benchShape, type ShapeContext } from './bench.js';

/** The shape and rungs the study runs without --base and --impl: a shape with enough workgroups to fill an H100. */
export const TILES_DEFAULT_SHAPE: Shape = { B: 16, N: 4096, d: 64 };
export const TILES_RUNGS = 'fused-split-q,q-registers,lean-loop';

/** The rungs the tile study can run: those whose plan exposes tile sizes. */
export const tileRungIds = (): string[] => LADDER.filter((rung) => rung.tiles !== undefined).map((rung) => rung.id);

/** Each rung has tile axes, or a one-line UsageError naming the rungs that do. */
export function checkTileRungs(rungs: readonly Rung[]): void {
  const without = rungs.filter((rung) => rung.tiles === undefined).map((rung) => rung.id);
  if (without.length > 0) throw new UsageError(`--over tiles: ${without.join(', ')} ${without.length > 1 ? 'have' : 'has'} no tunable tile sizes; give --impl from ${tileRungIds().join(', ')}`);
}

/**
 * --grid "BR=16,32;BC=8,16": values for some axes (by name), each a list of positive integers. Every named axis must
 * be an axis of every chosen rung.
 */
export function gridOf(text: string | undefined, rungs: readonly Rung[]): Record<string, number[]> {
  if (text === undefined) return {};
  const grid: Record<string, number[]> = {};
  for (const part of text.split(';').map((p) => p.trim()).filter((p) => p.length > 0)) {
    const match = /^(\w+)\s*=\s*(.+)$/.exec(part);
    const values = match ? (match[2] as string).split(',').map((v) => Number(v.trim())) : [];
    if (!match || values.some((v) => !Number.isSafeInteger(v) || v < 1)) throw new UsageError(`--grid ${text}: give AXIS=V,V,... separated by ';', values positive integers (e.g. "BR=16,32;BC=8,16")`);
    const name = match[1] as string;
    const lacking = rungs.find((rung) => !rung.tiles?.axes.some((axis) => axis.name === name));
    if (lacking) throw new UsageError(`--grid ${text}: ${lacking.id} has no axis ${name}; its axes are ${lacking.tiles?.axes.map((a) => a.name).join(' and ')}`);
    grid[name] = [...new Set(values)].sort((a, b) => a - b);
  }
  return grid;
}

/** --base for the tile study: a whole shape B,N,d. */
export function tilesShapeOf(text: string | undefined): Shape {
  return text === undefined ? TILES_DEFAULT_SHAPE : parseShape(text);
}

const sortedWith = (values: readonly number[], extra: number | undefined): number[] =>
  [...new Set(extra === undefined ? values : [...values, extra])].sort((a, b) => a - b);

/** A rung's grid: the axes' values (or --grid's), each with the plan's own value added. */
export function rungGrid(rung: Rung, grid: Record<string, number[]>, planned: Record<string, number> | undefined): { rows: number[]; columns: number[] } {
  const [a, b] = rung.tiles?.axes ?? [];
  if (!a || !b) throw new Error(`${rung.id}: no tile axes`);
  return { rows: sortedWith(grid[a.name] ?? a.values, planned?.[a.name]), columns: sortedWith(grid[b.name] ?? b.values, planned?.[b.name]) };
}

/** A benchmark cell's time and error, or the reason it has none. */
function timed(cell: BenchCell | undefined): Pick<TileCell, 'ms' | 'msMin' | 'msMax' | 'maxError' | 'reason'> {
  if (!cell) return { reason: 'not run' };
  if (cell.ran && cell.ms !== undefined) return { ms: cell.ms, ...(cell.msMin !== undefined ? { msMin: cell.msMin } : {}), ...(cell.msMax !== undefined ? { msMax: cell.msMax } : {}), ...(cell.maxError !== undefined ? { maxError: cell.maxError } : {}) };
  return { reason: cell.reason ?? 'did not run' };
}

/** The study of one rung at one shape: its footprints here, then every runnable pair checked and timed. */
export async function tileStudy(rung: Rung, shape: Shape, env: RunEnv, grid: Record<string, number[]>, ctx: Omit<ShapeContext, 'rungs' | 'env'>): Promise<TileRungReport> {
  const tiles = rung.tiles;
  if (!tiles || !env.gpu) throw new Error(`${rung.id}: the tile study needs a GPU rung with tile axes`);
  const unit = computeUnitFor(env.gpu.report);
  const planned = tiles.planned(shape, env);
  const { rows, columns } = rungGrid(rung, grid, planned);
  const [a, b] = tiles.axes;
  const cells: TileCell[] = [];
  const variants: Rung[] = [];
  const timedCells: TileCell[] = [];
  for (const row of rows) {
    for (const column of columns) {
      const sizes = { [a.name]: row, [b.name]: column };
      const footprint = tiles.footprint(shape, env, sizes);
      if (typeof footprint === 'string') {
        cells.push({ sizes, reason: footprint });
        continue;
      }
      const fit = occupancy(footprint, unit);
      const cell: TileCell = { sizes, footprint, occupancy: fit, waves: Math.ceil((footprint.workgroupsPerBatch * shape.B) / (fit.perUnit * unit.units)) };
      cells.push(cell);
      timedCells.push(cell);
      variants.push({ ...tiles.withTiles(sizes), id: `${rung.id} ${a.name}=${row} ${b.name}=${column}`, index: rung.index });
    }
  }
  ctx.info(`${rung.id}: ${variants.length} of ${cells.length} tile pairs can run ${shape.B}×${shape.N}×${shape.d} here`);
  if (variants.length > 0) {
    const measured = await benchShape(shape, { ...ctx, env, rungs: variants });
    timedCells.forEach((cell, k) => Object.assign(cell, timed(measured.cells[k])));
  }
  return { id: rung.id, axes: tiles.axes, rows, columns, ...(planned ? { planned } : {}), cells };
}
