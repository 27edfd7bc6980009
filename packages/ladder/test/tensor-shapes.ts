/** The awkward shapes the tensor-core rungs are checked on (@fa/tensor's tests and the ladder's choice test). */
import type { Shape } from '@fa/io';

/** N = 1, N a multiple of no tile (77, 513), B > 1, every head size the rungs take. */
export const TENSOR_SHAPES: readonly Shape[] = [
  { B: 2, N: 1, d: 16 },
  { B: 3, N: 1, d: 128 },
  { B: 2, N: 77, d: 16 },
  { B: 2, N: 77, d: 32 },
  { B: 3, N: 77, d: 64 },
  { B: 2, N: 77, d: 80 },
  { B: 2, N: 77, d: 112 },
  { B: 2, N: 77, d: 128 },
  { B: 1, N: 513, d: 32 },
  { B: 2, N: 513, d: 64 },
  { B: 1, N: 513, d: 128 },
];
