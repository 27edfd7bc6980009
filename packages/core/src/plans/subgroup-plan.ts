/**
 * The plan of the staged tensor-core rungs 23-25: NSG subgroups of 16 query rows each share the K and V tiles staged in
 * workgroup memory, as many as the kernel's declared workgroup memory lets fit the adapter.
 */
import type { Shape } from '@fa/io';
import type { KernelSource } from '../gpu/pipeline.js';
import { matrixWorkgroupBytes, scratchRows, type MatrixPlan } from './subgroup-matrix.js';

/**
 * Most subgroups per workgroup. In the subgroup-matrix microbenchmark (docs/subgroup-matrix-bench.md) four subgroups
 * sharing a padded tile ran its softmax loop at 51.2 TFLOP/s against 29.5 with one; at d = 64 more do not fit 48 KiB,
 * and Q_i's two parts (2·16·NSG rows) are staged through the 4·BC rows of the K/V tiles.
 */
const STAGED_MAX_SUBGROUPS = 4;

/**
 * The plan of a kernel built on staged-matrix.wgsl: as many subgroups per workgroup as its workgroup memory lets fit
 * `workgroupLimit` (four at d ≤ 64 in the H100's 48 KiB, one at d = 128 for rung 23).
 *
 * `wideUnlessFewerSubgroups` (rung 24): the kernel's S tiles are d columns wide, O flushed through them in one round
 * (OW = d), unless tiles of the kernel's own OW (BC columns) fit more subgroups. On the H100 the narrow tiles took
 * resident-o from 22.3 to 8.4 ms at 4×8192×128 and from 4.8 to 2.6 at 4×8192×80; at d = 64 they were no faster (10.97
 * against 10.96 ms at 2×32768×64).
 *
 * `shortTilesUnlessFull` (rung 24): where the kernel's 32-key tiles fit fewer than the most subgroups, tiles of 16 keys
 * (BC = 16) if they fit more, or if 32-key tiles do not fit at all. On the H100 they took resident-o from 7.90 to 3.73
 * ms at 4×8192×128 (four subgroups instead of two); at 4×8192×80, where 32-key tiles fit four, a first form of the
 * 16-key kernel ran alike (2.57 against 2.60 ms).
 */
export function subgroupPlan(
  kernel: KernelSource,
  { wideUnlessFewerSubgroups = false, shortTilesUnlessFull = false } = {},
): (shape: Shape, workgroupLimit: number) => MatrixPlan {
  return ({ N, d }, workgroupLimit) => {
    const subgroups = (overrides: Record<string, number>): number => {
      let NSG = STAGED_MAX_SUBGROUPS;
      while (NSG > 1 && matrixWorkgroupBytes(kernel, d, { NSG, ...overrides }) > workgroupLimit) NSG /= 2;
      return NSG;
    };
    const plan = (NSG: number, overrides: Record<string, number> = {}): MatrixPlan => ({ overrides: { NSG, ...overrides }, rowsPerWorkgroup: 16 * NSG, NP: scratchRows(N) });
    const narrow = subgroups({});
    if (shortTilesUnlessFull && narrow < STAGED_MAX_SUBGROUPS) {
      const short = subgroups({ BC: 16 });
      const narrowFits = matrixWorkgroupBytes(kernel, d, { NSG: narrow }) <= workgroupLimit;
      if (short > narrow || !narrowFits) return plan(short, { BC: 16 });
    }
    if (!wideUnlessFewerSubgroups) return plan(narrow);
    const wide = subgroups({ OW: d });
    return wide < narrow ? plan(narrow) : plan(wide, { OW: d });
  };
}
