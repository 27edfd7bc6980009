import type { GpuContext } from '@fa/core';
export declare function deviceForGroup(): {
    gpu: () => GpuContext | undefined;
    missing: () => string;
};
