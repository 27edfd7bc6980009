/**
 * The hw4 format's problem through the product: a file of B batches, each one head of N query rows, N keys and head
 * size d, becomes SdpaDims { B, Hq: 1, Hkv: 1, Lq: N, Lk: N, d } with the default scale 1/√d, run by attention-fp32 as a
 * rung, so that hw4-cli's streaming, its memory bound and its proven error bound serve the library's kernel unchanged.
 *
 * The file holds each batch's Q, K and V one after the other, the layout the rungs read. The kernel reads them where
 * they lie: Q, K and V are bound to the one input buffer, with a batch stride of 3·N·d and K and V starting N·d and
 * 2·N·d in (`TensorPlacement`), and O is written N·d per batch. Nothing is copied or rearranged on the GPU.
 */
import { type RungDefinition, type SdpaProblem } from '@fa/core';
import type { Shape } from '@fa/io';
import { type TensorPlacement } from './tiled-host.js';
/** The library's problem for an hw4 shape: one head per batch, Lq = Lk = N, scale 1/√d. */
export declare function hw4Problem({ B, N, d }: Shape): SdpaProblem;
/** Where hw4's Q, K, V and O lie, in vec4s: per batch Q, K, V of N·d floats each in one buffer; O, N·d per batch. */
export declare function hw4Placement({ N, d }: Shape): TensorPlacement;
/**
 * The product's float32 kernel as hw4-cli runs it (`--impl attention-fp32`, and the automatic choice): not a rung of the
 * ladder but the kernel the lessons led to, promoted from rung 20 lean-loop (docs/sdpa.md).
 */
export declare const hw4AttentionFp32: RungDefinition;
