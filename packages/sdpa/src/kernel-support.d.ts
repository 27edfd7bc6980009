/** What the attention kernels' hosts share: the tensor element type, strides, bands, and one bind group layout for two entry points. */
import { type GpuContext, type kernelBindings, type KernelSource, type SdpaProblem } from '@fa/core';
/** The tensors' element type in memory; the arithmetic is float32 either way. */
export type TensorType = 'f32' | 'f16';
/** Invocations per workgroup of the `combine` entry points. */
export declare const COMBINE_WORKGROUP = 64;
/** The kernel for tensors of `dtype`: for f16, its tensor access lines replaced (f16 pairs in u32s; no shader-f16 needed). */
export declare function forTensorType(kernel: KernelSource, dtype: TensorType): KernelSource;
/**
 * The largest head size of q and k, and of v, that attention-fp32 and attention-decode take (Gemma 2 and 3's d = 256):
 * a row group of H ≤ 8 invocations holds at most 8 vec4s of a row each (the kernels' C_MAX), and a tile of K_j and V_j
 * at d = 256 takes 32 KiB (8-key tiles: 16 KiB) of workgroup memory.
 */
export declare const GPU_MAX_HEAD_SIZE = 256;
/** Why a GPU kernel cannot take head sizes d (q, k) and dv (v, the output), or undefined when it can. */
export declare function headSizesReason(d: number, dv: number, most?: number): string | undefined;
/** Per-tensor strides in vec4s: batch, head, row. */
export declare function strides(layout: SdpaProblem['layout'], heads: number, rows: number, d4: number): [number, number, number];
/**
 * Strides in vec4s of the tensors of V's head size dv (= d unless the problem gives it): V's, beside K's, and the
 * output's, beside Q's.
 */
export declare function valueStrides(problem: SdpaProblem): {
    vBatch: number;
    vHead: number;
    vRow: number;
    oBatch: number;
    oHead: number;
    oRow: number;
};
/** The uniform values every kernel shares: shapes, strides, scale, band, the bits of −∞. */
export declare function commonUniforms(problem: SdpaProblem): Record<string, number>;
/**
 * The softcap's uniforms. The kernels' scores are in base 2 (s·log2 e); the softcap is applied in natural units: a
 * score times capIn = ln(2)/c is s/c, and capOut = c·log2(e) times its tanh is c·tanh(s/c) back in base 2. capIn is
 * held at 2^26 (c below 1.03e-8), so that no product overflows: there the capped scores lie within ±c·log2(e), under
 * 1.5e-8, either way, below what float32 resolves in the softmax.
 */
export declare function softcapUniforms(problem: SdpaProblem): {
    capIn: number;
    capOut: number;
};
/** The switches of the softcap, ALiBi and sinks, as the kernels' uniforms name them (1: on). */
/** Whether a problem has a softcap, ALiBi slopes or sinks (the terms the tiled kernels add to scores and to ℓ). */
export declare function hasScoreTerms(problem: SdpaProblem): boolean;
export declare function scoreTermSwitches(problem: SdpaProblem): {
    softcap: number;
    alibi: number;
    sinks: number;
};
/**
 * Each query head's ALiBi slope and sink logit in base 2 (×log2 e, computed in float64 and rounded once), as pairs
 * [slope_0, sink_0, slope_1, sink_1, …] (0 for the one not given); undefined when the problem has neither.
 */
export declare function headTerms(problem: SdpaProblem): Float32Array<ArrayBuffer> | undefined;
/**
 * One bind group layout with every binding of a kernel, so that its entry points share a bind group: the same objects
 * for every kernel of equal bindings on this device (@fa/core's cachedLayout), so that preparing a problem again, or
 * another problem with the same constants, finds its pipelines compiled (a new layout would compile them again).
 */
export declare function explicitLayout(gpu: GpuContext, bindings: ReturnType<typeof kernelBindings>, label: string): GPUPipelineLayout & {
    getBindGroupLayout(index: 0): GPUBindGroupLayout;
};
/** A tensor's buffer, or a range of it in bytes (the offset a multiple of the device's minStorageBufferOffsetAlignment). */
export type TensorBinding = GPUBuffer | {
    readonly buffer: GPUBuffer;
    readonly offset: number;
    readonly size: number;
};
/** The caller's tensors for one run of batches, as every kernel binds them: whole buffers, or ranges holding those batches. */
export interface KernelBuffers {
    readonly q: TensorBinding;
    readonly k: TensorBinding;
    readonly v: TensorBinding;
    readonly O: TensorBinding;
    /** B·Hq·Lq float32, when the kernel writes log-sum-exps. */
    readonly lse?: TensorBinding;
    /** The valid keys of every batch (u32 each, indexed from batch 0), when the problem has cache lengths. */
    readonly lengths?: GPUBuffer;
}
/** The bind group resource of a buffer or a range of one. */
export declare function bindingResource(binding: TensorBinding): GPUBufferBinding;
/**
 * A kernel's uniform buffer per run of batches (batch0, batches), written once: runs recorded into one encoder keep
 * their own values (every queue write lands before the encoder runs, so one shared buffer would hold the last run's).
 */
export declare class RunUniforms {
    private readonly device;
    private readonly owned;
    private readonly label;
    private readonly bytes;
    private readonly byRun;
    constructor(device: GPUDevice, owned: OwnedBuffers, label: string, bytes: number);
    /** The buffer of this run, made and filled with `values()` the first time. */
    of(batch0: number, batches: number, values: () => ArrayBuffer): GPUBuffer;
}
/** Storage buffers a kernel owns: made (and filled) here, destroyed together. */
export declare class OwnedBuffers {
    private readonly device;
    private readonly all;
    constructor(device: GPUDevice);
    /** A STORAGE buffer of `data` (or of `bytes` zeros), at least 16 bytes; COPY_SRC, so that the host may read it back. */
    storage(label: string, data?: ArrayBufferView, bytes?: number): GPUBuffer;
    uniform(label: string, bytes: number): GPUBuffer;
    destroy(): void;
}
