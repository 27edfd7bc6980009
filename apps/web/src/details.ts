/**
 * The selected rung: its title and what changed, its page from docs/rungs, and its WGSL with a line diff from its
 * parent's (the rung it changes: rung 23 staged-matrix diffs against rung 17 compensated-matrix). A rung whose parent
 * has no WGSL (naive, whose parent is the CPU rung seq-flash) shows its whole kernel.
 */
import type { Rung } from '@fa/core';
import { diffCounts, hunks, lineDiff, splitHeaderComment, type DiffLine } from './diff.js';
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
  const parent = ladder.find((r) => r.id === rung.parent);
  const parentCode = parent === undefined ? undefined : wgslOf(parent);
  if (parent === undefined || parentCode === undefined) {
    heading.textContent = parent === undefined ? 'WGSL' : `WGSL (its parent, rung ${parent.index} ${parent.id}, is a ${parent.kind.toUpperCase()} rung: the whole kernel)`;
    section.append(linesView(code.split('\n').map((text) => ({ op: 'same' as const, text }))));
    return section;
  }
  // The header comments (what changed and why, in prose) differ in nearly every line between rungs; the page above
  // says the same, so their diff is collapsed and the diff opens on the code.
  const before = splitHeaderComment(parentCode);
  const after = splitHeaderComment(code);
  const lines = lineDiff(before.code, after.code);
  const headerLines = lineDiff(before.header, after.header);
  const { added, removed } = diffCounts(lines);
  const header = diffCounts(headerLines);
  heading.textContent = `WGSL, against its parent, rung ${parent.index} ${parent.id}: +${added} −${removed} lines of code`;
  if (header.added + header.removed > 0) {
    const folded = document.createElement('details');
    folded.className = 'diff-header';
    const label = document.createElement('summary');
    label.textContent = `the header comment: +${header.added} −${header.removed} lines`;
    folded.append(label, linesView(hunks(headerLines)));
    section.append(folded);
  }
  if (added + removed === 0) {
    const same = document.createElement('p');
    same.textContent = `The same WGSL code as its parent, rung ${parent.index} ${parent.id}: this rung changes only the host code (its page says how).`;
    section.append(same);
  } else {
    section.append(linesView(hunks(lines)));
  }
  const whole = document.createElement('details');
  const label = document.createElement('summary');
  label.textContent = 'the whole kernel';
  whole.append(label, linesView(code.split('\n').map((text) => ({ op: 'same' as const, text }))));
  section.append(whole);
  return section;
}

/** Lines with +/- markers; undefined stands for skipped unchanged lines. */
function linesView(lines: readonly (DiffLine | undefined)[]): HTMLPreElement {
  const pre = document.createElement('pre');
  pre.className = 'diff';
  for (const line of lines) {
    const span = document.createElement('span');
    span.className = line?.op ?? 'gap';
    span.textContent = line ? `${line.op === 'added' ? '+' : line.op === 'removed' ? '-' : ' '} ${line.text}\n` : '  ⋯\n';
    pre.append(span);
  }
  return pre;
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
