/**
 * The float32 attention kernel (attention-fp32.wgsl, lean-loop's loop with heads, groups, bands and masks): its plan for
 * a problem on an adapter. The host that compiles and runs it is tiled-host.ts, shared with attention-matrix.
 */
import { gpuHeadSizeSupport, ROW_SPLIT_LAYOUT, rowGroupTilesFor, rowSplitBytes, rowSplitTiles, type GpuContext, type KernelSource, type RowGroupLayout, type SdpaProblem } from '@fa/core';
import { COMBINE_WORKGROUP, forTensorType, type TensorType } from '../kernel-support.js';
import { tiledKernel, type TiledPlan } from '../tiled-host.js';
import code from './attention-fp32.wgsl';

export const ATTENTION_FP32_KERNEL = tiledKernel('attention-fp32.wgsl', code);

/** The kernel for tensors of `dtype`. */
export function attentionKernel(dtype: TensorType): KernelSource {
  return forTensorType(ATTENTION_FP32_KERNEL, dtype);
}

/** lean-loop's rows and register bounds: a step scores up to 16 keys, so Bc is a multiple of 16. */
const LAYOUT: RowGroupLayout = { ...ROW_SPLIT_LAYOUT, keysPerStep: 16 };

export type Fp32Plan = TiledPlan;

/** The kernel's plan for `problem` on this adapter, or why it cannot run it. */
export function fp32Plan(problem: SdpaProblem, gpu: GpuContext, lse: boolean, dtype: TensorType = 'f32'): Fp32Plan | string {
  const { d } = problem.dims;
  if (!gpu.device.features.has('subgroups')) return 'the GPU lacks feature subgroups';
  if (problem.blockMask && problem.cacheLengths) return 'a block mask with cache lengths (the tile lists are built for Lk keys)';
  const head = gpuHeadSizeSupport({ B: 1, N: 1, d });
  if (head !== true) return head;
  const tiles = rowGroupTilesFor({ B: 1, N: problem.dims.Lq, d }, gpu, LAYOUT, rowSplitTiles);
  if (typeof tiles === 'string') return tiles;
  const { H, BC, WG } = tiles;
  const blocks = problem.blockMask;
  const BR = (WG / H) * 2;
  const blockTiles = blocks !== undefined && blocks.rows % BR === 0 && blocks.keys % BC === 0;
  return {
    id: 'attention-fp32',
    kernel: attentionKernel(dtype),
    dtype,
    constants: {
      D: d,
      H,
      BC,
      KEYS: H === 1 ? 16 : 8,
      WG,
      PREFETCH: tiles.prefetch ? 1 : 0,
      CW: COMBINE_WORKGROUP,
    },
    switches: { mask: problem.mask ? 1 : 0, blocks: blocks ? 1 : 0, blockTiles: blockTiles ? 1 : 0, writeLse: lse ? 1 : 0, cached: problem.cacheLengths ? 1 : 0 },
    BR,
    BC,
    workgroupBytes: rowSplitBytes(d, tiles),
    summary: `H = ${H}, Bc = ${BC}, ${WG} invocations`,
  };
}

