/**
 * The ladder: every rung in order, slowest idea first. This one array is the single source of the CLI's --impl
 * choices, the conformance suite, the benchmark and the docs index. Adding a rung = its files + one line here.
 */
import { canRun, type RunEnv, type Rung } from '@fa/core';
import type { Shape } from '@fa/io';
import { fused, fusedMaxsmem, fusedSplitQ } from '@fa/fused';
import { naive } from '@fa/naive';
import { cpu, seqAttention, seqFlash } from '@fa/reference';

export const LADDER: readonly Rung[] = [seqAttention, seqFlash, cpu, naive, fused, fusedMaxsmem, fusedSplitQ];

export function findRung(id: string): Rung | undefined {
  return LADDER.find((rung) => rung.id === id);
}

/** The fastest rung that can run `shape` here: the highest available one on the ladder. */
export function fastestRung(shape: Shape, env: RunEnv): Rung {
  const usable = LADDER.filter((rung) => canRun(rung, shape, env) === true);
  const best = usable[usable.length - 1];
  if (!best) throw new Error(`no rung can run ${shape.B}×${shape.N}×${shape.d} here`);
  return best;
}
