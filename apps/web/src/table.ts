/** The results table: one row per rung with its time, GFLOP/s, speedup over the rung below, error and verdict. */
import type { RungRow } from './run-ladder.js';

const ms = (value: number | undefined): string => (value === undefined ? '' : value < 10 ? value.toFixed(2) : value.toFixed(0));

function cell(text: string, className?: string): HTMLTableCellElement {
  const td = document.createElement('td');
  td.textContent = text;
  if (className) td.className = className;
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

export function drawTable(body: HTMLTableSectionElement, rows: readonly RungRow[], selected: string | undefined, select: (id: string) => void): void {
  body.replaceChildren(
    ...rows.map((row) => {
      const tr = document.createElement('tr');
      tr.className = `status-${row.status}${row.rung.id === selected ? ' selected' : ''}`;
      tr.dataset.rung = row.rung.id;
      tr.title = row.rung.title;
      tr.append(
        cell(String(row.rung.index), 'num'),
        cell(row.rung.id, 'id'),
        cell(row.rung.kind),
        cell(row.gpuMs === undefined ? ms(row.wallMs) : `${ms(row.gpuMs)} gpu`, 'num'),
        cell(row.gflops === undefined ? '' : row.gflops.toFixed(2), 'num'),
        cell(row.speedup === undefined ? '' : `${row.speedup.toFixed(2)}×`, 'num'),
        cell(row.comparison ? row.comparison.maxAbsError.toExponential(1) : '', 'num'),
        cell(verdict(row), 'verdict'),
      );
      tr.addEventListener('click', () => {
        select(row.rung.id);
      });
      return tr;
    }),
  );
}
