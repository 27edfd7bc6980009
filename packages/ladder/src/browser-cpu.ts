/**
 * The browser build's stand-in for '@fa/reference/node': the sequential rungs as they are, and the `cpu` rung (Node's
 * worker threads) as a rung that declines with the reason, so a page shows the whole ladder with the same numbers.
 * Only the browser entry's build uses this file (see tsup.config.ts); Node keeps the real `cpu` rung.
 */
import type { RungDefinition } from '@fa/core';

export * from '@fa/reference';

const WHY_NOT = "runs on Node's worker threads (hw4-cli), not in a browser";

export const cpu: RungDefinition = {
  id: 'cpu',
  parent: 'seq-flash',
  kind: 'cpu',
  title: 'Multi-threaded CPU (worker threads over batches and row blocks)',
  delta: 'Spreads batches × row blocks over one worker thread per core, sharing memory, with float64 accumulation.',
  supports: () => WHY_NOT,
  prepare: () => Promise.reject(new Error(`the cpu rung ${WHY_NOT}`)),
};
