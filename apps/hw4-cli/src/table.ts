/**
 * What a column whose name does not say it all means: a plain-text table with such a column ends with its line. The
 * run report's "waited on" (commands/run.ts; docs/pipeline.md#the-report).
 */
export const COLUMN_LEGENDS: Readonly<Record<string, string>> = {
  'waited on':
    'waited on: how long the streaming loop stood still for that stage; the rest of its time overlapped the other stages',
};

/** Plain-text tables with aligned columns, and markdown tables, from the same rows. */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[], indent = '  '): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    indent + cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  const legends = header.flatMap((h) => (COLUMN_LEGENDS[h] === undefined ? [] : [`${indent}${COLUMN_LEGENDS[h]}`]));
  return [line(header), ...rows.map(line), ...legends].join('\n');
}

export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(3)} s`;
}

export function milliseconds(ms: number): string {
  return ms < 10 ? `${ms.toFixed(3)} ms` : ms < 1000 ? `${ms.toFixed(1)} ms` : `${(ms / 1000).toFixed(2)} s`;
}
