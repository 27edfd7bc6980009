import type { AdapterReport, GpuContext, RunEnv } from '@fa/core';

/** An H100's limits, as the rungs' plans read them. */
const LIMITS: AdapterReport['limits'] = {
  maxComputeWorkgroupStorageSize: 49152,
  maxStorageBufferBindingSize: 2 ** 31 - 4,
  maxBufferSize: 2 ** 40,
  maxComputeInvocationsPerWorkgroup: 1024,
  maxComputeWorkgroupSizeX: 1024,
  maxComputeWorkgroupSizeY: 1024,
  maxComputeWorkgroupSizeZ: 64,
  maxComputeWorkgroupsPerDimension: 65535,
  maxStorageBuffersPerShaderStage: 10,
};

export type PretendReport = Partial<Omit<AdapterReport, 'limits'>> & { limits?: Partial<AdapterReport['limits']> };

/**
 * A run environment with a pretend GPU: only what `canRun`, the rungs' plans and the automatic choice read. `report`
 * replaces fields of a 32-wide-subgroup adapter with an H100's limits; `subgroupMatrixConfigs` is its adapter info's.
 */
export function pretendEnv(report: PretendReport, subgroupMatrixConfigs: readonly object[] = []): RunEnv {
  const full: AdapterReport = {
    vendor: 'acme',
    architecture: '',
    device: 'gpu-1',
    description: '',
    features: ['subgroups', 'timestamp-query'],
    isFallbackAdapter: false,
    subgroupMinSize: 32,
    subgroupMaxSize: 32,
    ...report,
    limits: { ...LIMITS, ...report.limits },
  };
  const gpu = { report: full, adapter: { info: { subgroupMatrixConfigs } }, device: { features: new Set(full.features) }, hasTimestamps: true };
  return { gpu: gpu as unknown as GpuContext, threads: 2 };
}
