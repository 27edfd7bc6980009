/** Plain-text tables with aligned columns, and markdown tables, from the same rows. */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[], indent = '  '): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    indent + cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
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
