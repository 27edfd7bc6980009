import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LADDER } from '../src/index.js';

const docs = fileURLToPath(new URL('../../../docs/rungs/', import.meta.url));
const pageOf = (index: number, id: string): string => `${String(index).padStart(2, '0')}-${id}.md`;

/** The comment lines a kernel starts with. */
function header(code: string): string {
  const lines = code.split('\n');
  const end = lines.findIndex((line) => !line.startsWith('//'));
  return lines.slice(0, end < 0 ? lines.length : end).join('\n');
}

describe('the ladder table', () => {
  it('has unique ids and numbers rungs by their place', () => {
    expect(new Set(LADDER.map((r) => r.id)).size).toBe(LADDER.length);
    expect(LADDER.map((r) => r.index)).toEqual(LADDER.map((_, i) => i + 1));
  });

  it.each(LADDER.map((r) => ({ id: r.id, index: r.index })))('rung $index $id has its doc page', ({ id, index }) => {
    expect(existsSync(`${docs}${pageOf(index, id)}`), `docs/rungs/${pageOf(index, id)} is missing`).toBe(true);
    expect(readFileSync(`${docs}${pageOf(index, id)}`, 'utf8')).toMatch(new RegExp(`^# Rung ${index} — \`${id}\``));
  });

  it.each(LADDER.filter((r) => r.kind === 'gpu').map((r) => ({ rung: r, id: r.id })))('GPU rung $id names itself in its kernel header', ({ rung }) => {
    expect(rung.kernels?.length ?? 0).toBeGreaterThan(0);
    for (const kernel of rung.kernels ?? []) {
      expect(header(kernel.code), `${kernel.label} header`).toMatch(new RegExp(`Rung ${rung.index}\\s*[—,:-]\\s*${rung.id}\\b`));
    }
  });
});
