/**
 * The workgroups of rungs 11-13, which give each query row an invocation of its own from start to end: Br
 * invocations, and at least one row of d/4 lanes for the loads of Q_i, K_j and V_j.
 */
import type { Tiles } from '@fa/fused';

/** Invocations of a workgroup that gives each of Br query rows its own. */
export const rowPerInvocation = ({ BR }: Tiles, d: number): number => Math.max(BR, d / 4);
