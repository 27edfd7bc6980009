/**
 * Rung 13, q-registers: rung 12's kernel with each invocation's query row, scores and O row in registers
 * (q-registers.wgsl, a copy of bank-free.wgsl). Workgroup memory holds only K_jᵀ and V_j, so it no longer sets Br:
 * 64 query rows per workgroup and 32 keys per tile (each balanced over N), fewer keys where d is so large that
 * K_jᵀ and V_j would not fit.
 */
import { formatBytes, type Shape } from '@fa/io';
import { gpuHeadSizeSupport, singlePassRung, type GpuContext } from '@fa/core';
import { tileBytes, tilesPlan, type Tiles } from '@fa/fused';
import { rowPerInvocation } from '../plans/row-per-invocation.js';
import code from './q-registers.wgsl';

const Q_REGISTERS_KERNEL = { label: 'q-registers.wgsl', code };

/** Query rows per workgroup: one invocation each, two warps of 32. */
const Q_REGISTERS_ROWS = 64;
/**
 * Keys per tile: each is a register of every invocation (its score) and 2·d floats of workgroup memory, so more
 * keys mean fewer barriers per key but fewer warps per SM. At most 64, the size of the kernel's score array.
 */
const Q_REGISTERS_MAX_KEYS = 32;
/** The length of the kernel's register row of scores (its MAX_BC): the most keys per tile it can hold. */
const Q_REGISTERS_MAX_SCORES = 64;

/** n split into ⌈n/most⌉ tiles of equal size (the last no smaller than the rest by more than one). */
const balanced = (n: number, most: number): number => Math.ceil(n / Math.ceil(n / most));

/**
 * Br = 64 rows balanced over N; Bc the most keys (up to Q_REGISTERS_MAX_KEYS, balanced over N) whose K_jᵀ and V_j
 * fit `limit` (Br takes no workgroup memory).
 */
function qRegistersTiles(limit: number, d: number, N: number): Tiles | undefined {
  const BR = balanced(N, Q_REGISTERS_ROWS);
  for (let BC = Math.min(Q_REGISTERS_MAX_KEYS, N); BC >= 1; BC--) {
    if (tileBytes(Q_REGISTERS_KERNEL, d, { BR, BC }) <= limit) return { BR, BC: balanced(N, BC) };
  }
  return undefined;
}

export const qRegisters = singlePassRung({
  id: 'q-registers',
  parent: 'bank-free',
  title: 'GPU, bank-free with each query row, its scores and its O row in registers: 64 rows per workgroup',
  delta: 'Keeps each invocation’s q row, scores and O accumulator in registers, so workgroup memory holds only K_jᵀ and V_j and Br is 64.',
  kernel: Q_REGISTERS_KERNEL,
  plan: (shape: Shape, gpu: GpuContext) => {
    const head = gpuHeadSizeSupport(shape);
    if (head !== true) return head;
    const { N, d } = shape;
    const limit = gpu.report.limits.maxComputeWorkgroupStorageSize;
    const tiles = qRegistersTiles(limit, d, N);
    if (!tiles) return `tiles for d = ${d} need ${formatBytes(tileBytes(Q_REGISTERS_KERNEL, d, { BR: balanced(N, Q_REGISTERS_ROWS), BC: 1 }))} of workgroup memory, over this GPU's ${formatBytes(limit)}`;
    return tilesPlan(shape, tiles, rowPerInvocation(tiles, d));
  },
  tiles: {
    axes: [
      { name: 'BR', meaning: 'query rows per workgroup (Br, one invocation each)', values: [16, 32, 64, 128, 256] },
      { name: 'BC', meaning: 'keys per tile (Bc)', values: [8, 16, 32, 64] },
    ],
    plan: (shape, _gpu, { BR = 0, BC = 0 }) => {
      const head = gpuHeadSizeSupport(shape);
      if (head !== true) return head;
      if (BR < 1) return `Br = ${BR}: at least one query row per workgroup`;
      if (BC < 1 || BC > Q_REGISTERS_MAX_SCORES) return `Bc = ${BC}: each invocation holds a tile's scores in an array of ${Q_REGISTERS_MAX_SCORES}, so 1 ≤ Bc ≤ ${Q_REGISTERS_MAX_SCORES}`;
      return tilesPlan(shape, { BR, BC }, rowPerInvocation({ BR, BC }, shape.d));
    },
  },
});
