/**
 * Typed errors of the rungs and the GPU plumbing. Messages are one line: the problem and, where there is one, the fix.
 */

/** A rung cannot run a shape (for example a head size it does not support). */
export class UnsupportedShapeError extends Error {
  override readonly name = 'UnsupportedShapeError';
}

export type GpuErrorKind = 'unavailable' | 'validation' | 'out-of-memory' | 'internal' | 'device-lost' | 'limit';

/** Anything that went wrong on the GPU: no adapter, a validation error, out of memory, a lost device, a limit. */
export class GpuError extends Error {
  override readonly name = 'GpuError';
  constructor(
    readonly kind: GpuErrorKind,
    message: string,
  ) {
    super(message);
  }
}
