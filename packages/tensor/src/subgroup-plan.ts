/**
 * The plan of the staged tensor-core rungs 23-25: NSG subgroups of 16 query rows each share the K and V tiles staged in
 * workgroup memory, as many as the kernel's declared workgroup memory lets fit the adapter.
 */
import type { KernelSource } from '@fa/core';
import type { Shape } from '@fa/io';
import { matrixWorkgroupBytes, scratchRows, type MatrixPlan } from './matrix-rung.js';

/**
 * Most subgroups per workgroup. In the subgroup-matrix microbenchmark (docs/subgroup-matrix-bench.md) four subgroups
 * sharing a padded tile ran its softmax loop at 51.2 TFLOP/s against 29.5 with one; at d = 64 more do not fit 48 KiB,
 * and Q_i's two parts (2·16·NSG rows) are staged through the 4·BC rows of the K/V tiles.
 */
const STAGED_MAX_SUBGROUPS = 4;

/**
 * The plan of a kernel built on staged-matrix.wgsl: as many subgroups per workgroup as its workgroup memory lets fit
 * `workgroupLimit` (four at d ≤ 64 in the H100's 48 KiB, one at d = 128).
 */
export function subgroupPlan(kernel: KernelSource): (shape: Shape, workgroupLimit: number) => MatrixPlan {
  return ({ N, d }, workgroupLimit) => {
    let NSG = STAGED_MAX_SUBGROUPS;
    while (NSG > 1 && matrixWorkgroupBytes(kernel, d, { NSG }) > workgroupLimit) NSG /= 2;
    return { overrides: { NSG }, rowsPerWorkgroup: 16 * NSG, NP: scratchRows(N) };
  };
}
