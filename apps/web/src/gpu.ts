/**
 * The reader's GPU: an adapter from navigator.gpu, a device with every feature the rungs can use that the adapter has
 * (subgroups, shader-f16, timestamp-query, ...) and the adapter's largest limits, wrapped with gpuContextFromDevice.
 * Without WebGPU the page still runs the CPU rungs and says why the GPU rungs cannot.
 */
import { gpuContextFromDevice, oneLine, WANTED_FEATURES, WANTED_LIMITS, type RunEnv } from '@fa/core';

export async function browserEnv(): Promise<RunEnv> {
  const noGpu = (reason: string): RunEnv => ({ threads: 1, gpuUnavailableReason: reason });
  if (!('gpu' in navigator)) return noGpu('this browser offers no WebGPU (navigator.gpu is missing)');
  let adapter: GPUAdapter | null;
  try {
    adapter = await navigator.gpu.requestAdapter({ powerPreference: 'high-performance' });
  } catch (error) {
    return noGpu(`requestAdapter failed: ${oneLine(error)}`);
  }
  if (!adapter) return noGpu('navigator.gpu.requestAdapter() found no adapter');
  const requiredFeatures = WANTED_FEATURES.filter((f) => adapter.features.has(f));
  const requiredLimits: Record<string, number> = {};
  for (const name of WANTED_LIMITS) requiredLimits[name] = adapter.limits[name];
  try {
    const device = await adapter.requestDevice({ requiredFeatures, requiredLimits, label: 'fa-web' });
    device.addEventListener('uncapturederror', (event) => {
      console.error(`WebGPU error: ${event.error.message}`);
    });
    return { threads: 1, gpu: gpuContextFromDevice(adapter, device) };
  } catch (error) {
    return noGpu(`the adapter refused a device: ${oneLine(error)}`);
  }
}
