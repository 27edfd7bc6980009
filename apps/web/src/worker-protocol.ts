/** Messages between the page and its compute worker (compute-worker.ts). */
import type { Shape } from '@fa/io';
import type { RowRef } from '@fa/reference';

export type WorkerRequest =
  | { type: 'oracle'; input: Float32Array; shape: Shape; rows?: readonly RowRef[] }
  | { type: 'plain-f16'; input: Float32Array; shape: Shape }
  | { type: 'cpu-rung'; id: string; input: Float32Array; shape: Shape };

export type WorkerReply = { type: 'values'; values: Float64Array } | { type: 'output'; output: Float32Array; ms: number };
