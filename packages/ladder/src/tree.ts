/**
 * The ladder as a tree: each rung changes one rung below it, its `parent`. Rungs 1-15 are the trunk; at rung 15
 * `prefetch` it forks into the matrix-unit branch (rung 16 `f16-matrix` and the rungs grown from it: 17, 23, 24) and
 * the fp32 branch (rung 18 `row-split` and the rungs grown from it: 19-22). A side shoot that nothing grows from
 * (rung 3 `cpu`, rung 6 `fused-maxsmem`, rungs 21 and 22) belongs to the branch of its parent.
 */

/** What the tree needs of a rung. */
export interface TreeRung {
  readonly id: string;
  readonly index: number;
  readonly parent: string | null;
}

/** A named branch of the tree: the rung it starts at and every rung grown from that one (up to another branch). */
export interface LadderBranch {
  readonly name: string;
  readonly root: string;
}

export const LADDER_BRANCHES: readonly LadderBranch[] = [
  { name: 'trunk', root: 'seq-attention' },
  { name: 'matrix-unit branch', root: 'f16-matrix' },
  { name: 'fp32 branch', root: 'row-split' },
];

/** The rungs that change `rung` (the roots when `rung` is null), in ladder order. */
export function childrenOf<R extends TreeRung>(rung: R | null, ladder: readonly R[]): R[] {
  const id = rung === null ? null : rung.id;
  return ladder.filter((r) => r.parent === id).sort((a, b) => a.index - b.index);
}

/** The rung a rung changes, or undefined for the root (or a parent missing from `ladder`). */
export function parentOf<R extends TreeRung>(rung: R, ladder: readonly R[]): R | undefined {
  return rung.parent === null ? undefined : ladder.find((r) => r.id === rung.parent);
}

/** The branch that starts at a rung, if one does. */
const branchAt = (rung: TreeRung): LadderBranch | undefined => LADDER_BRANCHES.find((b) => b.root === rung.id);

/** The branch a rung is on: the nearest branch root at or above it. */
export function branchOf(rung: TreeRung, ladder: readonly TreeRung[]): LadderBranch | undefined {
  const branch = branchAt(rung);
  if (branch) return branch;
  const parent = parentOf(rung, ladder);
  return parent === undefined ? undefined : branchOf(parent, ladder);
}

/** An entry of a drawn list: a rung with the side shoots and branches that grow from it, or a named branch. */
export type TreeItem<R extends TreeRung> = { readonly rung: R; readonly shoots: readonly TreeItem<R>[] } | { readonly branch: LadderBranch; readonly items: readonly TreeItem<R>[] };

const growsOn = (rung: TreeRung, ladder: readonly TreeRung[]): boolean => ladder.some((r) => r.parent === rung.id);

/**
 * A rung and its line of descent, one list: each rung is followed by the child that continues the line (its only
 * child, or the only one not starting a branch that others grow from); its other children hang from it as side shoots
 * (a rung nothing grows from, or a named branch).
 */
function lineFrom<R extends TreeRung>(first: R, ladder: readonly R[]): TreeItem<R>[] {
  const items: TreeItem<R>[] = [];
  for (let at: R | undefined = first; at !== undefined; ) {
    const children: R[] = childrenOf(at, ladder);
    const growing = children.filter((c) => growsOn(c, ladder) && branchAt(c) === undefined);
    const next: R | undefined = children.length === 1 && branchAt(children[0] as R) === undefined ? children[0] : growing.length === 1 ? growing[0] : undefined;
    const shoots = children.filter((c) => c !== next).flatMap((c) => item(c, ladder));
    items.push({ rung: at, shoots });
    at = next;
  }
  return items;
}

function item<R extends TreeRung>(rung: R, ladder: readonly R[]): TreeItem<R>[] {
  const branch = branchAt(rung);
  return branch ? [{ branch, items: lineFrom(rung, ladder) }] : lineFrom(rung, ladder);
}

/** The tree as nested lists: the trunk, and under rung 15 the matrix-unit branch and the fp32 branch. */
export function ladderTree<R extends TreeRung>(ladder: readonly R[]): TreeItem<R>[] {
  return childrenOf(null, ladder).flatMap((root) => item(root, ladder));
}

/** The tree as a nested markdown list; `label` writes a rung's entry (default: its number and id in code). */
export function treeMarkdown<R extends TreeRung>(ladder: readonly R[], label: (rung: R) => string = (r) => `${r.index} \`${r.id}\``): string {
  const lines: string[] = [];
  const write = (items: readonly TreeItem<R>[], depth: number): void => {
    for (const entry of items) {
      const indent = '  '.repeat(depth);
      if ('branch' in entry) {
        lines.push(`${indent}- **${entry.branch.name}**`);
        write(entry.items, depth + 1);
      } else {
        lines.push(`${indent}- ${label(entry.rung)}`);
        write(entry.shoots, depth + 1);
      }
    }
  };
  write(ladderTree(ladder), 0);
  return lines.join('\n');
}
