/**
 * The selected rung: its title and what changed, its page from docs/rungs, and its WGSL with a line diff from the
 * nearest GPU rung below it.
 */
import type { Rung } from '@fa/core';
import { diffCounts, lineDiff } from './diff.js';
import { rungDoc } from './docs.js';
import { markdownToHtml } from './markdown.js';

const wgslOf = (rung: Rung): string | undefined =>
  rung.kernels && rung.kernels.length > 0 ? rung.kernels.map((k) => (rung.kernels?.length === 1 ? k.code : `// ── ${k.label} ──\n${k.code}`)).join('\n') : undefined;

function sourceView(rung: Rung, ladder: readonly Rung[]): HTMLElement {
  const section = document.createElement('section');
  section.className = 'source';
  const code = wgslOf(rung);
  const heading = document.createElement('h3');
  section.append(heading);
  if (code === undefined) {
    heading.textContent = 'Source';
    const p = document.createElement('p');
    p.textContent = `${rung.id} is a ${rung.kind.toUpperCase()} rung: no WGSL. Its TypeScript is in packages/reference.`;
    section.append(p);
    return section;
  }
  const below = ladder.filter((r) => r.index < rung.index && wgslOf(r) !== undefined).at(-1);
  const lines = below ? lineDiff(wgslOf(below) ?? '', code) : code.split('\n').map((text) => ({ op: 'same' as const, text }));
  const { added, removed } = diffCounts(lines);
  heading.textContent = below ? `WGSL, against rung ${below.index} ${below.id}: +${added} −${removed} lines` : 'WGSL (the first GPU rung)';
  const pre = document.createElement('pre');
  pre.className = 'diff';
  for (const line of lines) {
    const span = document.createElement('span');
    span.className = line.op;
    span.textContent = `${line.op === 'added' ? '+' : line.op === 'removed' ? '-' : ' '} ${line.text}\n`;
    pre.append(span);
  }
  section.append(pre);
  return section;
}

export function drawDetails(container: HTMLElement, rung: Rung, ladder: readonly Rung[]): void {
  const header = document.createElement('header');
  const title = document.createElement('h2');
  title.textContent = `Rung ${rung.index}: ${rung.id}`;
  const summary = document.createElement('p');
  summary.className = 'summary';
  summary.textContent = `${rung.title}. ${rung.delta}`;
  header.append(title, summary);
  const doc = document.createElement('article');
  doc.className = 'doc';
  const markdown = rungDoc(rung.id);
  if (markdown === undefined) doc.textContent = 'This rung has no page in docs/rungs yet.';
  else doc.innerHTML = markdownToHtml(markdown);
  container.replaceChildren(header, doc, sourceView(rung, ladder));
}
