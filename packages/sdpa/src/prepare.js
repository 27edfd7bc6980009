/**
 * Attention planned once and prepared once for one problem (dimensions and options) on one GPU. `planAttention`
 * validates the problem and chooses the kernel and its plan (nothing compiled); `prepareAttention` compiles that plan
 * and uploads the masks, then runs on typed arrays (upload, dispatch, read back) or encodes into the caller's command
 * encoder on the caller's buffers, as often as wanted, until `dispose`.
 */
import { checked, describeValue, SdpaArgumentError, sdpaOptionsOf, sdpaProblem, UnsupportedShapeError, validCacheLengths, valueHeadSize } from '@fa/core';
import { decodePlan, prepareDecodeKernel } from './decode/attention-decode.js';
import { refuseOverflow } from './float32-range.js';
import { attentionKernel, fp32Plan } from './fp32/attention-fp32.js';
import { checkModFunctions } from './mods/mod-source.js';
import { matrixPlan } from './matrix/attention-matrix.js';
import { prepareTiledKernel } from './tiled-host.js';
import { checkGpu, checkPrepareOptions, checkRunOptions } from './validate-options.js';
/** Query rows per head up to which the decode kernel is the default. */
export const DECODE_MAX_LQ = 16;
/** The plans planAttention made: prepareAttention and attention take these only, so that none skips the checks. */
const PLANS = new WeakSet();
/** The kernel's plan chosen for a problem, or the reasons none can run it. */
function chooseKernelPlan(problem, gpu, options) {
    const { lse, dtype, kernel: wanted } = options;
    if (wanted === 'attention-decode' || (wanted === undefined && problem.dims.Lq <= DECODE_MAX_LQ)) {
        const plan = decodePlan(problem, gpu, lse, dtype, options.tuning);
        if (typeof plan !== 'string')
            return { kernel: 'attention-decode', kernelPlan: plan };
        if (wanted === 'attention-decode')
            return plan;
    }
    if (wanted === 'attention-matrix' || (wanted === undefined && dtype === 'f16')) {
        const plan = matrixPlan(problem, gpu, lse, dtype, options.tuning);
        if (typeof plan !== 'string')
            return { kernel: plan.id, kernelPlan: plan };
        if (wanted === 'attention-matrix')
            return plan;
    }
    const plan = fp32Plan(problem, gpu, lse, dtype, options.tuning);
    return typeof plan === 'string' ? plan : { kernel: plan.id, kernelPlan: plan };
}
/** The problem of the arguments, each checked at run time (validate-options.ts) before any GPU work; SdpaArgumentError otherwise. */
function checkedProblem(gpu, dims, options) {
    checkGpu(gpu);
    checkPrepareOptions(options);
    return sdpaProblem(dims, sdpaOptionsOf(options ?? {}));
}
/**
 * Validates the problem once (the GPU, the dimensions and every option, each refused in one SdpaArgumentError line)
 * and chooses the kernel and its plan for it on `gpu`, compiling nothing: the plan, which `prepareAttention(gpu, plan)`
 * compiles and `attention(q, k, v, { plan })` runs without validating or choosing again; or the reason no kernel can
 * run this problem here (the kernel named in `options`, or by default the decode kernel where it runs, then for f16
 * tensors attention-matrix where it runs, and attention-fp32 otherwise).
 */
export function planAttention(gpu, dims, options = {}) {
    return planProblem(gpu, checkedProblem(gpu, dims, options), options);
}
/**
 * planAttention on a problem the caller validated, with options it checked (attention() checks its own once): the
 * options resolved, the kernel chosen and planned, nothing checked again.
 */
export function planProblem(gpu, problem, options) {
    const resolved = Object.freeze({
        dtype: options.dtype ?? 'f32',
        lse: options.lse === true,
        ...(options.kernel !== undefined ? { kernel: options.kernel } : {}),
        ...(options.maxBindingBytes !== undefined ? { maxBindingBytes: options.maxBindingBytes } : {}),
        ...(options.tuning !== undefined ? { tuning: Object.freeze({ ...options.tuning }) } : {}),
    });
    const chosen = chooseKernelPlan(problem, gpu, resolved);
    if (typeof chosen === 'string')
        return chosen;
    const plan = Object.freeze({ problem, gpu, options: resolved, ...chosen });
    PLANS.add(plan);
    return plan;
}
/** Whether `value` is a plan planAttention made. */
function isAttentionPlan(value) {
    return typeof value === 'object' && value !== null && PLANS.has(value);
}
/** `plan` when planAttention made it; an SdpaArgumentError naming `where` otherwise (an object copied from a plan included). */
export function plannedOnly(plan, where) {
    if (isAttentionPlan(plan))
        return plan;
    throw new SdpaArgumentError(`${where} is ${describeValue(plan)}, not a plan made by planAttention; give what planAttention returned (a copy is not taken)`);
}
/**
 * The kernel `prepareAttention` would compile for this problem here (nothing is compiled); undefined when none can run
 * it (`gpuUnsupportedReason` says why). Each call validates and plans: to ask and then prepare, plan once with
 * `planAttention` and hand the plan to `prepareAttention(gpu, plan)`.
 */
export function chooseKernel(gpu, dims, options = {}) {
    const plan = planAttention(gpu, dims, options);
    return typeof plan === 'string' ? undefined : plan.kernel;
}
/**
 * Why the GPU kernel cannot run this problem here, or undefined when it can. Each call validates and plans: to ask
 * and then prepare, plan once with `planAttention` and hand the plan to `prepareAttention(gpu, plan)`.
 */
export function gpuUnsupportedReason(gpu, dims, options = {}) {
    const plan = planAttention(gpu, dims, options);
    return typeof plan === 'string' ? plan : undefined;
}
export async function prepareAttention(gpu, dimsOrPlan, options) {
    if (isAttentionPlan(dimsOrPlan)) {
        checkGpu(gpu);
        if (options !== undefined)
            throw new SdpaArgumentError('prepareAttention(gpu, plan) takes no options: the plan holds them (give them to planAttention)');
        if (gpu.device !== dimsOrPlan.gpu.device)
            throw new SdpaArgumentError('the plan was made for another GPU; plan again with planAttention on this one');
        return preparePlanned(dimsOrPlan);
    }
    // An object that looks like a plan but is not one planAttention made (a copy, a spread) is refused, not read as dimensions.
    const given = dimsOrPlan;
    if (typeof given === 'object' && given !== null && 'kernelPlan' in given)
        plannedOnly(given, 'the plan');
    const plan = planAttention(gpu, dimsOrPlan, options);
    if (typeof plan === 'string')
        throw new UnsupportedShapeError(`${options?.kernel ?? 'attention-fp32'} cannot run this problem here: ${plan}`);
    return preparePlanned(plan);
}
/** The plan compiled on its GPU, and its runs of batches sized to the GPU's bytes per binding. */
async function preparePlanned(plan) {
    const { problem, gpu, options } = plan;
    const { lse: withLse, dtype } = options;
    // Score and mask functions: their WGSL checked first, so that an error is one line at the caller's line.
    if (problem.mods)
        await checkModFunctions(gpu, problem.mods, attentionKernel(dtype));
    const kernel = plan.kernel === 'attention-decode' ? await prepareDecodeKernel(gpu, problem, plan.kernelPlan) : await prepareTiledKernel(gpu, problem, plan.kernelPlan, options.tuning?.prefillSplits);
    const { B, Hq, Hkv, Lq, Lk, d } = problem.dims;
    const dv = valueHeadSize(problem.dims);
    const size = dtype === 'f16' ? 2 : 4;
    // Bytes per batch of each tensor: K of head size d, V and the output of dv.
    const bytes = { q: Hq * Lq * d * size, kv: Hkv * Lk * d * size, v: Hkv * Lk * dv * size, out: Hq * Lq * dv * size, lse: Hq * Lq * 4 };
    const tensorBytes = Math.max(bytes.q, bytes.kv, bytes.v, bytes.out);
    const limit = Math.min(gpu.report.limits.maxStorageBufferBindingSize, gpu.report.limits.maxBufferSize, options.maxBindingBytes ?? Number.POSITIVE_INFINITY);
    const batchesPerRun = Math.min(B, Math.floor(limit / Math.max(tensorBytes, withLse ? bytes.lse : 0)));
    if (batchesPerRun < 1) {
        kernel.destroy();
        throw new UnsupportedShapeError(`one batch of this problem needs ${tensorBytes} bytes in one binding, over this GPU's ${limit}`);
    }
    // On the caller's buffers, a run of batches starts at an offset each binding takes: a multiple of the alignment.
    const alignment = gpu.device.limits.minStorageBufferOffsetAlignment;
    const encodedRun = alignedRun(batchesPerRun, [bytes.q, bytes.kv, ...(dv !== d ? [bytes.v, bytes.out] : []), ...(withLse ? [bytes.lse] : [])], alignment);
    const dispose = () => {
        kernel.destroy();
    };
    return {
        problem,
        impl: plan.kernel,
        plan,
        encode(encoder, buffers, timestampWrites) {
            const need = { q: B * bytes.q, k: B * bytes.kv, v: B * bytes.v, out: B * bytes.out, lse: B * bytes.lse };
            for (const name of ['q', 'k', 'v', 'out']) {
                if (buffers[name].size < need[name])
                    throw new RangeError(`attention: buffer ${name} holds ${buffers[name].size} bytes; this problem needs ${need[name]}`);
            }
            if (withLse && (buffers.lse === undefined || buffers.lse.size < need.lse))
                throw new RangeError(`attention: prepared with lse, so give an lse buffer of ${need.lse} bytes`);
            if (problem.cacheLengths && (buffers.cacheLengths === undefined || buffers.cacheLengths.size < 4 * B)) {
                throw new RangeError(`attention: prepared with cacheLengths, so give a cacheLengths buffer of ${4 * B} bytes (one u32 per batch)`);
            }
            const lengths = problem.cacheLengths ? { lengths: buffers.cacheLengths } : {};
            if (Math.max(need.q, need.k, need.v, need.out, withLse ? need.lse : 0) <= limit) {
                kernel.encode(encoder, { q: buffers.q, k: buffers.k, v: buffers.v, O: buffers.out, ...(buffers.lse ? { lse: buffers.lse } : {}), ...lengths }, 0, B, timestampWrites);
                return;
            }
            // Tensors over one binding: runs of whole batches, each bound as a range of the caller's buffers.
            if (encodedRun === 0) {
                throw new RangeError(`attention: a tensor is over this GPU's ${limit} bytes per binding, and no run of batches starts at offsets aligned to ${alignment} bytes (per batch: q ${bytes.q}, k ${bytes.kv}, v ${bytes.v}, out ${bytes.out} bytes); encode fewer batches at a time`);
            }
            for (let batch0 = 0; batch0 < B; batch0 += encodedRun) {
                const n = Math.min(encodedRun, B - batch0);
                const range = (buffer, per) => ({ buffer, offset: batch0 * per, size: Math.min(Math.ceil((n * per) / 4) * 4, buffer.size - batch0 * per) });
                const writes = timestampWrites && passWrites(timestampWrites, batch0 === 0, batch0 + n >= B);
                kernel.encode(encoder, { q: range(buffers.q, bytes.q), k: range(buffers.k, bytes.kv), v: range(buffers.v, bytes.v), O: range(buffers.out, bytes.out), ...(buffers.lse ? { lse: range(buffers.lse, bytes.lse) } : {}), ...lengths }, batch0, n, writes);
            }
        },
        run: (q, k, v, runOptions) => {
            checkRunOptions(runOptions, problem.cacheLengths !== undefined);
            refuseOverflow(plan.kernel, problem, dtype, q, k, v); // values on which the kernel's float32 could overflow
            const cacheLengths = problem.cacheLengths ? validCacheLengths(runOptions?.cacheLengths ?? problem.cacheLengths, B, problem.dims.Lk) : undefined;
            return runArrays({ plan, kernel, batchesPerRun, cacheLengths, q, k, v });
        },
        dispose,
        destroy() {
            dispose();
        },
    };
}
/**
 * The most batches (at most `most`) whose bytes per tensor are each a multiple of `alignment`, so that every run starts
 * at an offset a binding takes; 0 when even `most` batches do not get there.
 */
export function alignedRun(most, bytesPerBatch, alignment) {
    const gcd = (a, b) => (b === 0 ? a : gcd(b, a % b));
    // n · bytes is a multiple of alignment when n is a multiple of alignment / gcd(bytes, alignment).
    const step = bytesPerBatch.reduce((lcm, bytes) => {
        const need = alignment / gcd(bytes, alignment);
        return (lcm * need) / gcd(lcm, need);
    }, 1);
    return Math.floor(most / step) * step;
}
/** The timestamp writes of one of several passes: the beginning on the first, the end on the last. */
function passWrites(writes, first, last) {
    if (!first && !last)
        return undefined;
    return {
        querySet: writes.querySet,
        ...(first && writes.beginningOfPassWriteIndex !== undefined ? { beginningOfPassWriteIndex: writes.beginningOfPassWriteIndex } : {}),
        ...(last && writes.endOfPassWriteIndex !== undefined ? { endOfPassWriteIndex: writes.endOfPassWriteIndex } : {}),
    };
}
/** Runs typed arrays through the kernel, `batchesPerRun` batches at a time, on buffers of its own. */
async function runArrays({ plan, kernel, batchesPerRun, cacheLengths, q, k, v }) {
    const { problem, gpu } = plan;
    const { dtype, lse: withLse } = plan.options;
    const { B, Hq, Hkv, Lq, Lk, d } = problem.dims;
    const dv = valueHeadSize(problem.dims);
    const Type = dtype === 'f16' ? Uint16Array : Float32Array;
    const counts = { q: Hq * Lq * d, kv: Hkv * Lk * d, v: Hkv * Lk * dv, out: Hq * Lq * dv, lse: Hq * Lq };
    for (const [name, data, per] of [['q', q, counts.q], ['k', k, counts.kv], ['v', v, counts.v]]) {
        if (!(data instanceof Type))
            throw new TypeError(`attention: ${name} is a ${data.constructor.name}; prepared for ${dtype} tensors, give a ${Type.name}`);
        if (data.length !== B * per)
            throw new RangeError(`attention: ${name} holds ${data.length} values; this problem needs ${B * per}`);
    }
    const { device } = gpu;
    const size = Type.BYTES_PER_ELEMENT;
    const make = (label, bytes, usage) => device.createBuffer({ label, size: Math.max(16, Math.ceil(bytes / 4) * 4), usage });
    const STORAGE_IN = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
    const STORAGE_OUT = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC;
    const READ = GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST;
    const buffers = {
        q: make('attention q', batchesPerRun * counts.q * size, STORAGE_IN),
        k: make('attention k', batchesPerRun * counts.kv * size, STORAGE_IN),
        v: make('attention v', batchesPerRun * counts.v * size, STORAGE_IN),
        O: make('attention out', batchesPerRun * counts.out * size, STORAGE_OUT),
        ...(withLse ? { lse: make('attention lse', batchesPerRun * counts.lse * 4, STORAGE_OUT) } : {}),
        ...(cacheLengths ? { lengths: make('attention cache lengths', 4 * B, STORAGE_IN) } : {}),
    };
    if (buffers.lengths && cacheLengths)
        device.queue.writeBuffer(buffers.lengths, 0, Uint32Array.from(cacheLengths));
    const readOut = make('attention out readback', batchesPerRun * counts.out * size, READ);
    const readLse = make('attention lse readback', withLse ? batchesPerRun * counts.lse * 4 : 16, READ);
    const out = new Type(B * counts.out);
    const lse = withLse ? new Float32Array(B * counts.lse) : undefined;
    /** Copies `target.length` elements from a mapped readback buffer. */
    const read = async (from, target) => {
        const bytes = Math.ceil(target.byteLength / 4) * 4;
        await from.mapAsync(GPUMapMode.READ, 0, bytes);
        new Uint8Array(target.buffer, target.byteOffset, target.byteLength).set(new Uint8Array(from.getMappedRange(0, bytes), 0, target.byteLength));
        from.unmap();
    };
    try {
        for (let batch0 = 0; batch0 < B; batch0 += batchesPerRun) {
            const n = Math.min(batchesPerRun, B - batch0);
            const slice = (data, per) => data.subarray(batch0 * per, (batch0 + n) * per);
            const upload = (buffer, data) => {
                // writeBuffer copies a multiple of 4 bytes; an odd count of f16 values goes through a padded copy.
                const padded = data.byteLength % 4 === 0 ? data : new Uint8Array(Math.ceil(data.byteLength / 4) * 4);
                if (padded !== data)
                    padded.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
                device.queue.writeBuffer(buffer, 0, padded.buffer, padded.byteOffset, padded.byteLength);
            };
            await checked(gpu, `attention on batches ${batch0} to ${batch0 + n - 1}`, () => {
                upload(buffers.q, slice(q, counts.q));
                upload(buffers.k, slice(k, counts.kv));
                upload(buffers.v, slice(v, counts.v));
                const encoder = device.createCommandEncoder({ label: 'attention' });
                kernel.encode(encoder, buffers, batch0, n);
                encoder.copyBufferToBuffer(buffers.O, 0, readOut, 0, Math.ceil((n * counts.out * size) / 4) * 4);
                if (buffers.lse)
                    encoder.copyBufferToBuffer(buffers.lse, 0, readLse, 0, n * counts.lse * 4);
                device.queue.submit([encoder.finish()]);
            });
            await read(readOut, slice(out, counts.out));
            if (lse)
                await read(readLse, slice(lse, counts.lse));
        }
    }
    finally {
        for (const buffer of [...Object.values(buffers), readOut, readLse])
            buffer.destroy();
    }
    return { out, ...(lse ? { lse } : {}) };
}
//# sourceMappingURL=prepare.js.map