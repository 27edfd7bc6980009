/**
 * Rung 24, resident-o: staged-matrix with O accumulated in the matrix units for eight tiles at a time between additions
 * to O in f32 registers, the softmax's rescale lazy (a flush when a row's maximum moves), and the K and V tiles copied
 * at different points of the tile: no O update per tile and three waits instead of four (resident-o.wgsl). Same tiles
 * and subgroups as rung 23.
 */
import type { Shape } from '@fa/io';
import { matrixRung, scratchRows, type MatrixPlan } from '../matrix-rung.js';
import { stagedWorkgroupBytes } from '../23-staged-matrix/staged-matrix.js';
import code from './resident-o.wgsl';

export const RESIDENT_O_KERNEL = { label: 'resident-o.wgsl', code };

/** Most subgroups per workgroup: rung 23's four (the Q staging holds 2·16·NSG rows in the 128 rows of the K/V tiles). */
const RESIDENT_MAX_SUBGROUPS = 4;
/** Bytes of workgroup memory besides rung 23's: `movedAt`, one vec4<u32>. */
const MOVED_AT_BYTES = 16;

/** Workgroup memory of `main` with NSG subgroups at head size d. */
export function residentWorkgroupBytes(NSG: number, d: number): number {
  return stagedWorkgroupBytes(NSG, d) + MOVED_AT_BYTES;
}

/** As many subgroups per workgroup as fit `workgroupLimit`, as in rung 23. */
export function residentPlan({ N, d }: Shape, workgroupLimit: number): MatrixPlan {
  let NSG = RESIDENT_MAX_SUBGROUPS;
  while (NSG > 1 && residentWorkgroupBytes(NSG, d) > workgroupLimit) NSG /= 2;
  return { overrides: { NSG }, rowsPerWorkgroup: 16 * NSG, workgroupBytes: residentWorkgroupBytes(NSG, d), NP: scratchRows(N) };
}

export const residentO = matrixRung({
  id: 'resident-o',
  title: 'GPU, tensor cores with error compensation, O accumulated in the matrix units between flushes, lazy rescale',
  delta:
    "Rung 23 with each tile's P̃V_j accumulated straight into the matrix units' result fragments, added to O in f32 " +
    'registers every eight tiles or when a row maximum moves past 2^8 (lazy rescale), and the K and V copies placed so ' +
    'that the workgroup waits three times per tile instead of four.',
  kernel: RESIDENT_O_KERNEL,
  parts: 2,
  plan: residentPlan,
  mainReads: 'qkv16v',
});
