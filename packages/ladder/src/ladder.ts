/**
 * The ladder: every rung in order, slowest idea first. This one array is the single source of the CLI's --impl
 * choices, the conformance suite, the benchmark and the docs index. Adding a rung = its files + one line here.
 */
import type { RunEnv, Rung, RungDefinition } from '@fa/core';
import type { Shape } from '@fa/io';
import { fused, fusedMaxsmem, fusedSplitQ } from '@fa/fused';
import { naive } from '@fa/naive';
import {
  bankFree,
  coalesced,
  fourRows,
  leanLoop,
  lmRegisters,
  prefetch,
  qRegisters,
  registerTiles,
  restructure,
  rowSplit,
  splitKeys,
  splitSoftmax,
  vec4,
} from '@fa/optimized';
import { cpu, seqAttention, seqFlash } from '@fa/reference/node';
import { hw4AttentionFp32 } from '@fa/sdpa';
import { compensatedMatrix, f16Matrix, f16Resident, residentO, stagedMatrix } from '@fa/tensor';
import { chooseRung } from './choice.js';

/** The rungs in ladder order; a rung's number is its place here. */
const RUNGS: readonly RungDefinition[] = [
  seqAttention,
  seqFlash,
  cpu,
  naive,
  fused,
  fusedMaxsmem,
  fusedSplitQ,
  vec4,
  restructure,
  coalesced,
  lmRegisters,
  bankFree,
  qRegisters,
  registerTiles,
  prefetch,
  f16Matrix,
  compensatedMatrix,
  rowSplit,
  splitKeys,
  leanLoop,
  fourRows,
  splitSoftmax,
  stagedMatrix,
  residentO,
  f16Resident,
];

export const LADDER: readonly Rung[] = RUNGS.map((rung, k) => ({ ...rung, index: k + 1 }));

/**
 * The product's kernels (@fa/sdpa) on hw4's layout: not lessons, so not on the ladder, but runnable by name, checked
 * and benched with the rungs, and chosen by default where the bench ranks them first. Numbered after the ladder.
 */
export const PRODUCT: readonly Rung[] = [hw4AttentionFp32].map((rung, k) => ({ ...rung, index: RUNGS.length + 1 + k }));

/** Everything hw4-cli runs by name: the ladder's rungs, then the product's kernels. */
export const IMPLEMENTATIONS: readonly Rung[] = [...LADDER, ...PRODUCT];

export function findRung(id: string): Rung | undefined {
  return IMPLEMENTATIONS.find((rung) => rung.id === id);
}

/** The rung hw4-cli uses when none is named (see `chooseRung` for why). */
export function fastestRung(shape: Shape, env: RunEnv): Rung {
  return chooseRung(shape, env, IMPLEMENTATIONS).rung;
}
