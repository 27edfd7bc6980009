/** The page's line diff: an LCS diff that rebuilds both sides, and hunks that keep changes with their context. */
import { describe, expect, it } from 'vitest';
import { diffCounts, hunks, lineDiff, splitHeaderComment } from '../src/diff.js';

const side = (lines: ReturnType<typeof lineDiff>, drop: 'added' | 'removed') => lines.filter((l) => l.op !== drop).map((l) => l.text).join('\n');

describe('lineDiff', () => {
  it('keeps the common lines and marks the rest', () => {
    const before = 'a\nb\nc\nd';
    const after = 'a\nc\nx\nd';
    const lines = lineDiff(before, after);
    expect(side(lines, 'added')).toBe(before);
    expect(side(lines, 'removed')).toBe(after);
    expect(diffCounts(lines)).toEqual({ added: 1, removed: 1 });
  });

  it('finds nothing to change between equal texts', () => {
    expect(diffCounts(lineDiff('x\ny', 'x\ny'))).toEqual({ added: 0, removed: 0 });
  });

  it('cuts long unchanged runs out of hunks', () => {
    const before = Array.from({ length: 20 }, (_, k) => `line ${k}`).join('\n');
    const after = before.replace('line 10', 'changed');
    const shown = hunks(lineDiff(before, after), 2);
    expect(shown[0]).toBeUndefined();
    expect(shown.filter((l) => l !== undefined)).toHaveLength(6);
    expect(shown.at(-1)).toBeUndefined();
  });
});

describe('splitHeaderComment', () => {
  it('takes the leading comment and blank lines as the header, the rest as code', () => {
    const source = '// Rung 8: vec4\n//\n// Changed from rung 7.\n\noverride D: u32;\n// a comment in the code\nfn main() {}';
    expect(splitHeaderComment(source)).toEqual({
      header: '// Rung 8: vec4\n//\n// Changed from rung 7.\n',
      code: 'override D: u32;\n// a comment in the code\nfn main() {}',
    });
  });

  it('gives an empty header to a kernel that starts with code', () => {
    expect(splitHeaderComment('override D: u32;\n// later')).toEqual({ header: '', code: 'override D: u32;\n// later' });
  });
});
