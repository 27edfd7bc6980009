/**
 * Rung 24, resident-o: staged-matrix with O accumulated in the matrix units for 256 keys at a time between additions
 * to O in f32 registers, the softmax's rescale lazy (a flush when a row's maximum moves), and the K and V tiles copied
 * at different points of the tile: no O update per tile and three waits instead of four (resident-o.wgsl). Same tiles
 * and subgroups as rung 23, except at d = 112 and 128: 16-key tiles, four subgroups instead of two.
 */
import { subgroupPlan } from '@fa/core';
import { matrixRung } from '../matrix-rung.js';
import code from './resident-o.wgsl';

export const RESIDENT_O_KERNEL = { label: 'resident-o.wgsl', code };

/**
 * As many subgroups per workgroup as fit, as in rung 23 (its workgroup memory holds 16 bytes more: `movedAt`), with S
 * tiles d columns wide unless BC-wide ones fit more subgroups, and 16-key tiles where 32-key ones fit fewer than four
 * (d = 112, 128).
 */
export const residentOPlan = subgroupPlan(RESIDENT_O_KERNEL, { wideUnlessFewerSubgroups: true, shortTilesUnlessFull: true });

export const residentO = matrixRung({
  id: 'resident-o',
  parent: 'staged-matrix',
  title: 'GPU, tensor cores with error compensation, O accumulated in the matrix units between flushes, lazy rescale',
  delta:
    "Rung 23 with each tile's P̃V_j accumulated straight into the matrix units' result fragments, added to O in f32 " +
    'registers every 256 keys or when a row maximum moves past 2^8 (lazy rescale), and the K and V copies placed so ' +
    'that the workgroup waits three times per tile instead of four.',
  kernel: RESIDENT_O_KERNEL,
  parts: 2,
  plan: residentOPlan,
  mainReads: 'qkv16v',
});
