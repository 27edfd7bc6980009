/**
 * @fa/sdpa's options checked at run time (src/validate-options.ts) for the callers the types do not reach: each wrong
 * option of prepareAttention, chooseKernel, gpuUnsupportedReason, attention, run and prepareCacheAppend is refused in
 * one SdpaArgumentError line before any GPU work (so most of these need no GPU: a stand-in GpuContext is never used),
 * and run's cache lengths only where the attention was prepared with them.
 */
import { describe, expect, it } from 'vitest';
import { sdpaProblem, SUBGROUP_MATRIX_FEATURE, UnsupportedShapeError, type GpuContext, type SdpaOptions } from '@fa/core';
import { readBack } from '../src/conformance.js';
import { float32OverflowReason, GPU_SCORE_LIMIT, type TensorRange } from '../src/float32-range.js';
import { attention, chooseKernel, gpuUnsupportedReason, lengthsAfter, planAttention, prepareAttention, prepareCacheAppend, SdpaArgumentError, type PrepareOptions, type SdpaDims } from '../src/index.js';
import { deviceForGroup } from './device-for-group.js';

/** What the argument checks look at of a GPU; anything past them would fail on it, so a refusal is from the checks. */
const STAND_IN = { device: {}, report: { limits: {} }, adapter: {} } as unknown as GpuContext;

const DIMS: SdpaDims = { B: 1, Hq: 1, Hkv: 1, Lq: 1, Lk: 4, d: 64 };

/** The SdpaArgumentError message `run` throws or rejects with (the test fails if it gives none, or another error). */
async function refusal(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(SdpaArgumentError);
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('the call accepted the arguments');
}

/** Options of PrepareOptions each refused, and the message. */
const PREPARE_REFUSED: readonly (readonly [string, unknown, RegExp])[] = [
  ['dtype "bogus"', { dtype: 'bogus' }, /^dtype is "bogus"; give 'f32' \(Float32Array tensors\) or 'f16' \(f16 bits in Uint16Array tensors\)$/],
  ['kernel "bogus"', { kernel: 'bogus' }, /^kernel is "bogus"; give 'attention-fp32', 'attention-matrix', 'attention-decode', or leave it out for the one that fits$/],
  ['causal "yes"', { causal: 'yes' }, /^causal is "yes"; give true or false$/],
  ['lse 1', { lse: 1 }, /^lse is 1; give true or false$/],
  ['scale NaN', { scale: Number.NaN }, /^scale is NaN; give a finite number/],
  ['scale Infinity', { scale: Number.NEGATIVE_INFINITY }, /^scale is -Infinity; give a finite number/],
  ['scale a string', { scale: '1' }, /^scale is "1"; give a finite number/],
  ['window [0.5, 0]', { window: [0.5, 0] }, /^window \[0\.5, 0\] is not two integers ≥ −1/],
  ['window [1]', { window: [1] }, /^window \[1\] is not two integers ≥ −1/],
  ['layout unknown', { layout: 'bsdh' }, /^layout is "bsdh"; give 'bhsd'/],
  ['a bool mask of Float32Array data', { mask: { kind: 'bool', data: new Float32Array(4), shape: [4] } }, /^a bool mask's data is a Float32Array of 4; give a Uint8Array/],
  ['an additive mask of Uint8Array data', { mask: { kind: 'additive', data: new Uint8Array(4), shape: [4] } }, /^an additive mask's data is a Uint8Array of 4; give a Float32Array/],
  ['cache length 0xFFFFFFFF', { cacheLengths: [0xffffffff] }, /^cacheLengths\[0\] is 4294967295; give an integer from 0 to Lk = 4$/],
  ['maxBindingBytes NaN', { maxBindingBytes: Number.NaN }, /^maxBindingBytes is NaN; give a positive integer, or leave it out for the GPU's limit$/],
  ['tuning keysPerTile 0', { tuning: { keysPerTile: 0 } }, /^tuning\.keysPerTile is 0; give a positive integer/],
  ['tuning matrixQAhead 2', { tuning: { matrixQAhead: 2 } }, /^tuning\.matrixQAhead is 2; give 0 or 1, or leave it out for the plan's$/],
  ['tuning matrixFlush -1', { tuning: { matrixFlush: -1 } }, /^tuning\.matrixFlush is -1; give an integer ≥ 0, or leave it out for the plan's$/],
  ['tuning key mistyped', { tuning: { keysPerTle: 8 } }, /^unknown tuning key keysPerTle; did you mean keysPerTile\?$/],
  ['casual: true', { casual: true }, /^unknown option casual; did you mean causal\?$/],
  ['returnLse (attention\'s) given to prepare', { returnLse: true }, /^unknown option returnLse; give only scale, causal, window, mask, blockMask, layout, cacheLengths, softcap, sinks, alibiSlopes, scoreMod, maskMod, modBuffers, lse, dtype, kernel, maxBindingBytes, tuning$/],
  ['softcap 0', { softcap: 0 }, /^softcap is 0; give a positive finite number c \(scores become c·tanh\(s\/c\)\), or leave it out$/],
  ['softcap −30', { softcap: -30 }, /^softcap is -30; give a positive finite number c/],
  ['softcap Infinity', { softcap: Number.POSITIVE_INFINITY }, /^softcap is Infinity; give a positive finite number c/],
  ['softcap a string', { softcap: '30' }, /^softcap is "30"; give a positive finite number c/],
  ['sinks an array', { sinks: [0.5] }, /^sinks is \[0\.5\]; give a Float32Array of Hq sink logits, one per query head$/],
  ['sinks for two query heads of one', { sinks: Float32Array.of(0.5, 1) }, /^sinks holds 2 values but there are 1 query heads \(Hq\); give one per query head$/],
  ['a sink of −Infinity', { sinks: Float32Array.of(Number.NEGATIVE_INFINITY) }, /^sinks\[0\] is -Infinity; give finite sink logits$/],
  ['alibiSlopes a Float64Array', { alibiSlopes: Float64Array.of(0.5) }, /^alibiSlopes is a Float64Array of 1; give a Float32Array of Hq ALiBi slopes, one per query head$/],
  ['an ALiBi slope of NaN', { alibiSlopes: Float32Array.of(Number.NaN) }, /^alibiSlopes\[0\] is NaN; give finite slopes$/],
  ['alibiSlopes empty', { alibiSlopes: new Float32Array(0) }, /^alibiSlopes holds 0 values but there are 1 query heads \(Hq\); give one per query head$/],
  ['sink for sinks', { sink: Float32Array.of(0) }, /^unknown option sink; did you mean sinks\?$/],
  ['options null', null, /^the options are null; give an object of options, or leave them out$/],
];

describe('prepareAttention, chooseKernel and gpuUnsupportedReason refuse wrong options before any GPU work', () => {
  const calls = {
    prepareAttention: (gpu: unknown, options: unknown) => prepareAttention(gpu as GpuContext, DIMS, options as PrepareOptions),
    chooseKernel: (gpu: unknown, options: unknown) => chooseKernel(gpu as GpuContext, DIMS, options as PrepareOptions),
    gpuUnsupportedReason: (gpu: unknown, options: unknown) => gpuUnsupportedReason(gpu as GpuContext, DIMS, options as PrepareOptions),
  };
  for (const [name, call] of Object.entries(calls)) {
    it.for(PREPARE_REFUSED)(`${name}: %s`, async ([, options, message]) => {
      expect(await refusal(() => call(STAND_IN, options))).toMatch(message);
    });
    it(`${name}: a gpu that is not a GpuContext`, async () => {
      for (const gpu of [undefined, null, {}, 'gpu', { device: {} }]) {
        expect(await refusal(() => call(gpu, {}))).toMatch(/^gpu is .*; give a GpuContext \(acquireNodeGpu from @fa\/core\/node, or gpuContextFromDevice in a browser\)$/);
      }
    });
  }
});

describe('attention refuses wrong options, on the CPU and before any GPU work', () => {
  const q = { data: new Float32Array(64), shape: [1, 1, 1, 64] };
  const kv = { data: new Float32Array(4 * 64), shape: [1, 1, 4, 64] };
  const run = (options: unknown) => attention(q, kv, kv, options as never);
  it.for([
    ['gpu {}', { gpu: {} }, /^gpu is an object; give a GpuContext/],
    ['gpu null', { gpu: null }, /^gpu is null; give a GpuContext/],
    ['returnLse "yes"', { returnLse: 'yes' }, /^returnLse is "yes"; give true or false$/],
    ['kernel "bogus"', { kernel: 'bogus', gpu: STAND_IN }, /^kernel is "bogus"; give 'attention-fp32'/],
    ['causal "yes"', { causal: 'yes' }, /^causal is "yes"; give true or false$/],
    ['casual: true', { casual: true }, /^unknown option casual; did you mean causal\?$/],
    ['lse (prepare\'s) given to attention', { lse: true }, /^unknown option lse; give only scale, causal, window, mask, blockMask, layout, cacheLengths, softcap, sinks, alibiSlopes, scoreMod, maskMod, modBuffers, gpu, returnLse, kernel, plan$/],
    ['a bool mask of Float32Array data', { mask: { kind: 'bool', data: new Float32Array(4), shape: [4] } }, /^a bool mask's data is a Float32Array of 4/],
    ['cache length 0xFFFFFFFF', { cacheLengths: [0xffffffff] }, /^cacheLengths\[0\] is 4294967295; give an integer from 0 to Lk = 4$/],
    ['softcap NaN', { softcap: Number.NaN }, /^softcap is NaN; give a positive finite number c/],
    ['sinks of 3 for one query head', { sinks: new Float32Array(3) }, /^sinks holds 3 values but there are 1 query heads \(Hq\); give one per query head$/],
    ['options null', null, /^the options are null/],
  ] as const)('%s', async ([, options, message]) => {
    expect(await refusal(() => run(options))).toMatch(message);
  });

  it('still computes with every option right (on the CPU)', async () => {
    const result = await attention(q, kv, kv, { causal: true, returnLse: true, scale: 0.5, window: [-1, 0], layout: 'bhsd', cacheLengths: [2], softcap: 20, sinks: Float32Array.of(1), alibiSlopes: Float32Array.of(0.5), gpu: undefined });
    expect(result.impl).toBe('cpu-fp32');
    expect(result.lse).toHaveLength(1);
    expect(result.lse?.[0]).toBeCloseTo(Math.log(Math.exp(1) + 1 + Math.exp(-0.5)), 6); // q = 0: scores 0 − 0.5·distance, and the sink
  });
});

/** What the plans read of a GPU, an H100's (as kernel-snapshots.test.ts describes it): planning compiles nothing. */
const H100_LIKE = {
  device: { features: new Set(['subgroups', 'shader-f16', 'timestamp-query', SUBGROUP_MATRIX_FEATURE]) },
  adapter: { info: { subgroupMatrixConfigs: [{ componentType: 'f16', resultComponentType: 'f32', M: 16, N: 16, K: 16 }] } },
  report: { subgroupMinSize: 32, subgroupMaxSize: 32, limits: { maxComputeWorkgroupStorageSize: 49152, maxStorageBufferBindingSize: 2147483644, maxBufferSize: 2 ** 40 } },
} as unknown as GpuContext;

describe('softcap, ALiBi and sinks: the kernels that take them, the one that declines, the overflow bound (no GPU)', () => {
  const prefill: SdpaDims = { B: 1, Hq: 4, Hkv: 2, Lq: 64, Lk: 64, d: 64 };
  const all: SdpaOptions = { softcap: 30, sinks: Float32Array.of(0, 1, 2, 3), alibiSlopes: Float32Array.of(0.5, 0.25, 0.125, 0.0625) };

  it('run on attention-fp32 compiled as the general problem (GENERAL = 1) with their switches on, and on the decode kernel', () => {
    const constantsOf = (options: PrepareOptions) => {
      const plan = planAttention(H100_LIKE, prefill, options);
      if (typeof plan === 'string' || plan.kernel === 'attention-decode') throw new Error(`not a tiled plan: ${typeof plan === 'string' ? plan : plan.kernel}`);
      return { GENERAL: plan.kernelPlan.constants.GENERAL, ...plan.kernelPlan.switches };
    };
    expect(constantsOf({})).toMatchObject({ GENERAL: 0, softcap: 0, alibi: 0, sinks: 0 });
    expect(constantsOf(all)).toMatchObject({ GENERAL: 1, softcap: 1, alibi: 1, sinks: 1 });
    expect(constantsOf({ softcap: 30 })).toMatchObject({ GENERAL: 1, softcap: 1, alibi: 0, sinks: 0 });
    expect(constantsOf({ sinks: all.sinks })).toMatchObject({ GENERAL: 1, softcap: 0, alibi: 0, sinks: 1 });
    expect(constantsOf({ alibiSlopes: all.alibiSlopes })).toMatchObject({ GENERAL: 1, softcap: 0, alibi: 1, sinks: 0 });
    expect(chooseKernel(H100_LIKE, { ...prefill, Lq: 1 }, all)).toBe('attention-decode');
  });

  it('attention-matrix takes them with f16 tensors, with the same switches, and declines them with f32 tensors in one line', async () => {
    const switchesOf = (options: PrepareOptions) => {
      const plan = planAttention(H100_LIKE, prefill, { ...options, dtype: 'f16', kernel: 'attention-matrix' });
      if (typeof plan === 'string' || plan.kernel !== 'attention-matrix') throw new Error(`not the matrix kernel's plan: ${typeof plan === 'string' ? plan : plan.kernel}`);
      return { ...plan.kernelPlan.switches, TERMS: plan.kernelPlan.constants.TERMS };
    };
    // TERMS = 1 compiles their code in; without it the kernel would ignore the switches.
    expect(switchesOf(all)).toMatchObject({ softcap: 1, alibi: 1, sinks: 1, TERMS: 1 });
    expect(switchesOf({ softcap: 30 })).toMatchObject({ softcap: 1, alibi: 0, sinks: 0, TERMS: 1 });
    expect(switchesOf({ sinks: all.sinks })).toMatchObject({ softcap: 0, alibi: 0, sinks: 1, TERMS: 1 });
    expect(switchesOf({ alibiSlopes: all.alibiSlopes })).toMatchObject({ softcap: 0, alibi: 1, sinks: 0, TERMS: 1 });
    expect(switchesOf({})).toEqual({ mask: 0, blocks: 0, blockTiles: 0, writeLse: 0, cached: 0, softcap: 0, alibi: 0, sinks: 0, TERMS: undefined });
    const why = "softcap, ALiBi slopes and sinks with f32 tensors are attention-fp32's (the matrix kernel takes them with f16 tensors)";
    for (const options of [all, { softcap: 30 }, { sinks: all.sinks }, { alibiSlopes: all.alibiSlopes }]) {
      expect(planAttention(H100_LIKE, prefill, { ...options, kernel: 'attention-matrix' })).toBe(why);
    }
    const named = prepareAttention(H100_LIKE, prefill, { ...all, kernel: 'attention-matrix' });
    await expect(named).rejects.toThrow(UnsupportedShapeError);
    await expect(named).rejects.toThrow(`attention-matrix cannot run this problem here: ${why}`);
  });

  it('the overflow bound counts the softcap (scores within c), ALiBi (max|slope|·(Lq + Lk)) and the sinks', () => {
    const quiet: TensorRange = { maxQNorm: 4, maxAbsQ: 1, maxKNorm: 4, maxAbsK: 1, maxAbsV: 1 };
    const reason = (impl: 'attention-fp32' | 'attention-decode' | 'cpu-fp32', options: SdpaOptions): string | undefined => float32OverflowReason(impl, quiet, sdpaProblem(prefill, options), 'f32');
    const gpuCap = GPU_SCORE_LIMIT / Math.LOG2E;
    for (const impl of ['attention-fp32', 'attention-decode'] as const) {
      expect(reason(impl, all)).toBeUndefined();
      expect(reason(impl, { softcap: gpuCap * 0.99 })).toBeUndefined();
      expect(reason(impl, { softcap: gpuCap * 1.01 })).toMatch(/^\(softcap\)·log2\(e\) reaches .*2\^100/);
      const slope = gpuCap / (prefill.Lq + prefill.Lk);
      expect(reason(impl, { alibiSlopes: Float32Array.of(0, -slope * 0.99, 0, 0) })).toBeUndefined();
      expect(reason(impl, { alibiSlopes: Float32Array.of(0, -slope * 1.01, 0, 0) })).toMatch(/max\|slope\|·\(Lq \+ Lk\)\)·log2\(e\) reaches/);
      expect(reason(impl, { sinks: Float32Array.of(0, 0, gpuCap * 0.99, 0) })).toBeUndefined();
      expect(reason(impl, { sinks: Float32Array.of(0, 0, -gpuCap * 1.01, 0) })).toMatch(/^max\|sink\|·log2\(e\) reaches .*2\^100/);
    }
    // The CPU path: softcapped scores and sinks of any finite size; ALiBi's terms where s − slope·distance could overflow.
    expect(reason('cpu-fp32', { softcap: 3e38, sinks: Float32Array.of(3e38, -3e38, 0, 0) })).toBeUndefined();
    expect(reason('cpu-fp32', { alibiSlopes: Float32Array.of(1e36, 0, 0, 0) })).toBeUndefined();
    expect(reason('cpu-fp32', { alibiSlopes: Float32Array.of(3e36, 0, 0, 0) })).toMatch(/max\|slope\|·\(Lq \+ Lk\) reaches .* \(its scores could overflow\)$/);
  });
});

describe('prepareCacheAppend and lengthsAfter refuse wrong arguments before any GPU work', () => {
  const dims = { B: 1, Hkv: 1, Lk: 4, Lnew: 1, d: 64 };
  it.for([
    ['layout unknown', STAND_IN, dims, { layout: 'bogus' }, /^layout is "bogus"; give 'bhsd' \(\[B, H, L, d\]\) or 'bshd' \(\[B, L, H, d\]\)$/],
    ['dtype unknown', STAND_IN, dims, { dtype: 'f64' }, /^dtype is "f64"; give 'f32'/],
    ['a key mistyped', STAND_IN, dims, { layuot: 'bhsd' }, /^unknown option layuot; did you mean layout\?$/],
    ['options null', STAND_IN, dims, null, /^the options are null/],
    ['gpu not a GpuContext', {}, dims, {}, /^gpu is an object; give a GpuContext/],
    ['a dimension missing', STAND_IN, { B: 1, Hkv: 1, Lk: 4, d: 64 }, {}, /^Lnew is undefined; give a positive integer$/],
    ['a dimension a string', STAND_IN, { ...dims, d: '64' }, {}, /^d is "64"; give a positive integer$/],
  ] as const)('%s', async ([, gpu, appendDims, options, message]) => {
    expect(await refusal(() => prepareCacheAppend(gpu as never, appendDims as never, options as never))).toMatch(message);
  });

  it('lengthsAfter takes B integers from 0 to Lk', async () => {
    expect(lengthsAfter([0, 3], { ...dims, B: 2 })).toEqual([1, 4]);
    expect(await refusal(() => lengthsAfter([-3], dims))).toBe('cacheLengths[0] is -3; give an integer from 0 to Lk = 4');
    expect(await refusal(() => lengthsAfter([1.5], dims))).toBe('cacheLengths[0] is 1.5; give an integer from 0 to Lk = 4');
    expect(await refusal(() => lengthsAfter([0xffffffff], dims))).toBe('cacheLengths[0] is 4294967295; give an integer from 0 to Lk = 4');
    expect(await refusal(() => lengthsAfter([1, 1], dims))).toBe('cacheLengths holds 2 values for 1 batches; give one per batch');
    expect(await refusal(() => lengthsAfter([4], dims))).toMatch(/^batch 0 holds 4 of 4 rows; appending 1 would pass the end/);
  });
});

describe('run takes cache lengths only where the attention was prepared with them (one tiny problem on the GPU)', () => {
  const group = deviceForGroup();

  it('refuses cacheLengths on a plan prepared without them, a mistyped key, and lengths outside 0 … Lk', { timeout: 600_000 }, async (context) => {
    const gpu = group.gpu();
    if (!gpu) {
      context.skip(`no GPU: ${group.missing()}`);
      return;
    }
    const q = new Float32Array(64);
    const kv = new Float32Array(4 * 64);
    const plain = await prepareAttention(gpu, DIMS, { kernel: 'attention-decode' });
    try {
      expect(await refusal(() => plain.run(q, kv, kv, { cacheLengths: [2] }))).toBe(
        "run was given cacheLengths, but the attention was prepared without them; prepare with cacheLengths (the first run's) to give each run its own",
      );
      expect(await refusal(() => plain.run(q, kv, kv, { cacheLength: [2] } as never))).toBe('unknown option cacheLength; did you mean cacheLengths?');
      expect(await refusal(() => plain.run(q, kv, kv, 5 as never))).toMatch(/^the options of run are 5; give an object/);
    } finally {
      plain.dispose();
    }
    const cached = await prepareAttention(gpu, DIMS, { kernel: 'attention-decode', cacheLengths: [4] });
    try {
      expect(await refusal(() => cached.run(q, kv, kv, { cacheLengths: [0xffffffff] }))).toBe('cacheLengths[0] is 4294967295; give an integer from 0 to Lk = 4');
      expect((await cached.run(q, kv, kv, { cacheLengths: [2] })).out).toHaveLength(64);
    } finally {
      cached.dispose();
    }
  });

  it('the GPU append keeps a cache length past Lk at Lk (0xFFFFFFFF does not wrap to 0) and writes no row for it', { timeout: 600_000 }, async (context) => {
    const gpu = group.gpu();
    if (!gpu) {
      context.skip(`no GPU: ${group.missing()}`);
      return;
    }
    const { device } = gpu;
    const dims = { B: 3, Hkv: 1, Lk: 4, Lnew: 1, d: 2 };
    const buffer = (data: ArrayBufferView<ArrayBuffer>): GPUBuffer => {
      const made = device.createBuffer({ size: data.byteLength, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC });
      device.queue.writeBuffer(made, 0, data.buffer, data.byteOffset, data.byteLength);
      return made;
    };
    const cache = new Float32Array(3 * 4 * 2).fill(7);
    const buffers = { k: buffer(cache), v: buffer(cache), kNew: buffer(new Float32Array(3 * 2).fill(1)), vNew: buffer(new Float32Array(3 * 2).fill(1)), cacheLengths: buffer(Uint32Array.of(0xffffffff, 1, 4)) };
    const append = await prepareCacheAppend(gpu, dims);
    try {
      const encoder = device.createCommandEncoder();
      append.encode(encoder, buffers);
      device.queue.submit([encoder.finish()]);
      expect([...new Uint32Array(await readBack(device, buffers.cacheLengths, 12))]).toEqual([4, 2, 4]);
      const k = new Float32Array(await readBack(device, buffers.k, cache.byteLength));
      expect([...k.subarray(0, 8)], 'batch 0 (length 0xFFFFFFFF) is left as it was').toEqual(Array<number>(8).fill(7));
      expect([...k.subarray(8, 16)], 'batch 1 gets its row at 1').toEqual([7, 7, 1, 1, 7, 7, 7, 7]);
      expect([...k.subarray(16, 24)], 'batch 2 (full) is left as it was').toEqual(Array<number>(8).fill(7));
    } finally {
      append.dispose();
      for (const b of Object.values(buffers)) b.destroy();
    }
  });
});
