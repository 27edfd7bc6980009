import { describe, expect, it } from 'vitest';
import { acquireNodeGpu } from '../src/node/index.js';
import { batchesPerRun, GpuError, prepareCopyFloor, type GpuContext } from '../src/index.js';

const acquired = await acquireNodeGpu();
const gpu: GpuContext | undefined = acquired.gpu;
const noGpu = gpu === undefined && process.env.FA_REQUIRE_GPU !== '1';
if (noGpu) console.warn(`GPU failure tests skipped: ${acquired.reason ?? ''} (set FA_REQUIRE_GPU=1 to make this a failure)`);

describe.skipIf(noGpu)(`GPU failures become typed one-line errors${noGpu ? ` (skipped: ${acquired.reason ?? ''})` : ''}`, () => {
  it('a batch over the binding limit is refused before anything is allocated, naming the limit', () => {
    if (!gpu) throw new Error(`FA_REQUIRE_GPU=1 but ${acquired.reason ?? 'no GPU'}`);
    const shape = { B: 3, N: 1 << 20, d: 64 };
    const limit = gpu.report.limits.maxStorageBufferBindingSize;
    let error: unknown;
    try {
      batchesPerRun(gpu, shape, { S: limit + 4 }, 'test');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(GpuError);
    expect((error as GpuError).kind).toBe('limit');
    expect((error as Error).message).toMatch(/needs .* for S, over this GPU's maxStorageBufferBindingSize/);
    expect(batchesPerRun(gpu, shape, { S: Math.floor(limit / 2) }, 'test')).toBe(2);
  });

  it('a lost device rejects the run with GpuError instead of hanging', async () => {
    if (!gpu) throw new Error(`FA_REQUIRE_GPU=1 but ${acquired.reason ?? 'no GPU'}`);
    const shape = { B: 2, N: 16, d: 8 };
    const runner = await prepareCopyFloor(gpu, shape);
    gpu.destroy();
    const outcome = await runner.run(new Float32Array(2 * 3 * 16 * 8), 2, new Float32Array(2 * 16 * 8)).then(
      () => 'resolved',
      (error: unknown) => error,
    );
    expect(outcome).toBeInstanceOf(GpuError);
    expect((outcome as GpuError).kind).toBe('device-lost');
    expect((outcome as Error).message).not.toContain('\n');
  });
});
