/**
 * The ladder as a tree, below the table: each rung under the rung it changes (its parent), the trunk (rungs 1-15) and
 * the two branches that grow from rung 15, each under its name. Nested lists, so a screen reader announces the
 * levels; each rung is a button that selects it, as a row of the table does.
 */
import type { Rung } from '@fa/core';
import { ladderTree, type TreeItem } from '@fa/ladder/browser';

/** What the drawing marks: the selected rung and its parent, the rung its diff is against. */
interface Marks {
  selected: string | undefined;
  parent: string | null | undefined;
}

function list(items: readonly TreeItem<Rung>[], marks: Marks, select: (id: string) => void): HTMLUListElement {
  const ul = document.createElement('ul');
  for (const entry of items) {
    const li = document.createElement('li');
    if ('branch' in entry) {
      li.className = 'branch';
      const name = document.createElement('span');
      name.className = 'branch-name';
      name.textContent = entry.branch.name;
      li.append(name, list(entry.items, marks, select));
    } else {
      const { rung } = entry;
      li.dataset.rung = rung.id;
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = `${rung.index} ${rung.id}`;
      button.title = rung.parent === null ? rung.title : `${rung.title} (changes rung ${rung.parent})`;
      if (rung.id === marks.selected) {
        button.className = 'selected';
        button.setAttribute('aria-current', 'true');
      }
      button.addEventListener('click', () => {
        select(rung.id);
      });
      li.append(button);
      if (rung.id === marks.parent) {
        const note = document.createElement('span');
        note.className = 'tree-note';
        note.textContent = ' the selected rung’s parent: its diff is against this one';
        li.append(note);
      }
      if (entry.shoots.length > 0) li.append(list(entry.shoots, marks, select));
    }
    ul.append(li);
  }
  return ul;
}

export function drawTree(container: HTMLElement, ladder: readonly Rung[], selected: string | undefined, select: (id: string) => void): void {
  const heading = document.createElement('h2');
  heading.textContent = 'The ladder as a tree';
  const note = document.createElement('p');
  note.className = 'note';
  note.textContent = 'Each rung changes the rung above it in its list, or, first in a list, the rung the list hangs from: its parent, whose WGSL its diff is against.';
  const parent = ladder.find((r) => r.id === selected)?.parent;
  const tree = list(ladderTree(ladder), { selected, parent }, select);
  tree.className = 'tree';
  container.replaceChildren(heading, note, tree);
}
