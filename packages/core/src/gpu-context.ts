/**
 * The GPU a rung runs on: adapter, device and what they offer. Browser-safe: only `./node` touches Dawn.
 * In a browser, build one with `createGpuContext(await navigator.gpu.requestAdapter())`, or, where the application
 * already has its device, with `gpuContextFromDevice(adapter, device)`.
 */
import { GpuError } from './errors.js';

/** Optional features the rungs can use; each is requested when the adapter has it. */
export const WANTED_FEATURES: readonly GPUFeatureName[] = [
  'shader-f16',
  'subgroups',
  'timestamp-query',
  'chromium-experimental-subgroup-matrix' as GPUFeatureName,
];

/** Limits the rungs need at the adapter's maximum (device defaults are far lower, e.g. 16 KiB workgroup storage). */
export const WANTED_LIMITS = [
  'maxComputeWorkgroupStorageSize',
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupSizeY',
  'maxComputeWorkgroupSizeZ',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
] as const;

export type WantedLimit = (typeof WANTED_LIMITS)[number];

export interface AdapterReport {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  /** Features the device was created with. */
  features: string[];
  limits: Record<WantedLimit, number>;
  /** A software implementation (e.g. Mesa's lavapipe): slower than the multi-threaded CPU rung. */
  isFallbackAdapter: boolean;
  subgroupMinSize?: number;
  subgroupMaxSize?: number;
  /**
   * Whether Dawn clamps every index the compiler cannot prove in range (its robustness transform). Browsers always
   * do; in Node @fa/core/node turns it off unless asked (FA_BOUNDS_CHECKS=1). Absent: on.
   */
  boundsChecks?: boolean;
}

export interface GpuContext {
  readonly adapter: GPUAdapter;
  readonly device: GPUDevice;
  readonly report: AdapterReport;
  readonly hasTimestamps: boolean;
  /** Rejects... never; resolves when the device is lost (also after destroy()). */
  readonly lost: Promise<GPUDeviceLostInfo>;
  destroy(): void;
}

/** Requests a device with every wanted feature the adapter has and the adapter's maximum wanted limits. */
export async function createGpuContext(adapter: GPUAdapter): Promise<GpuContext> {
  const requiredFeatures = WANTED_FEATURES.filter((f) => adapter.features.has(f));
  const requiredLimits: Record<string, number> = {};
  for (const name of WANTED_LIMITS) requiredLimits[name] = adapter.limits[name];
  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({ requiredFeatures, requiredLimits, label: 'fa-device' });
  } catch (error) {
    throw new GpuError('unavailable', `the GPU adapter refused a device: ${oneLine(error)}`);
  }
  const report = describe(adapter, device);
  return {
    adapter,
    device,
    report,
    hasTimestamps: device.features.has('timestamp-query'),
    lost: device.lost,
    destroy: () => {
      device.destroy();
    },
  };
}

/**
 * A context on a device the caller already has: nothing is requested, and `destroy()` leaves the device alone (it is
 * the caller's). Rungs see the device's own features and limits and decline, with the reason, what it cannot run:
 * request the features in `WANTED_FEATURES` and the adapter's `WANTED_LIMITS` when creating the device to let every
 * rung run.
 */
export function gpuContextFromDevice(adapter: GPUAdapter, device: GPUDevice): GpuContext {
  return {
    adapter,
    device,
    report: describe(adapter, device),
    hasTimestamps: device.features.has('timestamp-query'),
    lost: device.lost,
    destroy: () => undefined,
  };
}

function describe(adapter: GPUAdapter, device: GPUDevice): AdapterReport {
  const info = adapter.info as GPUAdapterInfo & { subgroupMinSize?: number; subgroupMaxSize?: number };
  const limits = {} as Record<WantedLimit, number>;
  for (const name of WANTED_LIMITS) limits[name] = device.limits[name];
  const report: AdapterReport = {
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device,
    description: info.description,
    features: [...device.features].map(String).sort(),
    limits,
    isFallbackAdapter: info.isFallbackAdapter || info.architecture === 'software',
  };
  if (info.subgroupMinSize !== undefined) report.subgroupMinSize = info.subgroupMinSize;
  if (info.subgroupMaxSize !== undefined) report.subgroupMaxSize = info.subgroupMaxSize;
  return report;
}

/** One line for an adapter: vendor, device or architecture, description. */
export function adapterName(report: AdapterReport): string {
  const parts = [report.vendor, report.device || report.architecture, report.description].filter((p) => p.length > 0);
  return [...new Set(parts)].join(' / ') || 'unknown adapter';
}

export function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n').map((l) => l.trim()).filter((l) => l.length > 0).join(' ');
}
