/**
 * The host side of score and mask functions: their buffers bound in group 1 (the caller's typed arrays uploaded once,
 * or the caller's GPU buffers), the pipeline layout of both groups, the pre-pass that lists the visible key tiles of a
 * mask function on the GPU before each dispatch of attention-fp32 (`prepareMods`, for tiled-host.ts), and the functions
 * evaluated for the CPU computations (`evaluateMods`).
 */
import { type GpuContext, type SdpaMods, type SdpaProblem } from '@fa/core';
import { type ModValues } from '@fa/reference';
import { OwnedBuffers } from '../kernel-support.js';
/** What a tiled plan adds for score and mask functions. */
export interface ModPlan {
    readonly mods: SdpaMods;
    /** Whether the pre-pass writes tile lists (a mask function without cache lengths, lists within one binding). */
    readonly lists: boolean;
    /** u32s of the tile lists: 2 per (batch, head, query tile), then ⌈Lk/BC⌉ slots each. */
    readonly listWords: number;
}
/** The tile lists' size for a mask function's pre-pass: 2 + ⌈Lk/BC⌉ u32s per (batch, head, query tile). */
export declare function modListWords(problem: SdpaProblem, BR: number, BC: number): number;
/** The functions' share of a tiled kernel: its pipeline layout, entry points, tile lists, and the pre-pass per run. */
export interface PreparedMods {
    readonly layout: GPUPipelineLayout;
    /** The pre-pass's entry point, when it writes tile lists. */
    readonly entryPoints: readonly 'modTiles'[];
    /** The tile lists the pre-pass writes, when it does. */
    readonly tileLists?: GPUBuffer;
    /**
     * Whether the lists stay as they are once written: every mod buffer is the caller's typed array, uploaded once, so
     * mask_mod reads the same values in every run. The host then writes them once, when it prepares the kernel, as
     * FlexAttention builds its block mask once; with a caller's GPU buffer (which may change between runs) the pre-pass
     * runs before each dispatch.
     */
    readonly listsFixed: boolean;
    /**
     * Binds group 1 and, with lists, dispatches the pre-pass for a run of `batches` batches (group 0 bound already);
     * `prePass` false: only group 1 (the lists were written when the kernel was prepared).
     */
    encode(pass: GPUComputePassEncoder, modTiles: GPUComputePipeline | undefined, batches: number, prePass?: boolean): void;
}
/** Group 1 and the pre-pass of a tiled plan's functions (`group0`: the kernel's own layout). */
export declare function prepareMods(gpu: GpuContext, problem: SdpaProblem, plan: {
    readonly BR: number;
    readonly BC: number;
    readonly mods: ModPlan;
}, group0: GPUBindGroupLayout, owned: OwnedBuffers): PreparedMods;
/**
 * The functions' values over [B, Hq, Lq, Lk] for the CPU computations (@fa/reference's ModValues): score_mod of each
 * float64 score s = scale·q·k rounded to float32 (held within ±2^64 as the kernel holds it), and mask_mod, computed on
 * `gpu`. One line refuses a problem of more than 2^25 scores.
 */
export declare function evaluateMods(gpu: GpuContext, problem: SdpaProblem, q: Float32Array, k: Float32Array): Promise<ModValues>;
