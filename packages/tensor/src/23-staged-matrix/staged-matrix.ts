/**
 * Rung 23, staged-matrix: rung 17's compensated products with K_j and V_j staged once per workgroup in padded
 * workgroup memory for NSG subgroups of 16 query rows each, and the softmax and O kept by invocation pairs per row
 * (staged-matrix.wgsl).
 */
import type { Shape } from '@fa/io';
import { matrixRung, scratchRows, type MatrixPlan } from '../matrix-rung.js';
import code from './staged-matrix.wgsl';

export const STAGED_MATRIX_KERNEL = { label: 'staged-matrix.wgsl', code };

/** Keys per tile (BC in the kernel). */
const STAGED_BC = 32;
/**
 * Most subgroups per workgroup. In the subgroup-matrix microbenchmark (docs/subgroup-matrix-bench.md) four subgroups
 * sharing a padded tile ran its softmax loop at 51.2 TFLOP/s against 29.5 with one; at d = 64 more do not fit 48 KiB,
 * and Q_i's two parts (2·16·NSG rows) are staged through the 4·BC rows of the K/V tiles.
 */
const STAGED_MAX_SUBGROUPS = 4;

/**
 * Workgroup memory of `main` with NSG subgroups at head size d: the K and V tiles' high and low parts (BC rows of
 * d + 8 f16), per subgroup an S / P̃V_j tile (16 rows of max(BC, d) + 4 f32) and two P̃ tiles (16 rows of BC + 8 f16).
 */
export function stagedWorkgroupBytes(NSG: number, d: number): number {
  const tiles = 4 * STAGED_BC * (d + 8) * 2;
  const scores = 16 * NSG * (Math.max(STAGED_BC, d) + 4) * 4;
  const probabilities = 2 * 16 * NSG * (STAGED_BC + 8) * 2;
  return tiles + scores + probabilities;
}

/**
 * The plan of a kernel built on staged-matrix.wgsl whose workgroup memory is `bytes(NSG, d)`: as many subgroups per
 * workgroup as fit `workgroupLimit` (four at d ≤ 64 in the H100's 48 KiB, one at d = 128).
 */
export function subgroupPlan(bytes: (NSG: number, d: number) => number): (shape: Shape, workgroupLimit: number) => MatrixPlan {
  return ({ N, d }, workgroupLimit) => {
    let NSG = STAGED_MAX_SUBGROUPS;
    while (NSG > 1 && bytes(NSG, d) > workgroupLimit) NSG /= 2;
    return { overrides: { NSG }, rowsPerWorkgroup: 16 * NSG, workgroupBytes: bytes(NSG, d), NP: scratchRows(N) };
  };
}

export const stagedPlan = subgroupPlan(stagedWorkgroupBytes);

export const stagedMatrix = matrixRung({
  id: 'staged-matrix',
  parent: 'compensated-matrix',
  title: 'GPU, tensor cores with error compensation, K_j and V_j staged once per workgroup for four subgroups, softmax by row pairs',
  delta: "Rung 17's three products per multiply, with the K and V tiles copied once into padded workgroup memory and shared by four subgroups, and each query row's softmax and O kept by two invocations.",
  kernel: STAGED_MATRIX_KERNEL,
  parts: 2,
  plan: stagedPlan,
  mainReads: 'qkv16v',
});
