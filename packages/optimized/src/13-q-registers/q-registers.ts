/**
 * Rung 13, q-registers: rung 12's kernel with each invocation's query row, scores and O row in registers
 * (q-registers.wgsl, a copy of bank-free.wgsl). Workgroup memory holds only K_jᵀ and V_j, so it no longer sets Br:
 * 64 query rows per workgroup and 32 keys per tile (each balanced over N), fewer keys where d is so large that
 * K_jᵀ and V_j would not fit.
 */
import { formatBytes, type Shape } from '@fa/io';
import { gpuHeadSizeSupport, singlePassRung, type GpuContext } from '@fa/core';
import { tileBytes, type Tiles } from '@fa/fused';
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
    const Tr = Math.ceil(N / tiles.BR);
    const WG = rowPerInvocation(tiles, d);
    return {
      constants: { D: d, BR: tiles.BR, BC: tiles.BC, WG },
      workgroups: (batches) => batches * Tr,
      uniforms: (batches) => ({ N, batches, scale: 1 / Math.sqrt(d) }),
      summary: `Br = ${tiles.BR}, Bc = ${tiles.BC}, ${WG} invocations`,
    };
  },
});
