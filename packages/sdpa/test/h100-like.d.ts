/**
 * What the plans read of a GPU (its features, limits, subgroup sizes and subgroup-matrix configurations), described
 * without one: an H100-like adapter (48 KiB of workgroup memory, subgroups of 32, f16 subgroup matrices), so that
 * plans made in tests are the same on every machine.
 */
import { type GpuContext } from '@fa/core';
export declare const H100_LIKE: GpuContext;
