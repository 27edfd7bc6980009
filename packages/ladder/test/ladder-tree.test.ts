/** The ladder as a tree (CPU only): parents, the kernels' "Changed from" lines, the named branches. */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { branchOf, childrenOf, LADDER, LADDER_BRANCHES, parentOf, treeMarkdown } from '../src/index.js';

const ladderPage = fileURLToPath(new URL('../../../docs/ladder.md', import.meta.url));

/** The comment lines a kernel starts with. */
function header(code: string): string {
  const lines = code.split('\n');
  const end = lines.findIndex((line) => !line.startsWith('//'));
  return lines.slice(0, end < 0 ? lines.length : end).join('\n');
}

/** The most lines a kernel's header comment takes: what changed, why, the measured result; the history is on the page. */
const HEADER_LINES = 25;
const kernelCode = (id: string): string[] => (LADDER.find((r) => r.id === id)?.kernels ?? []).map((k) => k.code);
const branchRungs = (name: string): number[] => LADDER.filter((r) => branchOf(r, LADDER)?.name === name).map((r) => r.index);

describe('the ladder as a tree', () => {
  it('gives every rung a parent except the first', () => {
    expect(LADDER[0]?.parent).toBeNull();
    for (const rung of LADDER.slice(1)) expect(rung.parent, `${rung.id}'s parent`).toEqual(expect.any(String));
  });

  it('names as parent a rung with a lower index', () => {
    for (const rung of LADDER.slice(1)) {
      const parent = parentOf(rung, LADDER);
      expect(parent, `${rung.id}'s parent ${String(rung.parent)} is a rung`).toBeDefined();
      expect(parent?.index ?? Infinity, `${rung.id}'s parent`).toBeLessThan(rung.index);
    }
  });

  it.each(LADDER.filter((r) => r.kind === 'gpu').map((r) => ({ rung: r, id: r.id })))(
    'GPU rung $id names exactly its parent in its kernel header, "Changed from <parent>", and links its page',
    ({ rung }) => {
      const own = kernelCode(rung.id);
      const page = `docs/rungs/${String(rung.index).padStart(2, '0')}-${rung.id}.md`;
      for (const code of own) {
        expect(header(code), `${rung.id}'s kernel header links its page`).toContain(page);
        expect(header(code).split('\n').length, `${rung.id}'s kernel header: lines`).toBeLessThanOrEqual(HEADER_LINES);
      }
      // fused-maxsmem runs its parent's kernel unchanged: that header is its parent's.
      if (rung.parent !== null && own.join() === kernelCode(rung.parent).join()) return;
      for (const code of own) {
        const named = [...header(code).matchAll(/^\/\/ Changed from ([a-z0-9-]+)/gm)].map((m) => m[1]);
        expect(named, `${rung.id}'s kernel header`).toEqual([rung.parent]);
      }
    },
  );

  it('is the trunk 1-15 that forks at prefetch into the matrix-unit branch and the fp32 branch', () => {
    expect(LADDER_BRANCHES.map((b) => b.name)).toEqual(['trunk', 'matrix-unit branch', 'fp32 branch']);
    expect(branchRungs('trunk')).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    expect(branchRungs('matrix-unit branch')).toEqual([16, 17, 23, 24, 25]);
    expect(branchRungs('fp32 branch')).toEqual([18, 19, 20, 21, 22]);
    expect(childrenOf(LADDER.find((r) => r.id === 'prefetch') ?? null, LADDER).map((r) => r.id)).toEqual(['f16-matrix', 'row-split']);
    expect(childrenOf(LADDER.find((r) => r.id === 'lean-loop') ?? null, LADDER).map((r) => r.id)).toEqual(['four-rows', 'split-softmax']);
    expect(LADDER.find((r) => r.id === 'staged-matrix')?.parent).toBe('compensated-matrix');
  });

  it('draws every rung once, each branch under its name, as docs/ladder.md shows it', () => {
    const tree = treeMarkdown(LADDER);
    expect(tree.match(/^\s*- \d+ `/gm)?.length).toBe(LADDER.length);
    expect(tree).toMatchSnapshot();
    expect(readFileSync(ladderPage, 'utf8').replaceAll('\r', ''), 'docs/ladder.md has the tree of treeMarkdown(LADDER)').toContain(tree);
  });
});
