/**
 * The matrix-unit attention kernel (attention-matrix.wgsl, resident-o's loop with attention-fp32's heads, groups, bands
 * and masks): its plan for a problem on an adapter. It runs on tiled-host.ts, as attention-fp32 does.
 */
import { type GpuContext, type KernelSource, type SdpaProblem } from '@fa/core';
import type { DecodeTuning } from '../decode/attention-decode.js';
import { type TensorType } from '../kernel-support.js';
import { type TiledPlan } from '../tiled-host.js';
export declare const ATTENTION_MATRIX_KERNEL: KernelSource;
/**
 * The kernel's plan for `problem`, or why it cannot run it. f16 tensors take one f16 part per operand (nothing is lost
 * in the conversion); f32 tensors take two (high and low, three products each: fp32-grade, as rung 17). `tuning` sets
 * sizes instead of the plan's own, for experiments (the bench's FA_SDPA_TUNING).
 */
export declare function matrixPlan(problem: SdpaProblem, gpu: GpuContext, lse: boolean, dtype: TensorType, tuning?: DecodeTuning): TiledPlan | string;
