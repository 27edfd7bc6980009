/**
 * The tile study's report (`hw4-cli sweep --over tiles`): for each rung, the time of its kernel at each pair of tile
 * sizes on one shape, beside what that pair asks of a compute unit (workgroup memory, invocations) and how many such
 * workgroups one unit holds at once. WebGPU gives neither the number of compute units nor their capacity, so the
 * occupancy is computed for a stated model of one (COMPUTE_UNITS), and registers, which WebGPU does not report, are
 * left out of it.
 */
import type { Shape } from '@fa/io/node';
import type { TileAxis, TileFootprint } from '@fa/core';

/** What one compute unit holds at once, and how many the GPU has: the figures the occupancy is computed from. */
export interface ComputeUnitModel {
  /** What the figures describe, for the report. */
  name: string;
  /** Shared (workgroup) memory of one unit, and the part each resident workgroup reserves besides its own. */
  sharedBytes: number;
  reservedBytesPerWorkgroup: number;
  /** Most resident invocations and workgroups. */
  invocations: number;
  workgroups: number;
  /** Compute units of the GPU. */
  units: number;
}

/**
 * The models: a Hopper SM as Dawn's Vulkan backend runs it, 132 of them in an H100 SXM or an H200, 114 in an H100 PCIe;
 * for any other adapter a stated guess. The SM has 228 KiB of shared memory (NVIDIA's Hopper tuning guide), but the
 * kernels Dawn compiles get 48 KiB of it per SM: the `resident-workgroups` experiment counted ⌊49,152 ÷ bytes⌋
 * workgroups at once per SM for every size from 1 to 48 KiB, with nothing reserved per workgroup (H100, 2026-11-27,
 * docs/sdpa.md). 2048 invocations and 32 workgroups per SM are the hardware's.
 */
export const COMPUTE_UNITS = {
  hopper: { name: 'a Hopper SM as Dawn runs it (48 KiB of workgroup memory, as measured, 2048 invocations, 32 workgroups; 132 SMs, as in an H100 SXM)', sharedBytes: 48 * 1024, reservedBytesPerWorkgroup: 0, invocations: 2048, workgroups: 32, units: 132 },
  hopperPcie: { name: 'a Hopper SM as Dawn runs it (48 KiB of workgroup memory, as measured on the SXM, 2048 invocations, 32 workgroups; 114 SMs, as in an H100 PCIe)', sharedBytes: 48 * 1024, reservedBytesPerWorkgroup: 0, invocations: 2048, workgroups: 32, units: 114 },
  unknown: { name: 'an assumed compute unit (64 KiB shared memory, 1024 invocations, 16 workgroups; 1 unit): WebGPU does not report these for this adapter', sharedBytes: 64 * 1024, reservedBytesPerWorkgroup: 0, invocations: 1024, workgroups: 16, units: 1 },
} satisfies Record<string, ComputeUnitModel>;

/** The model for an adapter (Dawn names an H100 SXM's device "NVIDIA H100 80GB HBM3" and leaves its architecture empty). */
export function computeUnitFor({ vendor, architecture, device }: { vendor: string; architecture: string; device: string }): ComputeUnitModel {
  const hopper = vendor === 'nvidia' && (architecture === 'hopper' || /\bH(100|200)\b/i.test(device));
  if (!hopper) return COMPUTE_UNITS.unknown;
  return /pcie/i.test(device) ? COMPUTE_UNITS.hopperPcie : COMPUTE_UNITS.hopper;
}

/** How many workgroups of a footprint one unit holds, and which resource stops the next one. */
export interface Occupancy {
  perUnit: number;
  limitedBy: 'memory' | 'invocations' | 'workgroups';
}

export function occupancy(footprint: Pick<TileFootprint, 'workgroupBytes' | 'invocations'>, unit: ComputeUnitModel): Occupancy {
  const byMemory = footprint.workgroupBytes === 0 ? Infinity : Math.floor(unit.sharedBytes / (footprint.workgroupBytes + unit.reservedBytesPerWorkgroup));
  const byInvocations = Math.floor(unit.invocations / footprint.invocations);
  const perUnit = Math.min(byMemory, byInvocations, unit.workgroups);
  const limitedBy = perUnit === byMemory ? 'memory' : perUnit === byInvocations ? 'invocations' : 'workgroups';
  return { perUnit, limitedBy };
}

/** One pair of sizes of one rung. */
export interface TileCell {
  sizes: Record<string, number>;
  /** The plan's footprint and its occupancy, when the sizes can run the shape here. */
  footprint?: TileFootprint;
  occupancy?: Occupancy;
  /** Waves of workgroups: all the shape's workgroups over (units × perUnit). */
  waves?: number;
  /** Median, fastest and slowest time (ms), and the largest error on the sampled rows, when it ran and passed. */
  ms?: number;
  msMin?: number;
  msMax?: number;
  maxError?: number;
  /** Why there is no time: cannot run, failed the check, or skipped. */
  reason?: string;
}

export interface TileRungReport {
  id: string;
  axes: readonly [TileAxis, TileAxis];
  /** The rows and columns of its grid: the axes' values, with the plan's own sizes added. */
  rows: number[];
  columns: number[];
  /** The sizes the rung's own plan chooses for this shape. */
  planned?: Record<string, number>;
  cells: TileCell[];
}

export interface TilesReport {
  date: string;
  adapter: string;
  command: string;
  study: 'tiles';
  shape: Shape;
  computeUnit: ComputeUnitModel;
  rungs: TileRungReport[];
}

/** The cell of a rung at a row value and a column value. */
export function cellAt(rung: TileRungReport, row: number, column: number): TileCell | undefined {
  const [a, b] = rung.axes;
  return rung.cells.find((c) => c.sizes[a.name] === row && c.sizes[b.name] === column);
}

/** The fastest cell of a rung that ran. */
export function bestCell(rung: TileRungReport): TileCell | undefined {
  return rung.cells.filter((c) => c.ms !== undefined).sort((x, y) => (x.ms as number) - (y.ms as number))[0];
}

const KiB = (bytes: number): string => `${(bytes / 1024).toFixed(bytes < 10240 ? 1 : 0)} KiB`;
const fixed = (x: number): string => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3));
const sizesText = (rung: TileRungReport, sizes: Record<string, number>): string => rung.axes.map((a) => `${a.name} = ${sizes[a.name]}`).join(', ');

/** The markdown of one cell: time, then footprint and occupancy, or why none. */
function cellMarkdown(rung: TileRungReport, cell: TileCell | undefined, best: TileCell | undefined): string {
  if (!cell) return '';
  const isPlan = rung.planned !== undefined && rung.axes.every((a) => rung.planned?.[a.name] === cell.sizes[a.name]);
  const time = cell.ms !== undefined ? `${cell === best ? '**' : ''}${fixed(cell.ms)} ms${cell === best ? '**' : ''}${isPlan ? ' (plan)' : ''}` : `— ${cell.reason ?? ''}`;
  const f = cell.footprint;
  const o = cell.occupancy;
  return f && o ? `${time}<br>${KiB(f.workgroupBytes)} · ${f.invocations} inv · ${o.perUnit}/CU (${o.limitedBy}) · ${cell.waves} wave${cell.waves === 1 ? '' : 's'}` : time;
}

/** The markdown: the shape and model, then a grid per rung (rows the first axis, columns the second). */
export function tilesMarkdown(report: TilesReport): string {
  const { B, N, d } = report.shape;
  const lines = [
    `## Tile sizes at B = ${B}, N = ${N}, d = ${d}`,
    '',
    `${report.adapter}, ${report.date}. \`${report.command}\`. Each cell: the kernel's time per call (ms, median of the bench's repeats; bold the fastest, "plan" the rung's own choice), its workgroup memory and invocations, how many such workgroups one compute unit holds and which resource stops the next, and the waves of workgroups the shape needs. Each cell's output was checked against the float64 oracle on sampled rows before it was timed. Occupancy is computed for ${report.computeUnit.name}; registers are not counted (WebGPU does not report them).`,
    '',
  ];
  for (const rung of report.rungs) {
    const [a, b] = rung.axes;
    const best = bestCell(rung);
    lines.push(`### ${rung.id}`, '', `Rows: ${a.meaning}. Columns: ${b.meaning}.${best ? ` Fastest: ${sizesText(rung, best.sizes)}, ${fixed(best.ms as number)} ms.` : ''}${rung.planned ? ` The plan chooses ${sizesText(rung, rung.planned)}.` : ''}`, '');
    lines.push(`| ${a.name} \\ ${b.name} | ${rung.columns.join(' | ')} |`, `|---|${rung.columns.map(() => '---').join('|')}|`);
    for (const row of rung.rows) lines.push(`| ${row} | ${rung.columns.map((col) => cellMarkdown(rung, cellAt(rung, row, col), best)).join(' | ')} |`);
    lines.push('');
  }
  return lines.join('\n');
}

const TEXT = '#1f2328';
const GRID = '#d0d7de';
const escape = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A cell's colour: green at the rung's fastest time, through yellow, to red at 4× it or slower. */
function heat(ms: number, best: number): string {
  const t = Math.min(1, Math.log(ms / best) / Math.log(4));
  const hue = 120 * (1 - t);
  return `hsl(${hue.toFixed(0)}, 70%, ${(78 - 10 * t).toFixed(0)}%)`;
}

/** The heat maps, one panel per rung, on their own white background (readable on light and dark pages). */
export function tilesSvg(report: TilesReport): string {
  const cellW = 118;
  const cellH = 46;
  const left = 70;
  const panelGap = 24;
  const columns = Math.max(1, ...report.rungs.map((r) => r.columns.length));
  const width = Math.max(760, left + columns * cellW + 20);
  const panelHeights = report.rungs.map((r) => 62 + r.rows.length * cellH);
  const height = 56 + panelHeights.reduce((sum, h) => sum + h + panelGap, 0);
  const { B, N, d } = report.shape;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="10" y="22" fill="${TEXT}" font-size="14">${escape(`Time per call over tile sizes, B = ${B}, N = ${N}, d = ${d}`)}</text>`,
    `<text x="10" y="40" fill="${TEXT}" font-size="10">${escape(`${report.adapter}, ${report.date}`)}</text>`,
  ];
  let top = 52;
  report.rungs.forEach((rung, k) => {
    const [a, b] = rung.axes;
    const best = bestCell(rung);
    parts.push(`<g data-rung="${escape(rung.id)}">`);
    parts.push(`<text x="10" y="${top + 16}" fill="${TEXT}" font-size="13" font-weight="bold">${escape(rung.id)}</text>`);
    parts.push(`<text x="${left}" y="${top + 32}" fill="${TEXT}">${escape(`columns ${b.name}: ${b.meaning}; rows ${a.name}: ${a.meaning}`)}</text>`);
    const gridTop = top + 56;
    rung.columns.forEach((col, c) => parts.push(`<text x="${left + c * cellW + cellW / 2}" y="${gridTop - 2}" fill="${TEXT}" text-anchor="middle" font-weight="bold">${b.name} ${col}</text>`));
    rung.rows.forEach((row, r) => {
      const y = gridTop + 4 + r * cellH;
      parts.push(`<text x="${left - 6}" y="${y + cellH / 2 + 4}" fill="${TEXT}" text-anchor="end" font-weight="bold">${a.name} ${row}</text>`);
      rung.columns.forEach((col, c) => {
        const x = left + c * cellW;
        const cell = cellAt(rung, row, col);
        const isPlan = rung.planned !== undefined && rung.planned[a.name] === row && rung.planned[b.name] === col;
        const fill = cell?.ms !== undefined && best?.ms !== undefined ? heat(cell.ms, best.ms) : '#eeeeee';
        const stroke = isPlan ? ` stroke="${TEXT}" stroke-width="3"` : ` stroke="${GRID}"`;
        parts.push(`<rect data-cell="${row},${col}" x="${x}" y="${y}" width="${cellW}" height="${cellH}" fill="${fill}"${stroke}/>`);
        if (!cell) return;
        const main = cell.ms !== undefined ? `${fixed(cell.ms)} ms${cell === best ? ' ★' : ''}` : cell.footprint ? 'failed' : 'cannot run';
        parts.push(`<text x="${x + cellW / 2}" y="${y + 18}" fill="${TEXT}" text-anchor="middle" font-size="12">${main}</text>`);
        if (cell.footprint && cell.occupancy) {
          parts.push(`<text x="${x + cellW / 2}" y="${y + 34}" fill="${TEXT}" text-anchor="middle" font-size="9">${KiB(cell.footprint.workgroupBytes)} · ${cell.footprint.invocations} inv · ${cell.occupancy.perUnit}/CU</text>`);
        }
      });
    });
    parts.push('</g>');
    top += (panelHeights[k] as number) + panelGap;
  });
  parts.push(`<text x="10" y="${height - 14}" fill="${TEXT}" font-size="10">${escape(`★ fastest; bold border: the plan's own sizes. /CU: workgroups one compute unit holds, for ${report.computeUnit.name.split(' (')[0]}.`)}</text>`);
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
