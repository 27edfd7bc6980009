/**
 * A context on the caller's own GPUDevice: nothing requested behind the caller's back, the device's own features and
 * limits reported, work runs on it, and destroying the context leaves the device to its owner.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { gpuContextFromDevice, prepareCopyFloor, runAll } from '../src/index.js';
import { nodeGpu } from '../src/node/index.js';

const navigatorGpu = await nodeGpu().catch(() => undefined);
let device: GPUDevice | undefined;
let adapter: GPUAdapter | null = null;
let reason: string | undefined;
if (!navigatorGpu) reason = 'the webgpu package is not installed';
else {
  adapter = await navigatorGpu.requestAdapter();
  if (!adapter) reason = 'no GPU adapter';
  else device = await adapter.requestDevice({ label: 'the application\u2019s device' });
}
const skip = device === undefined && process.env.FA_REQUIRE_GPU !== '1';
if (skip) console.warn(`own-device tests skipped: ${reason ?? ''}`);
afterAll(() => {
  device?.destroy();
});

describe.skipIf(skip)(`a GPU context on the caller's device${skip ? ` (skipped: ${reason ?? ''})` : ''}`, () => {
  it('reports the device as it is, runs on it, and leaves it alive after destroy()', async () => {
    if (!device || !adapter) throw new Error(`FA_REQUIRE_GPU=1 but ${reason ?? 'no device'}`);
    const gpu = gpuContextFromDevice(adapter, device);
    expect(gpu.device).toBe(device);
    // Created with no optional feature and default limits: the report says so, it asks for nothing more.
    expect(gpu.report.features).not.toContain('subgroups');
    expect(gpu.hasTimestamps).toBe(false);
    expect(gpu.report.limits.maxComputeWorkgroupStorageSize).toBe(device.limits.maxComputeWorkgroupStorageSize);

    const shape = { B: 3, N: 5, d: 4 };
    const input = Float32Array.from({ length: 3 * 3 * 5 * 4 }, (_, k) => k);
    const runner = await prepareCopyFloor(gpu, shape);
    const { output } = await runAll(runner, input, shape);
    expect(output.length).toBe(3 * 5 * 4);
    await runner.dispose();

    gpu.destroy();
    const stillAlive = await Promise.race([device.lost.then(() => false), new Promise((resolve) => { setTimeout(() => { resolve(true); }, 50); })]);
    expect(stillAlive).toBe(true);
    const buffer = device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE });
    buffer.destroy();
  });
});
