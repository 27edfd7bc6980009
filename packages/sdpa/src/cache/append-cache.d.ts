/**
 * A KV cache that grows in place (append-cache.wgsl): the new rows of K and V copied into the caller's preallocated
 * cache at each batch's valid length, and the lengths advanced, on the GPU, in the caller's command encoder. The
 * attention prepared with `cacheLengths` and encoded after it in the same encoder reads the new lengths.
 */
import { type GpuContext, type SdpaLayout } from '@fa/core';
import { type TensorType } from '../kernel-support.js';
export declare const APPEND_CACHE_KERNEL: {
    label: string;
    code: string;
};
export interface CacheAppendDims {
    readonly B: number;
    /** Key/value heads. */
    readonly Hkv: number;
    /** Rows per (batch, head) the cache holds: the attention's Lk. */
    readonly Lk: number;
    /** New rows per (batch, head) each append brings. */
    readonly Lnew: number;
    readonly d: number;
}
export interface CacheAppendOptions {
    /** The layout of the cache and of the new rows: 'bhsd' [B, H, L, d] (default) or 'bshd' [B, L, H, d]. */
    readonly layout?: SdpaLayout;
    readonly dtype?: TensorType;
}
/** The caller's buffers (STORAGE): the caches, the new rows ([B, Hkv, Lnew, d] in the layout) and B u32 lengths. */
export interface CacheAppendBuffers {
    readonly k: GPUBuffer;
    readonly v: GPUBuffer;
    readonly kNew: GPUBuffer;
    readonly vNew: GPUBuffer;
    readonly cacheLengths: GPUBuffer;
}
export interface PreparedCacheAppend {
    /**
     * Records the copy and the advance of the lengths into `encoder` (one compute pass). Rows past the cache's Lk are
     * dropped and a length stops at Lk (`lengthsAfter` says what the host expects).
     */
    encode(encoder: GPUCommandEncoder, buffers: CacheAppendBuffers): void;
    /** Frees its own uniform buffer; the caller's buffers and device are left alone. */
    dispose(): void;
    /** @deprecated use dispose() */
    destroy(): void;
}
/** The lengths after one append: each grows by Lnew; a one-line error when one is not an integer from 0 to Lk, or would pass Lk. */
export declare function lengthsAfter(lengths: ArrayLike<number>, dims: CacheAppendDims): number[];
export declare function prepareCacheAppend(gpu: GpuContext, dims: CacheAppendDims, options?: CacheAppendOptions): Promise<PreparedCacheAppend>;
