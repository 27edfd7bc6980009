/**
 * The host of the tiled attention kernels, attention-fp32 and attention-matrix, which share bindings and a uniform: a
 * workgroup per (batch, head, query tile, range of its key tiles), the tile lists of a block mask, the key ranges under
 * a band, and the `combine` pass that merges ranges. Compiled once per problem; buffers are bound per encode.
 */
import { type GpuContext, type KernelSource, type SdpaProblem } from '@fa/core';
import { type ModPlan } from './mods/mod-host.js';
import { type KernelBuffers, type TensorType } from './kernel-support.js';
/** A tiled kernel's source: its `main` (`code`) with the shared interface and `combine` entry point appended. */
export declare function tiledKernel(label: string, code: string): KernelSource;
/** A tiled kernel's plan for one problem on one adapter. */
export interface TiledPlan {
    readonly id: 'attention-fp32' | 'attention-matrix';
    /** The kernel's source for the plan's dtype. */
    readonly kernel: KernelSource;
    readonly dtype: TensorType;
    readonly constants: Readonly<Record<string, number>>;
    /**
     * What the kernel does beyond the band, as uniforms rather than constants (one pipeline serves every mask, which
     * a software GPU would otherwise compile once per combination): mask, blocks, blockTiles, writeLse, cached, softcap,
     * alibi, sinks.
     */
    readonly switches: Readonly<Record<string, number>>;
    /** Query rows per workgroup. */
    readonly BR: number;
    /** Keys per tile. */
    readonly BC: number;
    readonly workgroupBytes: number;
    readonly summary: string;
    /** attention-fp32's score and mask functions, when the problem has them (its kernel then has them compiled in). */
    readonly mods?: ModPlan;
}
export interface TiledKernel {
    readonly plan: TiledPlan;
    /** Records one dispatch for batches batch0 … batch0 + batches − 1 (the buffers hold those batches only). */
    encode(encoder: GPUCommandEncoder, buffers: KernelBuffers, batch0: number, batches: number, timestampWrites?: GPUComputePassTimestampWrites): void;
    destroy(): void;
}
/**
 * Where Q, K, V and O lie in their bindings, in vec4s (of the tensors' type), when not in the problem's layout: the
 * strides of Q and of K and V (which share theirs), where K and V begin, and O's own strides. hw4's file holds each
 * batch's Q, K and V one after the other in one buffer (hw4-adapter.ts); O has the layout of Q otherwise.
 */
export interface TensorPlacement {
    readonly qBatch: number;
    readonly qHead: number;
    readonly qRow: number;
    readonly kvBatch: number;
    readonly kvHead: number;
    readonly kvRow: number;
    readonly kStart: number;
    readonly vStart: number;
    readonly oBatch: number;
    readonly oHead: number;
    readonly oRow: number;
}
/**
 * The kernel compiled for `problem`, with its masks and tile lists uploaded; buffers are bound per encode. `splitsSet`:
 * key ranges per row block an experiment sets instead of the rule; `placement`: where the tensors lie in their
 * bindings, when not in the problem's layout.
 */
export declare function prepareTiledKernel(gpu: GpuContext, problem: SdpaProblem, plan: TiledPlan, splitsSet?: number, placement?: TensorPlacement): Promise<TiledKernel>;
/**
 * Under a block mask, the key tiles each (batch, head, query tile) computes: those in its rows' band that some kept
 * block touches. Layout: for each (batch, head, query tile) in order, its start and count; then the tiles.
 */
export declare function tileLists(problem: SdpaProblem, plan: Pick<TiledPlan, 'BR' | 'BC'>): Uint32Array;
/** tiled-interface.wgsl's MASK_KNEE and MASK_TOP: 2^126, and 2^127 − 2^110. */
export declare const MASK_KNEE: number;
export declare const MASK_TOP: number;
/**
 * An additive mask value as the tiled kernels read it: in base 2 (their scores are scale·log2(e)·q·k), computed in
 * float64 and rounded once. x·log2(e) past ±3.4e38/log2(e) would overflow float32, and a sum or difference of scores
 * near ±3.4e38 would too (∞ − ∞ = NaN in exp2), so values past ±MASK_KNEE (x beyond ±5.9e37) are brought linearly
 * within ±MASK_TOP: float32's most negative value, −3.4028235e38 (Hugging Face's padding value), maps to −MASK_TOP, a
 * finite score like any other, not an exclusion. The map is monotone, so the order of mask values is kept; past the
 * knee, where a score (|s| < 2^101) is absorbed in s + x as float32 absorbs it in the plain computation, values within
 * about five float32 steps of each other may tie. The kernels undo the map in the log-sum-exp (naturalLse).
 * −∞ becomes MASK_EXCLUDED.
 */
export declare function maskBase2(x: number): number;
/** The element mask as the kernel reads it: additive float32 in base 2 (maskBase2), MASK_EXCLUDED for −∞ and for false. */
export declare function kernelMask(mask: NonNullable<SdpaProblem['mask']>): Float32Array;
/**
 * What the kernels' `mask` binding holds: the element mask as they read it (kernelMask), then, with ALiBi or sinks,
 * each query head's slope and sink logit in base 2 (headTerms, from uniform headTerms on), so that these take no
 * binding of their own: the tiled kernels bind 10 storage buffers already, past WebGPU's default 8 per stage.
 */
export declare function maskAndHeadTerms(problem: SdpaProblem): Float32Array | undefined;
