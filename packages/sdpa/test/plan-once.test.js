/**
 * A problem is validated once and its kernel planned once: per attention() call, per planAttention with the
 * prepareAttention(gpu, plan) or attention({ plan }) that follows, and per conformance check given a plan. Counted on
 * the functions that do the work (@fa/core's sdpaProblem validates a problem; fp32Plan, decodePlan and matrixPlan plan
 * a kernel), wrapped here so that every caller inside the library goes through the count.
 *
 * No shader is compiled: the GPU is an H100-like stand-in (as in kernel-snapshots.test.ts) whose device records
 * nothing and reads back zeros, and the kernels' preparation is replaced by kernels that encode nothing.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { sdpaProblem, SUBGROUP_MATRIX_FEATURE } from '@fa/core';
import { decodePlan, prepareDecodeKernel } from '../src/decode/attention-decode.js';
import { fp32Plan } from '../src/fp32/attention-fp32.js';
import { matrixPlan } from '../src/matrix/attention-matrix.js';
import { prepareTiledKernel } from '../src/tiled-host.js';
import { attention, checkSdpaCase, chooseKernel, gpuUnsupportedReason, planAttention, prepareAttention, SDPA_CASE_GROUPS, SdpaArgumentError } from '../src/index.js';
vi.mock('@fa/core', async (importOriginal) => {
    const actual = await importOriginal();
    return { ...actual, sdpaProblem: vi.fn(actual.sdpaProblem) };
});
vi.mock('../src/fp32/attention-fp32.js', async (importOriginal) => {
    const actual = await importOriginal();
    return { ...actual, fp32Plan: vi.fn(actual.fp32Plan) };
});
vi.mock('../src/matrix/attention-matrix.js', async (importOriginal) => {
    const actual = await importOriginal();
    return { ...actual, matrixPlan: vi.fn(actual.matrixPlan) };
});
/** A kernel that encodes nothing, in place of a compiled one. */
vi.mock('../src/decode/attention-decode.js', async (importOriginal) => {
    const actual = await importOriginal();
    const prepare = (_gpu, _problem, plan) => Promise.resolve({ plan, encode: () => undefined, destroy: () => undefined });
    return { ...actual, decodePlan: vi.fn(actual.decodePlan), prepareDecodeKernel: vi.fn(prepare) };
});
vi.mock('../src/tiled-host.js', async (importOriginal) => {
    const actual = await importOriginal();
    const prepare = (_gpu, _problem, plan) => Promise.resolve({ plan, encode: () => undefined, destroy: () => undefined });
    return { ...actual, prepareTiledKernel: vi.fn(prepare) };
});
/** A buffer that holds nothing and maps to zeros. */
const standInBuffer = (size) => ({ size, destroy: () => undefined, mapAsync: () => Promise.resolve(), getMappedRange: (offset = 0, length = size - offset) => new ArrayBuffer(length), unmap: () => undefined });
/** An H100-like GPU (kernel-snapshots.test.ts's), with a device that takes buffers, writes and submits and does nothing. */
function standInGpu(features = ['subgroups', 'shader-f16', 'timestamp-query', SUBGROUP_MATRIX_FEATURE]) {
    return {
        device: {
            features: new Set(features),
            limits: { minStorageBufferOffsetAlignment: 256 },
            createBuffer: ({ size }) => standInBuffer(size),
            queue: { writeBuffer: () => undefined, submit: () => undefined },
            createCommandEncoder: () => ({ copyBufferToBuffer: () => undefined, finish: () => ({}) }),
            pushErrorScope: () => undefined,
            popErrorScope: () => Promise.resolve(null),
        },
        adapter: { info: { subgroupMatrixConfigs: [{ componentType: 'f16', resultComponentType: 'f32', M: 16, N: 16, K: 16 }] } },
        report: {
            subgroupMinSize: 32,
            subgroupMaxSize: 32,
            limits: { maxComputeWorkgroupStorageSize: 49152, maxStorageBufferBindingSize: 2147483644, maxBufferSize: 2 ** 40 },
        },
        lost: new Promise(() => undefined),
    };
}
const GPU = standInGpu();
/** The calls of each counted function since the last test began. */
const counts = () => ({
    validations: vi.mocked(sdpaProblem).mock.calls.length,
    fp32Plan: vi.mocked(fp32Plan).mock.calls.length,
    decodePlan: vi.mocked(decodePlan).mock.calls.length,
    matrixPlan: vi.mocked(matrixPlan).mock.calls.length,
    compiled: vi.mocked(prepareTiledKernel).mock.calls.length + vi.mocked(prepareDecodeKernel).mock.calls.length,
});
const PREFILL = { B: 2, Hq: 4, Hkv: 2, Lq: 40, Lk: 48, d: 64 };
const DECODE = { B: 2, Hq: 4, Hkv: 2, Lq: 1, Lk: 48, d: 64 };
/** Tensors of `dims` in bhsd, small values. */
function tensorsOf({ B, Hq, Hkv, Lq, Lk, d }) {
    const fill = (n) => Float32Array.from({ length: n }, (_, i) => Math.sin(i) / 2);
    return {
        q: { data: fill(B * Hq * Lq * d), shape: [B, Hq, Lq, d] },
        k: { data: fill(B * Hkv * Lk * d), shape: [B, Hkv, Lk, d] },
        v: { data: fill(B * Hkv * Lk * d), shape: [B, Hkv, Lk, d] },
    };
}
const planned = (plan) => {
    if (typeof plan === 'string')
        throw new Error(`the plan declined: ${plan}`);
    return plan;
};
beforeAll(() => {
    vi.stubGlobal('GPUBufferUsage', { MAP_READ: 1, MAP_WRITE: 2, COPY_SRC: 4, COPY_DST: 8, INDEX: 16, VERTEX: 32, UNIFORM: 64, STORAGE: 128, INDIRECT: 256, QUERY_RESOLVE: 512 });
    vi.stubGlobal('GPUMapMode', { READ: 1, WRITE: 2 });
});
afterAll(() => {
    vi.unstubAllGlobals();
});
beforeEach(() => {
    vi.clearAllMocks();
});
describe('attention() validates the problem once and plans its kernel once', () => {
    it('a prefill: one validation, one attention-fp32 plan, and that plan is what gets compiled', async () => {
        const { q, k, v } = tensorsOf(PREFILL);
        const result = await attention(q, k, v, { gpu: GPU, causal: true, returnLse: true });
        expect(result.impl).toBe('attention-fp32');
        expect(result.lse).toHaveLength(PREFILL.B * PREFILL.Hq * PREFILL.Lq);
        expect(counts()).toEqual({ validations: 1, fp32Plan: 1, decodePlan: 0, matrixPlan: 0, compiled: 1 });
        expect(vi.mocked(prepareTiledKernel).mock.calls[0]?.[2]).toBe(vi.mocked(fp32Plan).mock.results[0]?.value);
    });
    it('a decode step: one validation, one decode plan, compiled as it is', async () => {
        const { q, k, v } = tensorsOf(DECODE);
        const result = await attention(q, k, v, { gpu: GPU });
        expect(result.impl).toBe('attention-decode');
        expect(counts()).toEqual({ validations: 1, fp32Plan: 0, decodePlan: 1, matrixPlan: 0, compiled: 1 });
        expect(vi.mocked(prepareDecodeKernel).mock.calls[0]?.[2]).toBe(vi.mocked(decodePlan).mock.results[0]?.value);
    });
    it('a named kernel: one validation, that kernel planned once', async () => {
        const { q, k, v } = tensorsOf(PREFILL);
        expect((await attention(q, k, v, { gpu: GPU, kernel: 'attention-matrix' })).impl).toBe('attention-matrix');
        expect(counts()).toEqual({ validations: 1, fp32Plan: 0, decodePlan: 0, matrixPlan: 1, compiled: 1 });
    });
    it('a problem the GPU declines: one validation, one plan, then the CPU with the reason', async () => {
        const { q, k, v } = tensorsOf(PREFILL);
        const result = await attention(q, k, v, { gpu: standInGpu([]) });
        expect(result.impl).toBe('cpu-fp32');
        expect(result.note).toBe('the GPU kernel cannot run this problem here (the GPU lacks feature subgroups); computed on the CPU');
        expect(counts()).toEqual({ validations: 1, fp32Plan: 1, decodePlan: 0, matrixPlan: 0, compiled: 0 });
    });
});
describe('a plan from planAttention is prepared and run as it is', () => {
    it('planAttention validates and plans once; prepareAttention(gpu, plan) and attention({ plan }) neither validate nor plan', async () => {
        const plan = planned(planAttention(GPU, PREFILL, { causal: true, lse: true }));
        expect(plan.kernel).toBe('attention-fp32');
        expect(plan.options).toEqual({ dtype: 'f32', lse: true });
        expect(plan.problem.right).toBe(0); // causal
        expect(Object.isFrozen(plan)).toBe(true);
        expect(counts()).toEqual({ validations: 1, fp32Plan: 1, decodePlan: 0, matrixPlan: 0, compiled: 0 });
        const prepared = await prepareAttention(GPU, plan);
        expect(prepared.plan).toBe(plan);
        expect(prepared.impl).toBe('attention-fp32');
        expect(vi.mocked(prepareTiledKernel).mock.calls[0]?.[2]).toBe(plan.kernelPlan);
        prepared.dispose();
        expect(counts()).toEqual({ validations: 1, fp32Plan: 1, decodePlan: 0, matrixPlan: 0, compiled: 1 });
        const { q, k, v } = tensorsOf(PREFILL);
        const result = await attention(q, k, v, { plan });
        expect(result.impl).toBe('attention-fp32');
        expect(result.lse).toHaveLength(PREFILL.B * PREFILL.Hq * PREFILL.Lq);
        expect(counts()).toEqual({ validations: 1, fp32Plan: 1, decodePlan: 0, matrixPlan: 0, compiled: 2 });
    });
    it('prepareAttention(gpu, dims, options) plans once for itself', async () => {
        const prepared = await prepareAttention(GPU, DECODE, { lse: true });
        expect(prepared.impl).toBe('attention-decode');
        expect(counts()).toEqual({ validations: 1, fp32Plan: 0, decodePlan: 1, matrixPlan: 0, compiled: 1 });
        // dispose() frees the kernel, and so does destroy(), the deprecated name, for code written against it.
        const kernel = (await vi.mocked(prepareDecodeKernel).mock.results[0]?.value);
        const freed = vi.spyOn(kernel, 'destroy');
        prepared.dispose();
        const olderCaller = prepared;
        olderCaller.destroy();
        expect(freed).toHaveBeenCalledTimes(2);
    });
    it('chooseKernel and gpuUnsupportedReason are planAttention: one validation and one plan each', () => {
        expect(chooseKernel(GPU, PREFILL)).toBe('attention-fp32');
        expect(gpuUnsupportedReason(GPU, PREFILL)).toBeUndefined();
        expect(gpuUnsupportedReason(standInGpu([]), PREFILL)).toBe('the GPU lacks feature subgroups');
        expect(counts()).toEqual({ validations: 3, fp32Plan: 3, decodePlan: 0, matrixPlan: 0, compiled: 0 });
    });
    it('checkSdpaCase given a plan checks that plan, planning nothing again', async () => {
        const c = SDPA_CASE_GROUPS.flatMap((group) => group.cases).find((one) => one.name === 'Lq = 1 over 130 keys, bshd');
        if (c === undefined)
            throw new Error('the case is gone from the conformance suite');
        const plan = planned(planAttention(GPU, c.dims, { ...c.options, dtype: 'f32', lse: true, kernel: 'attention-fp32' }));
        const check = await checkSdpaCase(GPU, c, { plan });
        expect(check.impl).toBe('attention-fp32');
        expect(counts()).toEqual({ validations: 1, fp32Plan: 1, decodePlan: 0, matrixPlan: 0, compiled: 1 });
    });
    it('only a plan planAttention made, on its GPU, with nothing beside it, for tensors it fits', async () => {
        const plan = planned(planAttention(GPU, PREFILL, {}));
        const { q, k, v } = tensorsOf(PREFILL);
        const refusals = [
            ['a copy of the plan', () => prepareAttention(GPU, { ...plan }), /^the plan is an object, not a plan made by planAttention/],
            ['options beside the plan (from JavaScript)', () => prepareAttention(GPU, plan, {}), /^prepareAttention\(gpu, plan\) takes no options/],
            ['another GPU', () => prepareAttention(standInGpu(), plan), /^the plan was made for another GPU/],
            ['a copy to attention', () => attention(q, k, v, { plan: { ...plan } }), /^plan is an object, not a plan made by planAttention/],
            ['an option beside the plan', () => attention(q, k, v, { plan, causal: true }), /^causal is given beside plan, which holds the options; give them to planAttention instead$/],
            ['tensors of other dimensions', () => attention(q, k, v, { plan: planned(planAttention(GPU, { ...PREFILL, Lq: 41 }, {})) }), /^the tensors are B 2, Hq 4, Hkv 2, Lq 40, Lk 48, d 64 \(bhsd\) but the plan is for .*Lq 41/],
            ['f32 tensors on an f16 plan', () => attention(q, k, v, { plan: planned(planAttention(GPU, PREFILL, { dtype: 'f16' })) }), /^the tensors are f32 \(Float32Array\) but the plan is for f16 tensors/],
        ];
        for (const [name, call, message] of refusals) {
            await expect(call(), name).rejects.toThrow(SdpaArgumentError);
            await expect(call(), name).rejects.toThrow(message);
        }
        expect(counts().compiled).toBe(0);
    });
});
//# sourceMappingURL=plan-once.test.js.map