/**
 * The results table: one row per rung with its time (or, before it ran, its estimated time), GFLOP/s, the H100's
 * GFLOP/s at the nearest bench shape, speedup over the rung below, error and verdict.
 */
import { formatDuration } from './estimate.js';
import type { RungRow } from './run-ladder.js';

const ms = (value: number | undefined): string => (value === undefined ? '' : value < 10 ? value.toFixed(2) : value.toFixed(0));
const rate = (value: number | undefined): string => (value === undefined ? '' : value < 10 ? value.toFixed(2) : value.toFixed(0));

function cell(text: string, className?: string, title?: string): HTMLTableCellElement {
  const td = document.createElement('td');
  td.textContent = text;
  if (className) td.className = className;
  if (title) td.title = title;
  return td;
}

function verdict(row: RungRow): string {
  switch (row.status) {
    case 'skipped':
      return `skipped: ${row.reason ?? ''}`;
    case 'fail':
      return `FAIL: ${row.reason ?? ''}`;
    case 'pass':
      return 'pass';
    default:
      return row.status === 'running' ? 'running …' : '';
  }
}

export interface TableExtras {
  /** A rung's estimated time before it finishes, ms. */
  estimate?: (id: string) => number | undefined;
  /** The H100's GFLOP/s for a rung at the bench shape nearest the reader's. */
  h100?: (id: string) => number | undefined;
}

function timeCell(row: RungRow, extras: TableExtras): HTMLTableCellElement {
  if (row.wallMs !== undefined) return cell(row.gpuMs === undefined ? ms(row.wallMs) : `${ms(row.gpuMs)} gpu`, 'num');
  const estimate = row.status === 'waiting' || row.status === 'running' ? extras.estimate?.(row.rung.id) : undefined;
  if (estimate === undefined) return cell('', 'num');
  return cell(`~${formatDuration(estimate)}`, 'num estimate', 'estimated wall time of this rung here (rough; refined as rungs finish)');
}

function speedupCell(row: RungRow): HTMLTableCellElement {
  if (row.speedup === undefined) return cell('', 'num');
  const text = `${row.speedup.toFixed(2)}×`;
  if (row.speedupBasis === 'wall' && row.gpuMs !== undefined) {
    return cell(`${text} wall`, 'num wall', 'wall time against wall time (upload, compute, readback): the rung below has no GPU time to compare with');
  }
  return cell(text, 'num', row.speedupBasis === 'gpu' ? 'GPU time against GPU time' : 'wall time against wall time');
}

export function drawTable(body: HTMLTableSectionElement, rows: readonly RungRow[], selected: string | undefined, select: (id: string) => void, extras: TableExtras = {}): void {
  body.replaceChildren(
    ...rows.map((row) => {
      const tr = document.createElement('tr');
      tr.className = `status-${row.status}${row.rung.id === selected ? ' selected' : ''}`;
      tr.dataset.rung = row.rung.id;
      tr.title = row.rung.title;
      const text = verdict(row);
      tr.append(
        cell(String(row.rung.index), 'num'),
        cell(row.rung.id, 'id'),
        cell(row.rung.kind),
        timeCell(row, extras),
        cell(row.gflops === undefined ? '' : rate(row.gflops), 'num'),
        cell(rate(extras.h100?.(row.rung.id)), 'num h100'),
        speedupCell(row),
        cell(row.comparison ? row.comparison.maxAbsError.toExponential(1) : '', 'num'),
        // One line: a long reason ends in an ellipsis, and shows whole as the cell's tooltip.
        cell(text, 'verdict', text.length > 0 ? text : undefined),
      );
      tr.addEventListener('click', () => {
        select(row.rung.id);
      });
      return tr;
    }),
  );
}
