/**
 * The float32 attention kernel (attention-fp32.wgsl, lean-loop's loop with heads, groups, bands and masks): its plan for
 * a problem on an adapter. The host that compiles and runs it is tiled-host.ts, shared with attention-matrix.
 */
import { type GpuContext, type KernelSource, type SdpaProblem } from '@fa/core';
import type { DecodeTuning } from '../decode/attention-decode.js';
import { type TensorType } from '../kernel-support.js';
import { type TiledPlan } from '../tiled-host.js';
export declare const ATTENTION_FP32_KERNEL: KernelSource;
/** The kernel for tensors of `dtype`. */
export declare function attentionKernel(dtype: TensorType): KernelSource;
export type Fp32Plan = TiledPlan;
/**
 * Whether a problem has no band, element or block mask, cache lengths, softcap, ALiBi slopes, sinks or score and mask
 * functions, and K and V
 * rows D/4 vec4s apart ([B, H, L, d], or one KV head): the kernel is then compiled with GENERAL = 0, their tests fold
 * away and K/V tiles are read as one run. One constant for all of it, so that a head size compiles at most two
 * variants. Measured on the H100 (hw4's shapes as one head per batch, ms, lean-loop beside it): docs/sdpa.md.
 */
export declare function plainProblem(problem: SdpaProblem): boolean;
/** The kernel's plan for `problem` on this adapter, or why it cannot run it; `tuning` sets sizes instead of the plan's own, for experiments. */
export declare function fp32Plan(problem: SdpaProblem, gpu: GpuContext, lse: boolean, dtype?: TensorType, tuning?: DecodeTuning): Fp32Plan | string;
