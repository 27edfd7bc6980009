/**
 * The attention function on the awkward cases (cases.ts), against the float64 oracle: the GPU kernel (on the software
 * GPU in CI) within 2× the error of the plain float32 computation (or 1e-6), f16 tensors within 2× the plain f16
 * computation's, the CPU path, the log-sum-exps, and the arguments it refuses.
 */
import { describe, expect, it } from 'vitest';
import { sdpaProblem } from '@fa/core';
import { sdpaFloat16Plain, sdpaOracle } from '@fa/reference';
import { attention, chooseKernel, DECODE_MAX_LQ, dimsOf, floatsToHalves, halvesToFloats, prepareAttention, SdpaArgumentError } from '../src/index.js';
import { alignedRun } from '../src/prepare.js';
import { sdpaFloat32 } from '@fa/reference';
import { checkCase, GROUPS, maxAbs, readBack, tensors } from '../src/conformance.js';
import { deviceForGroup } from './device-for-group.js';
describe.each(GROUPS)('attention-fp32: $name', ({ cases }) => {
    const device = deviceForGroup();
    it.for(cases)('$name', { timeout: 600_000 }, async (c, context) => {
        const gpu = device.gpu();
        if (!gpu) {
            context.skip(`no GPU: ${device.missing()}`);
            return;
        }
        const { impl, error, limit, lseError, lseLimit } = await checkCase(gpu, c);
        if (c.kernel !== undefined)
            expect(impl).toBe(c.kernel);
        expect(error, `max error ${error} against the plain float32 computation's limit ${limit}`).toBeLessThanOrEqual(limit);
        expect(lseError, `log-sum-exp error ${lseError} against ${lseLimit}`).toBeLessThanOrEqual(lseLimit);
    });
});
describe('the kernel a problem gets', () => {
    const device = deviceForGroup();
    it(`is the decode kernel for up to ${DECODE_MAX_LQ} query rows per head without element masks, attention-fp32 otherwise`, (context) => {
        const gpu = device.gpu();
        if (!gpu) {
            context.skip(`no GPU: ${device.missing()}`);
            return;
        }
        const decode = { B: 2, Hq: 8, Hkv: 2, Lq: 1, Lk: 1000, d: 64 };
        expect(chooseKernel(gpu, decode)).toBe('attention-decode');
        expect(chooseKernel(gpu, { ...decode, Lq: DECODE_MAX_LQ + 1 })).toBe('attention-fp32');
        expect(chooseKernel(gpu, decode, { mask: { kind: 'bool', data: new Uint8Array(1000).fill(1), shape: [1000] } })).toBe('attention-fp32');
        expect(chooseKernel(gpu, { ...decode, Hq: 64, Lq: 16, Hkv: 2 })).toBe('attention-fp32'); // 512 rows per KV head
    });
});
describe('f16 tensors', () => {
    const device = deviceForGroup();
    it('stay within 2× the error of the plain f16 computation on the prefill kernel (GQA 4, causal)', { timeout: 600_000 }, async (context) => {
        const gpu = device.gpu();
        if (!gpu) {
            context.skip(`no GPU: ${device.missing()}`);
            return;
        }
        const prefill = GROUPS[0]?.cases[0];
        if (!prefill)
            throw new Error('the first case group is empty');
        const { impl, error, limit, lseError, lseLimit } = await checkCase(gpu, prefill, { dtype: 'f16' });
        expect(impl).toBe('attention-fp32');
        expect(error).toBeLessThanOrEqual(limit);
        expect(lseError).toBeLessThanOrEqual(lseLimit);
    });
    // On the decode kernel, whose f16 variant a software GPU compiles in a fraction of the prefill kernel's time; both
    // make their f16 variant the same way (forTensorType).
    it('stays within 2× the error of the plain f16 computation (decode: 4 rows, GQA 2, causal), shader-f16 or not', { timeout: 600_000 }, async (context) => {
        const gpu = device.gpu();
        if (!gpu) {
            context.skip(`no GPU: ${device.missing()}`);
            return;
        }
        const dims = { B: 1, Hq: 4, Hkv: 2, Lq: 2, Lk: 70, d: 64 };
        const halves = tensors(dims, 23);
        const [q, k, v] = [halves.q, halves.k, halves.v].map((x) => floatsToHalves(x));
        const [qf, kf, vf] = [q, k, v].map((x) => halvesToFloats(x));
        const problem = sdpaProblem(dims, { causal: true });
        const exact = sdpaOracle(problem, qf, kf, vf);
        const prepared = await prepareAttention(gpu, dims, { causal: true, dtype: 'f16' });
        expect(prepared.impl).toBe('attention-decode');
        const { out } = await prepared.run(q, k, v);
        prepared.dispose();
        const error = maxAbs(halvesToFloats(out), exact.out);
        expect(error).toBeLessThanOrEqual(2 * maxAbs(sdpaFloat16Plain(problem, qf, kf, vf).out, exact.out));
    });
});
describe('tensors over one binding', () => {
    const device = deviceForGroup();
    it('are split into runs of whole batches, each bound as a range of the caller\'s buffers', { timeout: 600_000 }, async (context) => {
        const gpu = device.gpu();
        if (!gpu) {
            context.skip(`no GPU: ${device.missing()}`);
            return;
        }
        // Per batch: q 2048 bytes, k and v 4096, lse 128. With 8192 bytes per binding, runs of 2, 2 and 1 batches.
        const dims = { B: 5, Hq: 4, Hkv: 2, Lq: 8, Lk: 32, d: 16 };
        const { q, k, v } = tensors(dims, 41);
        const problem = sdpaProblem(dims, { causal: true });
        const exact = sdpaOracle(problem, q, k, v);
        const plain = sdpaFloat32(problem, q, k, v);
        const prepared = await prepareAttention(gpu, dims, { causal: true, lse: true, maxBindingBytes: 8192 });
        const { device: gpuDevice } = gpu;
        const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
        const upload = (data) => {
            const buffer = gpuDevice.createBuffer({ size: data.byteLength, usage });
            gpuDevice.queue.writeBuffer(buffer, 0, data);
            return buffer;
        };
        const buffers = { q: upload(q), k: upload(k), v: upload(v), out: upload(new Float32Array(q.length)), lse: upload(new Float32Array(5 * 4 * 8)) };
        const floatsOf = async (buffer) => new Float32Array(await readBack(gpuDevice, buffer, buffer.size));
        try {
            const encoder = gpuDevice.createCommandEncoder();
            prepared.encode(encoder, buffers);
            gpuDevice.queue.submit([encoder.finish()]);
            const [out, lse] = [await floatsOf(buffers.out), await floatsOf(buffers.lse)];
            expect(maxAbs(out, exact.out)).toBeLessThanOrEqual(Math.max(2 * maxAbs(plain.out, exact.out), 1e-6));
            expect(maxAbs(lse, exact.lse)).toBeLessThanOrEqual(Math.max(2 * maxAbs(plain.lse, exact.lse), 1e-5));
        }
        finally {
            prepared.dispose();
            for (const buffer of Object.values(buffers))
                buffer.destroy();
        }
    });
    it('run in batches whose bytes keep every offset aligned, or not at all', () => {
        expect(alignedRun(2, [2048, 4096, 128], 256)).toBe(2); // 128-byte lse rows: an even number of batches
        expect(alignedRun(7, [2048, 4096, 128], 256)).toBe(6);
        expect(alignedRun(2, [2048, 4096, 32], 256)).toBe(0); // 32-byte rows need runs of 8 batches
        expect(alignedRun(3, [96, 256], 256)).toBe(0); // 96 bytes: runs of 8
        expect(alignedRun(9, [96, 256], 256)).toBe(8);
    });
});
describe('attention()', () => {
    const dims = { B: 1, Hq: 2, Hkv: 1, Lq: 9, Lk: 13, d: 12 };
    const { q, k, v } = tensors(dims, 3);
    const shapeQ = [1, 2, 9, 12];
    const shapeKV = [1, 1, 13, 12];
    it('computes on the CPU without a GPU, with the oracle\'s semantics', async () => {
        const result = await attention({ data: q, shape: shapeQ }, { data: k, shape: shapeKV }, { data: v, shape: shapeKV }, { causal: true, returnLse: true });
        const exact = sdpaOracle(sdpaProblem(dims, { causal: true }), q, k, v);
        expect(result.impl).toBe('cpu-fp32');
        expect(maxAbs(result.out.data, exact.out)).toBeLessThan(1e-5);
        expect(maxAbs(result.lse ?? [], exact.lse)).toBeLessThan(1e-5);
    });
    it('takes f16 tensors as their bits and returns f16', async () => {
        const half = (x) => Uint16Array.from(x, (_, e) => 0x3c00 + (e % 64)); // values 1 … 1.06
        const result = await attention({ data: half(q), shape: shapeQ }, { data: half(k), shape: shapeKV }, { data: half(v), shape: shapeKV });
        expect(result.out.data).toBeInstanceOf(Uint16Array);
        expect(result.out.shape).toEqual(shapeQ);
    });
    it('refuses shapes that do not fit, in one line', () => {
        expect(() => sdpaProblem({ ...dims, Hkv: 3, Hq: 4 })).toThrow(/4 query heads are not a multiple of 3 key\/value heads/);
        expect(() => dimsOf({ data: q, shape: shapeQ }, { data: k, shape: [1, 1, 13, 11] }, { data: v, shape: shapeKV })).toThrow(SdpaArgumentError);
        expect(() => dimsOf({ data: q, shape: [2, 9, 12] }, { data: k, shape: shapeKV }, { data: v, shape: shapeKV })).toThrow(/q has 3 dimensions; give 4/);
    });
});
describe('preparing again', () => {
    const device = deviceForGroup();
    it('finds the pipelines compiled: a second problem of the same plan compiles nothing', { timeout: 300_000 }, async (context) => {
        const gpu = device.gpu();
        if (!gpu)
            return context.skip(device.missing());
        const { pipelineCounts } = await import('@fa/core');
        const first = await prepareAttention(gpu, { B: 1, Hq: 2, Hkv: 1, Lq: 20, Lk: 20, d: 8 }, { kernel: 'attention-fp32' });
        first.dispose();
        const compiled = pipelineCounts(gpu).compiled.length;
        expect(compiled).toBeGreaterThan(0);
        const second = await prepareAttention(gpu, { B: 2, Hq: 2, Hkv: 1, Lq: 33, Lk: 33, d: 8 }, { kernel: 'attention-fp32' });
        second.dispose();
        expect(pipelineCounts(gpu).compiled.length).toBe(compiled);
    });
});
//# sourceMappingURL=attention.test.js.map