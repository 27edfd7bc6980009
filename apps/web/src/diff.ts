/**
 * A line diff by longest common subsequence: what a rung's WGSL keeps, drops and adds against its parent's.
 * Quadratic in lines, fine for kernels of a few hundred lines.
 */
export type DiffOp = 'same' | 'added' | 'removed';

export interface DiffLine {
  op: DiffOp;
  text: string;
}

export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  const width = b.length + 1;
  // lcs[i * width + j]: length of the LCS of a[i..] and b[j..].
  const lcs = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i * width + j] = a[i] === b[j] ? (lcs[(i + 1) * width + j + 1] as number) + 1 : Math.max(lcs[(i + 1) * width + j] as number, lcs[i * width + j + 1] as number);
    }
  }
  const lines: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      lines.push({ op: 'same', text: a[i++] as string });
      j++;
    } else if (j < b.length && (i === a.length || (lcs[i * width + j + 1] as number) >= (lcs[(i + 1) * width + j] as number))) {
      lines.push({ op: 'added', text: b[j++] as string });
    } else {
      lines.push({ op: 'removed', text: a[i++] as string });
    }
  }
  return lines;
}

export function diffCounts(lines: readonly DiffLine[]): { added: number; removed: number } {
  return {
    added: lines.filter((l) => l.op === 'added').length,
    removed: lines.filter((l) => l.op === 'removed').length,
  };
}

/** The changed lines with `context` unchanged lines around each change; undefined marks a gap of skipped lines. */
export function hunks(lines: readonly DiffLine[], context = 3): (DiffLine | undefined)[] {
  const keep = lines.map(() => false);
  lines.forEach((line, k) => {
    if (line.op === 'same') return;
    for (let j = Math.max(0, k - context); j <= Math.min(lines.length - 1, k + context); j++) keep[j] = true;
  });
  const out: (DiffLine | undefined)[] = [];
  lines.forEach((line, k) => {
    if (keep[k]) out.push(line);
    else if (out.length === 0 || out.at(-1) !== undefined) out.push(undefined);
  });
  return out;
}

/**
 * A kernel's header comment (its leading lines of `//` comments and blank lines: what the rung changed and why) and
 * the code after it. The page diffs the two apart and shows the header's diff collapsed, so a diff opens on code.
 */
export function splitHeaderComment(source: string): { header: string; code: string } {
  const lines = source.split('\n');
  let end = 0;
  while (end < lines.length && /^\s*(\/\/.*)?$/.test(lines[end] as string)) end++;
  return { header: lines.slice(0, end).join('\n'), code: lines.slice(end).join('\n') };
}
