/**
 * What the plans read of a GPU (its features, limits, subgroup sizes and subgroup-matrix configurations), described
 * without one: an H100-like adapter (48 KiB of workgroup memory, subgroups of 32, f16 subgroup matrices), so that
 * plans made in tests are the same on every machine.
 */
import { SUBGROUP_MATRIX_FEATURE } from '@fa/core';
export const H100_LIKE = {
    device: { features: new Set(['subgroups', 'shader-f16', 'timestamp-query', SUBGROUP_MATRIX_FEATURE]) },
    adapter: { info: { subgroupMatrixConfigs: [{ componentType: 'f16', resultComponentType: 'f32', M: 16, N: 16, K: 16 }] } },
    report: {
        subgroupMinSize: 32,
        subgroupMaxSize: 32,
        limits: { maxComputeWorkgroupStorageSize: 49152, maxStorageBufferBindingSize: 2147483644, maxBufferSize: 2 ** 40 },
    },
};
//# sourceMappingURL=h100-like.js.map