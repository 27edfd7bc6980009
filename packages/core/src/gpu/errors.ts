/**
 * Turning WebGPU's asynchronous error reporting into thrown, typed, one-line errors: error scopes around each
 * piece of GPU work, and a race against the device's lost promise so nothing waits forever on a dead device.
 */
import { GpuError, type GpuErrorKind } from '../errors.js';
import { oneLine, type GpuContext } from '../gpu-context.js';

const SCOPES: readonly GPUErrorFilter[] = ['validation', 'out-of-memory', 'internal'];

/**
 * Runs `work` inside validation, out-of-memory and internal error scopes; throws the first error as a GpuError.
 * `what` names the work in the message ("allocating buffers for B=4, N=1024, d=64").
 */
export async function checked<T>(gpu: GpuContext, what: string, work: () => T | Promise<T>): Promise<T> {
  const { device } = gpu;
  for (const filter of SCOPES) device.pushErrorScope(filter);
  let result: T | undefined;
  let thrown: unknown;
  try {
    result = await whileAlive(gpu, Promise.resolve(work()));
  } catch (error) {
    thrown = error;
  }
  const errors: (GPUError | null)[] = [];
  for (let i = 0; i < SCOPES.length; i++) errors.push(await whileAlive(gpu, device.popErrorScope()));
  throwFirst(errors, what);
  if (thrown !== undefined) throw thrown instanceof GpuError ? thrown : new GpuError('internal', `GPU failure while ${what}: ${oneLine(thrown)}`);
  return result as T;
}

/**
 * Runs synchronous GPU calls (encode, submit) inside the error scopes, pushing and popping them with no await in
 * between, so runs in flight at the same time never pop each other's scopes.
 */
export async function checkedSync(gpu: GpuContext, what: string, work: () => void): Promise<void> {
  const { device } = gpu;
  for (const filter of SCOPES) device.pushErrorScope(filter);
  let thrown: unknown;
  try {
    work();
  } catch (error) {
    thrown = error;
  }
  const pops = SCOPES.map(() => device.popErrorScope());
  const errors = await whileAlive(gpu, Promise.all(pops));
  throwFirst(errors, what);
  if (thrown !== undefined) throw thrown instanceof GpuError ? thrown : new GpuError('internal', `GPU failure while ${what}: ${oneLine(thrown)}`);
}

/** Throws the first error of the popped scopes (innermost first: internal, out-of-memory, validation). */
function throwFirst(errors: readonly (GPUError | null)[], what: string): void {
  const kinds: GpuErrorKind[] = ['internal', 'out-of-memory', 'validation'];
  for (let i = 0; i < errors.length; i++) {
    const error = errors[i];
    if (error) {
      const kind = kinds[i] ?? 'internal';
      const hint = kind === 'out-of-memory' ? ' (the GPU is out of memory: try a smaller input or --chunk-mb)' : '';
      throw new GpuError(kind, `GPU ${kind} error while ${what}: ${oneLine(error.message)}${hint}`);
    }
  }
}

/** Resolves with `promise`, or rejects with a GpuError if the device is lost first. */
export function whileAlive<T>(gpu: GpuContext, promise: Promise<T>): Promise<T> {
  return Promise.race([
    promise,
    gpu.lost.then((info) => {
      throw new GpuError('device-lost', `the GPU device was lost (${info.reason}): ${oneLine(info.message) || 'no message'}`);
    }),
  ]);
}
