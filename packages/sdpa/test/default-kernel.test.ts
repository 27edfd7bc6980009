/**
 * The kernel a problem gets by default on an adapter with f16 subgroup matrices (described without a GPU, as the
 * kernel snapshots' is): attention-matrix for f16 tensors where it takes the problem, attention-fp32 for f32 tensors
 * and for what attention-matrix declines, the decode kernel for a few query rows.
 */
import { describe, expect, it } from 'vitest';
import { kernelWorkgroupBytes, type GpuContext, type SdpaDims } from '@fa/core';
import { ATTENTION_DECODE_KERNEL } from '../src/decode/attention-decode.js';
import { forTensorType } from '../src/kernel-support.js';
import { planAttention, type PrepareOptions } from '../src/prepare.js';
import { H100_LIKE } from './h100-like.js';

/** The same adapter without subgroup matrices. */
const NO_MATRICES = { ...H100_LIKE, device: { features: new Set(['subgroups', 'shader-f16', 'timestamp-query']) } } as unknown as GpuContext;

const LLAMA: SdpaDims = { B: 1, Hq: 32, Hkv: 8, Lq: 4096, Lk: 4096, d: 128 };

function kernelFor(gpu: GpuContext, dims: SdpaDims, options: PrepareOptions): string {
  const plan = planAttention(gpu, dims, options);
  if (typeof plan === 'string') throw new Error(plan);
  return plan.kernel;
}

describe('the default kernel', () => {
  it('is attention-matrix for f16 tensors on an adapter with subgroup matrices', () => {
    expect(kernelFor(H100_LIKE, LLAMA, { dtype: 'f16', causal: true })).toBe('attention-matrix');
  });
  it('is attention-fp32 for f32 tensors, and for f16 tensors without subgroup matrices', () => {
    expect(kernelFor(H100_LIKE, LLAMA, { causal: true })).toBe('attention-fp32');
    expect(kernelFor(NO_MATRICES, LLAMA, { dtype: 'f16', causal: true })).toBe('attention-fp32');
  });
  it('is attention-matrix for f16 tensors with a softcap, and attention-fp32 where attention-matrix declines (d not a multiple of 16)', () => {
    expect(kernelFor(H100_LIKE, LLAMA, { dtype: 'f16', causal: true, softcap: 30 })).toBe('attention-matrix');
    expect(kernelFor(H100_LIKE, { ...LLAMA, d: 72 }, { dtype: 'f16' })).toBe('attention-fp32');
  });
  it('takes 16-key tiles on attention-matrix at d ≤ 64 with f16 tensors, 32 up to d = 128 and with f32, above it 32 where two subgroups share the rows and 16 where one holds them (docs/sdpa.md)', () => {
    const keys = (dims: SdpaDims, options: PrepareOptions): number | undefined => {
      const plan = planAttention(H100_LIKE, dims, options);
      if (typeof plan === 'string') throw new Error(plan);
      return plan.kernelPlan.constants.BC;
    };
    const BERT: SdpaDims = { B: 32, Hq: 12, Hkv: 12, Lq: 512, Lk: 512, d: 64 };
    expect(keys(BERT, { dtype: 'f16' })).toBe(16);
    expect(keys(BERT, { dtype: 'f16', causal: true })).toBe(16);
    expect(keys(BERT, { dtype: 'f16', window: [16, 16] })).toBe(16);
    expect(keys(BERT, { dtype: 'f16', mask: { kind: 'bool', data: new Uint8Array(512).fill(1), shape: [512] } })).toBe(16);
    expect(keys({ ...BERT, d: 32 }, { dtype: 'f16' })).toBe(16);
    expect(keys(BERT, { kernel: 'attention-matrix' })).toBe(32);
    expect(keys({ ...BERT, d: 80 }, { dtype: 'f16' })).toBe(32);
    expect(keys({ ...BERT, d: 128 }, { dtype: 'f16' })).toBe(32);
    expect(keys({ ...BERT, d: 240 }, { dtype: 'f16' })).toBe(16);
    expect(keys({ ...BERT, d: 256 }, { dtype: 'f16' })).toBe(32); // two subgroups per 16 rows, each with half of d
  });
  it('keeps four subgroups at d = 64 within 32 KiB of workgroup memory', () => {
    const small = { ...H100_LIKE, report: { ...H100_LIKE.report, limits: { ...H100_LIKE.report.limits, maxComputeWorkgroupStorageSize: 32768 } } } as GpuContext;
    const plan = planAttention(small, { B: 32, Hq: 12, Hkv: 12, Lq: 512, Lk: 512, d: 64 }, { dtype: 'f16' });
    if (typeof plan === 'string') throw new Error(plan);
    expect(plan.kernelPlan.constants).toMatchObject({ BC: 16, NSG: 4 });
  });
  it('stages V in K\'s place where that fits more subgroups on a compute unit (d = 128), and K and V side by side where it does not', () => {
    const constants = (dims: SdpaDims, options: PrepareOptions): Record<string, number> => {
      const plan = planAttention(H100_LIKE, dims, options);
      if (typeof plan === 'string') throw new Error(plan);
      return plan.kernelPlan.constants;
    };
    // d = 128: 23,056 bytes with one tile (two workgroups in 48 KiB) against 31,760 with two (one).
    expect(constants(LLAMA, { dtype: 'f16', causal: true })).toMatchObject({ KV_TILES: 1, NSG: 4, BC: 32 });
    // BERT's d = 64 with 16-key tiles: 10,512 bytes with one tile (four workgroups' memory) against 12,816 with two
    // (three); with f32 tensors (32-key tiles, two parts) one workgroup either way, so the barrier one tile adds is not paid.
    expect(constants({ B: 32, Hq: 12, Hkv: 12, Lq: 512, Lk: 512, d: 64 }, { dtype: 'f16' })).toMatchObject({ KV_TILES: 1, BC: 16 });
    expect(constants({ B: 32, Hq: 12, Hkv: 12, Lq: 512, Lk: 512, d: 64 }, { kernel: 'attention-matrix' })).not.toHaveProperty('KV_TILES');
    // f32 tensors at d = 128 (two parts): four subgroups with one tile, two with two.
    expect(constants({ ...LLAMA, Lq: 1024, Lk: 1024 }, { kernel: 'attention-matrix', causal: true })).toMatchObject({ KV_TILES: 1, NSG: 4 });
  });
  it('is the decode kernel for one query row of f16 tensors', () => {
    expect(kernelFor(H100_LIKE, { ...LLAMA, Lq: 1, Lk: 32768 }, { dtype: 'f16' })).toBe('attention-decode');
  });
  it('keeps decode\'s K and V tiles packed, so that 16 f16 keys per tile take the memory 8 unpacked keys took', () => {
    const plan = planAttention(H100_LIKE, { ...LLAMA, Lq: 1, Lk: 32768 }, { dtype: 'f16', tuning: { decodeLoop: 2 } });
    if (typeof plan === 'string') throw new Error(plan);
    expect(plan.kernelPlan.constants).toMatchObject({ D: 128, R: 4, BK: 16 });
    const bytes = (dtype: 'f16' | 'f32'): number => kernelWorkgroupBytes(forTensorType(ATTENTION_DECODE_KERNEL, dtype).code, { D: 128, R: 4, BK: 16, WG: 128, LSE: 0, CW: 64 });
    // Q's rows (f32), the K and V tiles (8 bytes per vec4 with f16 tensors, 16 with f32), the scores, m, ℓ, α.
    expect(bytes('f16')).toBe(10688);
    expect(bytes('f32')).toBe(19008);
  });
});
