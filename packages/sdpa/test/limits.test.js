/**
 * Values near float32's limits. Additive masks of float32's most negative value (Hugging Face's padding), −3e38, −1e30
 * and +3e38: finite values mean what they say (a constant row leaves the softmax unchanged; float32 absorbs the scores
 * into it, so the weights are equal, as the plain computation gives), −∞ excludes. And inputs on which float32
 * arithmetic could overflow (Q and K of 1e20, scale 1e38, V of 3e38): the float64 result with a note, or for a named
 * implementation a one-line refusal. Wherever a result is computed it is checked against the float64 oracle within 2×
 * the plain float32 computation's error (or 1e-6), on the CPU path, attention-fp32 and attention-decode on this GPU,
 * and attention-matrix where the GPU has subgroup matrices.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { matrixUnavailable, sdpaProblem } from '@fa/core';
import { sdpaFloat32, sdpaOracle } from '@fa/reference';
import { checkCase, FLOAT32_LOWEST, limitsMask, lseError, maxAbs, tensors } from '../src/conformance.js';
import { float32OverflowReason, FLOAT32_MAX, GPU_SCORE_LIMIT, SdpaOverflowError, tensorRange } from '../src/float32-range.js';
import { attention, floatsToHalves, halvesToFloats } from '../src/index.js';
import { MASK_KNEE, MASK_TOP, maskBase2 } from '../src/tiled-host.js';
import { deviceForGroup } from './device-for-group.js';
const f = Math.fround;
/** [B, H, L, d] tensors of the problem's q, k, v shapes. */
function shaped(dims, q, k, v) {
    const { B, Hq, Hkv, Lq, Lk, d } = dims;
    return [
        { data: q, shape: [B, Hq, Lq, d] },
        { data: k, shape: [B, Hkv, Lk, d] },
        { data: v, shape: [B, Hkv, Lk, d] },
    ];
}
/** The conformance cases' tensors (values in ±3), each multiplied by its factor. */
function scaled(dims, factors = {}, seed = 17) {
    const { q, k, v } = tensors(dims, seed);
    const times = (x, by = 1) => Float32Array.from(x, (y) => y * by);
    return { q: times(q, factors.q), k: times(k, factors.k), v: times(v, factors.v) };
}
/** Inputs on which float32 arithmetic overflows, each with its options. */
const OVERFLOWS = [
    { name: 'Q and K of about 1e20', factors: { q: 1e20 / 3, k: 1e20 / 3 } },
    { name: 'scale 1e38', factors: {}, options: { scale: 1e38 } },
    { name: 'V of about 3e38', factors: { v: 1e38 } },
];
/** The float64 answer rounded to float32 is what a float64 fallback gives: within half a float32 step of max|v|. */
function expectFloat64(out, exact, v) {
    const maxV = Math.max(...Array.from(v, Math.abs));
    expect(out.every(Number.isFinite)).toBe(true);
    expect(maxAbs(out, exact)).toBeLessThanOrEqual(2 ** -24 * maxV);
}
describe('the overflow bound (float32OverflowReason)', () => {
    const dims = { B: 1, Hq: 1, Hkv: 1, Lq: 4, Lk: 40, d: 16 };
    const problem = sdpaProblem(dims);
    const quiet = { maxQNorm: 4, maxAbsQ: 1, maxKNorm: 4, maxAbsK: 1, maxAbsV: 1 };
    const halfMax = FLOAT32_MAX / 2;
    it('measures row norms and maxima in one pass, f16 bits decoded, NaN and ±∞ left out', () => {
        const q = Float32Array.from([3, 4, 0, 0, 1, 1, 1, 1]);
        const k = Float32Array.from([Number.NaN, 2, 0, 0, -6, 0, 0, 0]);
        const v = floatsToHalves(Float32Array.from([1, -65504, 2, Number.POSITIVE_INFINITY, 0, 0, 0, 0]));
        const range = tensorRange(q, k, v, 4);
        expect(range).toEqual({ maxQNorm: 5, maxAbsQ: 4, maxKNorm: 6, maxAbsK: 6, maxAbsV: 65504 });
    });
    it('lets the accumulation of P̃·V reach float32 / 2 with the weights each kernel can give (2^τ lazily, 1 eagerly)', () => {
        const eager = halfMax / dims.Lk;
        expect(float32OverflowReason('cpu-fp32', { ...quiet, maxAbsV: eager * 0.99 }, problem, 'f32')).toBeUndefined();
        expect(float32OverflowReason('attention-decode', { ...quiet, maxAbsV: eager * 0.99 }, problem, 'f32')).toBeUndefined();
        expect(float32OverflowReason('attention-decode', { ...quiet, maxAbsV: eager * 1.01 }, problem, 'f32')).toMatch(/Lk·max\|v\|/);
        // attention-fp32 rescales lazily (τ = 8): its weights reach 2^8.
        expect(float32OverflowReason('attention-fp32', { ...quiet, maxAbsV: (eager / 256) * 0.99 }, problem, 'f32')).toBeUndefined();
        expect(float32OverflowReason('attention-fp32', { ...quiet, maxAbsV: (eager / 256) * 1.01 }, problem, 'f32')).toMatch(/2\^8·Lk·max\|v\|/);
    });
    it('keeps the GPU kernels\' scores within 2^100 (base 2) and the CPU path\'s within float32 / 2', () => {
        const atLimit = Math.sqrt(GPU_SCORE_LIMIT / (problem.scale * Math.LOG2E));
        const big = { ...quiet, maxQNorm: atLimit * 1.01, maxKNorm: atLimit, maxAbsQ: 1, maxAbsK: 1 };
        for (const id of ['attention-fp32', 'attention-decode', 'attention-matrix']) {
            expect(float32OverflowReason(id, big, problem, 'f16')).toMatch(/2\^100/);
            expect(float32OverflowReason(id, { ...big, maxQNorm: atLimit * 0.99 }, problem, 'f16')).toBeUndefined();
        }
        expect(float32OverflowReason('cpu-fp32', big, problem, 'f32')).toBeUndefined();
        const cpuLimit = Math.sqrt(halfMax);
        expect(float32OverflowReason('cpu-fp32', { ...quiet, maxQNorm: cpuLimit * 1.01, maxKNorm: cpuLimit }, problem, 'f32')).toMatch(/dot products/);
    });
    it('keeps the matrix kernel\'s f16 parts of f32 tensors within ±65504', () => {
        expect(float32OverflowReason('attention-matrix', { ...quiet, maxAbsV: 65504 }, problem, 'f32')).toBeUndefined();
        expect(float32OverflowReason('attention-matrix', { ...quiet, maxAbsV: 1e5 }, problem, 'f32')).toMatch(/f16's 65504/);
        expect(float32OverflowReason('attention-matrix', { ...quiet, maxAbsK: 1e5, maxKNorm: 1e5 }, problem, 'f32')).toMatch(/f16's 65504/);
        expect(float32OverflowReason('attention-fp32', { ...quiet, maxAbsV: 1e5 }, problem, 'f32')).toBeUndefined();
    });
});
describe('masks in base 2 (maskBase2) and the kernels\' log-sum-exp of them (naturalLse)', () => {
    /** naturalLse of tiled-interface.wgsl in float32, with its constants read from the kernel. */
    const wgsl = readFileSync(new URL('../src/tiled-interface.wgsl', import.meta.url), 'utf8');
    const constant = (name) => {
        const match = new RegExp(`const ${name}: f32 = ([-+0-9.e]+);`).exec(wgsl);
        if (!match)
            throw new Error(`tiled-interface.wgsl has no const ${name}`);
        return Number(match[1]);
    };
    const [knee, top, spanInv, kneeLn2, tailSpan, lowest] = ['MASK_KNEE', 'MASK_TOP', 'MASK_SPAN_INV', 'KNEE_LN2', 'TAIL_SPAN', 'LOWEST'].map(constant);
    const naturalLse = (x) => {
        const a = Math.abs(x);
        if (a <= knee)
            return f(x * f(Math.LN2));
        return Math.sign(x) * f(kneeLn2 + f(Math.min(f(f(a - knee) * spanInv), 1) * tailSpan));
    };
    /** A sweep of float32 values from −3.4028235e38 to 3.4028235e38, dense near the knee and the ends. */
    const sweep = [0, 1, 1e10, 1e30, 5e37, 5.8e37, 5.9e37, 6e37, 1e38, 2e38, 3e38, 3.4e38, FLOAT32_MAX, ...Array.from({ length: 200 }, (_, n) => 10 ** (30 + n * 0.0425))]
        .map(f)
        .filter((x) => x <= FLOAT32_MAX)
        .flatMap((x) => [x, -x])
        .sort((a, b) => a - b);
    it('uses the constants the kernels declare, and a LOWEST below every finite masked score', () => {
        expect(knee).toBe(MASK_KNEE);
        expect(top).toBe(f(MASK_TOP));
        expect(lowest).toBe(-(2 ** 127));
        // A score of at most 2^101 plus the most negative mask value stays above LOWEST, and their differences finite.
        expect(-(2 ** 101) + f(maskBase2(FLOAT32_LOWEST))).toBeGreaterThan(lowest);
        expect(2 ** 101 + f(maskBase2(FLOAT32_MAX)) - lowest).toBeLessThan(FLOAT32_MAX);
        expect(f(maskBase2(Number.NEGATIVE_INFINITY))).toBeLessThanOrEqual(-3e38);
    });
    it('is monotone, within ±MASK_TOP for every finite value, and x·log2(e) up to the knee', () => {
        let previous = Number.NEGATIVE_INFINITY;
        for (const x of sweep) {
            const g = f(maskBase2(x));
            expect(g).toBeGreaterThanOrEqual(previous);
            expect(Math.abs(g)).toBeLessThanOrEqual(f(MASK_TOP));
            if (Math.abs(x * Math.LOG2E) <= MASK_KNEE)
                expect(g).toBe(f(x * Math.LOG2E));
            previous = g;
        }
    });
    it('gives back each mask value from its base-2 form to 2^-21 of its size, never past float32\'s largest value', () => {
        for (const x of sweep) {
            const back = naturalLse(f(maskBase2(x)));
            expect(Number.isFinite(back)).toBe(true);
            expect(Math.abs(back - x)).toBeLessThanOrEqual(2 ** -21 * Math.abs(x));
        }
    });
});
describe('the CPU path', () => {
    const dims = { B: 1, Hq: 2, Hkv: 1, Lq: 8, Lk: 40, d: 16 };
    it('takes masks near float32\'s limits as the plain float32 computation does', async () => {
        const { q, k, v } = scaled(dims);
        const options = { mask: { kind: 'additive', data: limitsMask(dims.Lq, dims.Lk), shape: [dims.Lq, dims.Lk] } };
        const exact = sdpaOracle(sdpaProblem(dims, options), q, k, v);
        const result = await attention(...shaped(dims, q, k, v), { ...options, returnLse: true });
        expect(result.impl).toBe('cpu-fp32');
        const out = result.out.data;
        expect(maxAbs(out, exact.out)).toBeLessThanOrEqual(1e-6);
        expect(lseError(result.lse ?? [], exact.lse)).toBeLessThanOrEqual(1e-5);
        // Row 0 (float32's most negative value on every key) is the plain mean of the values: equal weights.
        const mean = Array.from({ length: dims.d }, (_, x) => Array.from({ length: dims.Lk }, (_, j) => v[j * dims.d + x]).reduce((a, b) => a + b, 0) / dims.Lk);
        expect(maxAbs(out.subarray(0, dims.d), mean)).toBeLessThanOrEqual(1e-6);
    });
    it.for(OVERFLOWS)('computes $name in float64 with a note, or refuses it in one line when a kernel is named', async ({ factors, options }) => {
        const { q, k, v } = scaled(dims, factors);
        const exact = sdpaOracle(sdpaProblem(dims, options), q, k, v);
        const result = await attention(...shaped(dims, q, k, v), options);
        expect(result.impl).toBe('cpu-fp64');
        expect(result.note).toMatch(/^float32 could overflow on these values \(.*\); computed in float64 on the CPU$/);
        expectFloat64(result.out.data, exact.out, v);
        const named = attention(...shaped(dims, q, k, v), { ...options, kernel: 'attention-fp32' });
        await expect(named).rejects.toThrow(SdpaOverflowError);
        await expect(named).rejects.toThrow(/^cpu-fp32 could overflow float32 on these values: [^\n]*; leave the implementation to the default choice \(which computes such values in float64\) or scale the inputs down$/);
    });
    it('computes scores near 1e38 with +3e38 on a key (s + M_ij past float32) in float64', async () => {
        const { q, k, v } = scaled(dims);
        const mask = { kind: 'additive', data: Float32Array.from({ length: dims.Lk }, (_, j) => (j === 3 ? 3e38 : 0)), shape: [dims.Lk] };
        const options = { scale: 2e36, mask };
        const exact = sdpaOracle(sdpaProblem(dims, options), q, k, v);
        const result = await attention(...shaped(dims, q, k, v), options);
        expect(result.impl).toBe('cpu-fp64');
        expect(result.note).toMatch(/s \+ mask could overflow/);
        expectFloat64(result.out.data, exact.out, v);
    });
    it('computes V of 1e36 over 40 keys in float32 (within the bound) and f16 tensors of V = 65504', async () => {
        const { q, k, v } = scaled(dims, { v: 1e36 / 3 });
        const problem = sdpaProblem(dims);
        const exact = sdpaOracle(problem, q, k, v);
        const result = await attention(...shaped(dims, q, k, v));
        expect(result.impl).toBe('cpu-fp32');
        expect(maxAbs(result.out.data, exact.out)).toBeLessThanOrEqual(Math.max(2 * maxAbs(sdpaFloat32(problem, q, k, v).out, exact.out), 1e-6));
        const big = floatsToHalves(new Float32Array(v.length).fill(65504));
        const halves = await attention(...shaped(dims, floatsToHalves(q), floatsToHalves(k), big));
        expect(Array.from(halvesToFloats(halves.out.data)).every((x) => x === 65504)).toBe(true);
    });
    it('returns the log-sum-exps of the float64 result, and refuses them where they pass float32\'s range', async () => {
        const v3 = scaled(dims, { v: 1e38 });
        const within = await attention(...shaped(dims, v3.q, v3.k, v3.v), { returnLse: true });
        expect(within.impl).toBe('cpu-fp64');
        expect(maxAbs(within.lse ?? [], sdpaOracle(sdpaProblem(dims), v3.q, v3.k, v3.v).lse)).toBeLessThanOrEqual(1e-5);
        const { q, k, v } = scaled(dims, { q: 1e20 / 3, k: 1e20 / 3 });
        const beyond = attention(...shaped(dims, q, k, v), { returnLse: true });
        await expect(beyond).rejects.toThrow(SdpaOverflowError);
        await expect(beyond).rejects.toThrow(/^the log-sum-exp of row \d+ of \[B, Hq, Lq\] is [-0-9.e+]+, beyond float32's range; leave out the log-sum-exps \(returnLse\) or scale the scores down$/);
    });
});
/** The limits mask on a tiled kernel, through the conformance check (2× the plain computation's error, or 1e-6). */
async function expectMaskLimits(gpu, kernel, dims, dtype = 'f32') {
    const options = { mask: { kind: 'additive', data: limitsMask(dims.Lq, dims.Lk), shape: [dims.Lq, dims.Lk] } };
    const check = await checkCase(gpu, { name: 'limits mask', dims, options, kernel }, { dtype });
    expect(check.impl).toBe(kernel);
    expect(check.error, `max error ${check.error} against ${check.limit}`).toBeLessThanOrEqual(check.limit);
    expect(check.lseError, `log-sum-exp error ${check.lseError} against ${check.lseLimit}`).toBeLessThanOrEqual(check.lseLimit);
}
/** On the GPU: the default kernel falls back to float64 with a note naming it; the named kernel refuses in one line. */
async function expectOverflowHandled(gpu, kernel, dims, factors, options = {}) {
    const { q, k, v } = scaled(dims, factors);
    const exact = sdpaOracle(sdpaProblem(dims, options), q, k, v);
    const result = await attention(...shaped(dims, q, k, v), { ...options, gpu });
    expect(result.impl).toBe('cpu-fp64');
    expect(result.note).toMatch(new RegExp(`^${kernel} could overflow float32 on these values \\(.*\\); computed in float64 on the CPU$`));
    expectFloat64(result.out.data, exact.out, v);
    const named = attention(...shaped(dims, q, k, v), { ...options, gpu, kernel });
    await expect(named).rejects.toThrow(SdpaOverflowError);
    await expect(named).rejects.toThrow(new RegExp(`^${kernel} could overflow float32 on these values: [^\\n]*; leave the implementation to the default choice`));
}
describe('attention-fp32 on this GPU', () => {
    const device = deviceForGroup();
    const dims = { B: 1, Hq: 2, Hkv: 1, Lq: 20, Lk: 40, d: 16 };
    it('takes masks near float32\'s limits as the plain float32 computation does (no 0, no NaN)', { timeout: 900_000 }, async (context) => {
        const gpu = device.gpu();
        if (!gpu)
            return context.skip(`no GPU: ${device.missing()}`);
        await expectMaskLimits(gpu, 'attention-fp32', dims);
    });
    it.for(OVERFLOWS)('computes $name in float64 by default and refuses it when named', { timeout: 900_000 }, async ({ factors, options }, context) => {
        const gpu = device.gpu();
        if (!gpu)
            return context.skip(`no GPU: ${device.missing()}`);
        await expectOverflowHandled(gpu, 'attention-fp32', dims, factors, options);
    });
});
describe('attention-decode on this GPU', () => {
    const device = deviceForGroup();
    const dims = { B: 1, Hq: 4, Hkv: 2, Lq: 3, Lk: 40, d: 16 };
    it.for(OVERFLOWS)('computes $name in float64 by default and refuses it when named', { timeout: 900_000 }, async ({ factors, options }, context) => {
        const gpu = device.gpu();
        if (!gpu)
            return context.skip(`no GPU: ${device.missing()}`);
        await expectOverflowHandled(gpu, 'attention-decode', dims, factors, options);
    });
    it('computes scores of about 1e25 and V of 1e36 within the bound, as the plain float32 computation does', { timeout: 900_000 }, async (context) => {
        const gpu = device.gpu();
        if (!gpu)
            return context.skip(`no GPU: ${device.missing()}`);
        for (const [factors, options] of [[{ v: 1e36 / 3 }, {}], [{}, { scale: 1e24 }]]) {
            const { q, k, v } = scaled(dims, factors);
            const problem = sdpaProblem(dims, options);
            const exact = sdpaOracle(problem, q, k, v);
            const plain = sdpaFloat32(problem, q, k, v);
            const result = await attention(...shaped(dims, q, k, v), { ...options, gpu, returnLse: true });
            expect(result.impl).toBe('attention-decode');
            expect(maxAbs(result.out.data, exact.out)).toBeLessThanOrEqual(Math.max(2 * maxAbs(plain.out, exact.out), 1e-6 * Math.max(...Array.from(v, Math.abs))));
            expect(lseError(result.lse ?? [], exact.lse)).toBeLessThanOrEqual(Math.max(2 * lseError(plain.lse, exact.lse), 1e-5));
        }
    });
});
describe('attention-matrix on this GPU', () => {
    const device = deviceForGroup();
    const dims = { B: 1, Hq: 2, Hkv: 1, Lq: 20, Lk: 40, d: 16 };
    it.for(['f32', 'f16'])('takes masks near float32\'s limits as the plain computation does, %s tensors', { timeout: 900_000 }, async (dtype, context) => {
        const gpu = device.gpu();
        if (!gpu)
            return context.skip(`no GPU: ${device.missing()}`);
        const unavailable = matrixUnavailable(gpu);
        if (unavailable !== undefined) {
            console.info(`attention-matrix skipped: ${unavailable} (run \`hw4-cli sdpa --conformance --impl attention-matrix\` on a GPU with subgroup matrices)`);
            return context.skip(`attention-matrix cannot run here: ${unavailable}`);
        }
        await expectMaskLimits(gpu, 'attention-matrix', dims, dtype);
    });
    it('refuses f32 values beyond f16\'s range when named (its f16 parts would overflow)', { timeout: 900_000 }, async (context) => {
        const gpu = device.gpu();
        if (!gpu)
            return context.skip(`no GPU: ${device.missing()}`);
        const unavailable = matrixUnavailable(gpu);
        if (unavailable !== undefined) {
            console.info(`attention-matrix skipped: ${unavailable}`);
            return context.skip(`attention-matrix cannot run here: ${unavailable}`);
        }
        const { q, k, v } = scaled(dims, { v: 1e5 / 3 });
        await expect(attention(...shaped(dims, q, k, v), { gpu, kernel: 'attention-matrix' })).rejects.toThrow(/^attention-matrix could overflow float32 on these values: .*beyond f16's 65504/);
    });
});
//# sourceMappingURL=limits.test.js.map