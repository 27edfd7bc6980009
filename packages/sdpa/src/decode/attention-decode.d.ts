/**
 * The decode kernel (attention-decode.wgsl): a few query rows per head against a long cache, the query heads of a KV
 * group together so that K and V are read once per group, keys split over workgroups and merged by `combine`.
 */
import { type GpuContext, type SdpaProblem } from '@fa/core';
import { type KernelBuffers, type TensorType } from '../kernel-support.js';
export declare const ATTENTION_DECODE_KERNEL: {
    label: string;
    code: string;
};
/** Query rows a workgroup may hold: GROUP · Lq. */
export declare const DECODE_MAX_ROWS = 32;
/** Sizes an experiment may set instead of the plan's own (the bench's FA_SDPA_TUNING). */
export interface DecodeTuning {
    /** Keys per tile (BK). */
    readonly keysPerTile?: number;
    /** Workgroups to aim for when splitting the keys. */
    readonly targetWorkgroups?: number;
    /** The tiled kernels' key ranges per row block (attention-fp32, attention-matrix), instead of their rule. */
    readonly prefillSplits?: number;
    /** attention-matrix's keys per tile (16, 32 or 64) instead of its rule. */
    readonly matrixKeysPerTile?: number;
    /** attention-matrix's subgroups per workgroup (1, 2, 4 or 8), where their workgroup memory fits. */
    readonly matrixSubgroups?: number;
    /** attention-matrix's OW: columns of O per round through the S tiles (a multiple of 16 dividing d). */
    readonly matrixColumnsPerRound?: number;
    /** attention-matrix's FLUSH (0: O rescaled in place; else tiles between flushes to f32 registers). */
    readonly matrixFlush?: number;
    /** attention-matrix's KV_TILES: 2 (K and V tiles side by side) or 1 (V in K's place) instead of its rule. */
    readonly matrixKvTiles?: number;
    /** attention-fp32's invocations per workgroup (32, 64, 128 or 256: BR = WG / H · ROWS query rows) instead of its rule. */
    readonly fp32Invocations?: number;
}
/** The keys of DecodeTuning, for the checks of the library's options and of the bench's FA_SDPA_TUNING. */
export declare const TUNING_KEYS: readonly ["keysPerTile", "targetWorkgroups", "prefillSplits", "matrixKeysPerTile", "matrixSubgroups", "matrixFlush", "matrixColumnsPerRound", "matrixKvTiles", "fp32Invocations"];
export interface DecodePlan {
    readonly dtype: TensorType;
    readonly constants: Readonly<Record<string, number>>;
    /** Keys per tile. */
    readonly BK: number;
    /** Workgroups the key splits aim for. */
    readonly targetWorkgroups: number;
    readonly summary: string;
}
/** The decode kernel's plan, or why it does not take this problem (the prefill kernel then does). */
export declare function decodePlan(problem: SdpaProblem, gpu: GpuContext, lse: boolean, dtype: TensorType, tuning?: DecodeTuning): DecodePlan | string;
export interface DecodeKernel {
    readonly plan: DecodePlan;
    encode(encoder: GPUCommandEncoder, buffers: KernelBuffers, batch0: number, batches: number, timestampWrites?: GPUComputePassTimestampWrites): void;
    destroy(): void;
}
export declare function prepareDecodeKernel(gpu: GpuContext, problem: SdpaProblem, plan: DecodePlan): Promise<DecodeKernel>;
