/**
 * The WGSL of score and mask functions (@fa/core's mods.ts has the contract): the caller's functions with their
 * buffers declared in group 1, appended to attention-fp32 (`modKernel`, with a few one-line changes to its loop) or to
 * the evaluation kernel of the CPU computations; and their check, which compiles each function alone first so that a
 * WGSL error is reported in one line at the caller's own line and column.
 */
import { type GpuContext, type KernelSource, type SdpaMods } from '@fa/core';
/** Group 1, binding 0 is the pre-pass's ModParams; the buffers follow in name order. */
export declare const MOD_BUFFER_FIRST_BINDING = 1;
/** The buffers' declarations: `@group(1) @binding(n) var<storage, read> NAME: array<T>;` in name order. */
export declare function modDeclarations(mods: SdpaMods): string;
/** attention-fp32 (`kernel`) with the functions compiled in: its pipelines are cached by this text. */
export declare function modKernel(kernel: KernelSource, mods: SdpaMods): KernelSource;
/** The evaluation kernel of the CPU computations with the functions. */
export declare function modEvalKernel(mods: SdpaMods): KernelSource;
/**
 * Checks the functions on `gpu` before anything compiles, each refusal one SdpaArgumentError line: a buffer named as
 * something the kernels declare; a WGSL error in a function, at its own line and column (`label:LINE:COL: message`,
 * the label the caller's name for it: 'scoreMod', or `--score-mod FILE.wgsl` in the CLI); a function whose signature
 * is not the contract's; anything that keeps the functions from compiling into attention-fp32 (`kernel`).
 */
export declare function checkModFunctions(gpu: GpuContext, mods: SdpaMods, kernel: KernelSource, labels?: {
    scoreMod: string;
    maskMod: string;
}): Promise<void>;
