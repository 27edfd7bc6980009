/** What the attention kernels' hosts share: the tensor element type, strides, bands, and one bind group layout for two entry points. */
import { cachedLayout, valueHeadSize } from '@fa/core';
/** Invocations per workgroup of the `combine` entry points. */
export const COMBINE_WORKGROUP = 64;
/** A band as a signed 32-bit number: unbounded is a distance no shape reaches. */
const UNBOUNDED = 0x3fffffff;
/** The f32 form of a kernel's tensor access lines, and the f16 form that replaces it. */
const PACKED_F32 = ['alias Packed = vec4<f32>;', 'fn unpack(x: Packed) -> vec4<f32> { return x; }', 'fn pack(x: vec4<f32>) -> Packed { return x; }'].join('\n');
/**
 * The f16 form. `pack` clamps to ±65504 first: an output row is a weighted mean of v (|O| ≤ max|v| ≤ 65504 for f16
 * tensors), but its float32 roundings may carry it a few units past 65504, where WGSL's pack2x16float is indeterminate;
 * IEEE rounding to f16 takes everything below 65520 to 65504 anyway, so the clamp changes no value below that, and
 * makes the store defined for every float32 (float32-range.ts, step 4).
 */
const PACKED_F16 = [
    'alias Packed = vec2<u32>;',
    'fn unpack(x: Packed) -> vec4<f32> { return vec4<f32>(unpack2x16float(x.x), unpack2x16float(x.y)); }',
    'fn pack(x: vec4<f32>) -> Packed { let c = clamp(x, vec4<f32>(-65504.0), vec4<f32>(65504.0)); return vec2<u32>(pack2x16float(c.xy), pack2x16float(c.zw)); }',
].join('\n');
/** The kernel for tensors of `dtype`: for f16, its tensor access lines replaced (f16 pairs in u32s; no shader-f16 needed). */
export function forTensorType(kernel, dtype) {
    if (dtype === 'f32')
        return kernel;
    if (!kernel.code.includes(PACKED_F32))
        throw new Error(`${kernel.label} lacks its tensor access lines; the f16 variant cannot be made`);
    return { label: `${kernel.label} (f16 tensors)`, code: kernel.code.replace(PACKED_F32, PACKED_F16) };
}
/**
 * The largest head size of q and k, and of v, that attention-fp32 and attention-decode take (Gemma 2 and 3's d = 256):
 * a row group of H ≤ 8 invocations holds at most 8 vec4s of a row each (the kernels' C_MAX), and a tile of K_j and V_j
 * at d = 256 takes 32 KiB (8-key tiles: 16 KiB) of workgroup memory.
 */
export const GPU_MAX_HEAD_SIZE = 256;
/** Why a GPU kernel cannot take head sizes d (q, k) and dv (v, the output), or undefined when it can. */
export function headSizesReason(d, dv, most = GPU_MAX_HEAD_SIZE) {
    for (const [name, size] of [['d', d], ['dv', dv]]) {
        if (size > most)
            return `${name} = ${size} is above this kernel's largest head size, ${most}`;
        if (size % 4 !== 0)
            return `${name} = ${size} is not a multiple of 4`;
    }
    return undefined;
}
/** Per-tensor strides in vec4s: batch, head, row. */
export function strides(layout, heads, rows, d4) {
    return layout === 'bhsd' ? [heads * rows * d4, rows * d4, d4] : [rows * heads * d4, d4, heads * d4];
}
/**
 * Strides in vec4s of the tensors of V's head size dv (= d unless the problem gives it): V's, beside K's, and the
 * output's, beside Q's.
 */
export function valueStrides(problem) {
    const { Hq, Hkv, Lq, Lk } = problem.dims;
    const dv4 = valueHeadSize(problem.dims) / 4;
    const [vBatch, vHead, vRow] = strides(problem.layout, Hkv, Lk, dv4);
    const [oBatch, oHead, oRow] = strides(problem.layout, Hq, Lq, dv4);
    return { vBatch, vHead, vRow, oBatch, oHead, oRow };
}
/** The uniform values every kernel shares: shapes, strides, scale, band, the bits of −∞. */
export function commonUniforms(problem) {
    const { Hq, Hkv, Lq, Lk, d } = problem.dims;
    const [qBatch, qHead, qRow] = strides(problem.layout, Hq, Lq, d / 4);
    const [kvBatch, kvHead, kvRow] = strides(problem.layout, Hkv, Lk, d / 4);
    return {
        Lq,
        Lk,
        Hq,
        GROUP: Hq / Hkv,
        qBatch,
        qHead,
        qRow,
        kvBatch,
        kvHead,
        kvRow,
        scaleLog2: problem.scale * Math.LOG2E,
        left: Number.isFinite(problem.left) ? Math.min(problem.left, UNBOUNDED) : UNBOUNDED,
        right: Number.isFinite(problem.right) ? Math.min(problem.right, UNBOUNDED) : UNBOUNDED,
        minusInfinity: 0xff800000,
    };
}
/** The most capIn the kernels take: a base-2 score times it stays finite (|s| < 2^101 by float32-range.ts). */
const CAP_IN_MAX = 2 ** 26;
/**
 * The softcap's uniforms. The kernels' scores are in base 2 (s·log2 e); the softcap is applied in natural units: a
 * score times capIn = ln(2)/c is s/c, and capOut = c·log2(e) times its tanh is c·tanh(s/c) back in base 2. capIn is
 * held at 2^26 (c below 1.03e-8), so that no product overflows: there the capped scores lie within ±c·log2(e), under
 * 1.5e-8, either way, below what float32 resolves in the softmax.
 */
export function softcapUniforms(problem) {
    const c = problem.softcap;
    return c === undefined ? { capIn: 0, capOut: 0 } : { capIn: Math.min(Math.LN2 / c, CAP_IN_MAX), capOut: c * Math.LOG2E };
}
/** The switches of the softcap, ALiBi and sinks, as the kernels' uniforms name them (1: on). */
/** Whether a problem has a softcap, ALiBi slopes or sinks (the terms the tiled kernels add to scores and to ℓ). */
export function hasScoreTerms(problem) {
    return problem.softcap !== undefined || problem.alibiSlopes !== undefined || problem.sinks !== undefined;
}
export function scoreTermSwitches(problem) {
    return { softcap: problem.softcap !== undefined ? 1 : 0, alibi: problem.alibiSlopes ? 1 : 0, sinks: problem.sinks ? 1 : 0 };
}
/**
 * Each query head's ALiBi slope and sink logit in base 2 (×log2 e, computed in float64 and rounded once), as pairs
 * [slope_0, sink_0, slope_1, sink_1, …] (0 for the one not given); undefined when the problem has neither.
 */
export function headTerms(problem) {
    const { alibiSlopes, sinks } = problem;
    if (!alibiSlopes && !sinks)
        return undefined;
    const { Hq } = problem.dims;
    const terms = new Float32Array(2 * Hq);
    for (let h = 0; h < Hq; h++) {
        terms[2 * h] = (alibiSlopes?.[h] ?? 0) * Math.LOG2E;
        terms[2 * h + 1] = (sinks?.[h] ?? 0) * Math.LOG2E;
    }
    return terms;
}
/**
 * One bind group layout with every binding of a kernel, so that its entry points share a bind group: the same objects
 * for every kernel of equal bindings on this device (@fa/core's cachedLayout), so that preparing a problem again, or
 * another problem with the same constants, finds its pipelines compiled (a new layout would compile them again).
 */
export function explicitLayout(gpu, bindings, label) {
    const typeOf = (space) => {
        const normalized = space.replace(/\s*,\s*/g, ', ');
        if (normalized === 'uniform')
            return 'uniform';
        return normalized === 'storage, read_write' ? 'storage' : 'read-only-storage';
    };
    const entries = bindings.map(({ binding, space }) => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type: typeOf(space) } }));
    const { bindGroupLayout, pipelineLayout } = cachedLayout(gpu, label, entries);
    return Object.assign(pipelineLayout, { getBindGroupLayout: () => bindGroupLayout });
}
/** The bind group resource of a buffer or a range of one. */
export function bindingResource(binding) {
    return 'offset' in binding ? { buffer: binding.buffer, offset: binding.offset, size: binding.size } : { buffer: binding };
}
/**
 * A kernel's uniform buffer per run of batches (batch0, batches), written once: runs recorded into one encoder keep
 * their own values (every queue write lands before the encoder runs, so one shared buffer would hold the last run's).
 */
export class RunUniforms {
    device;
    owned;
    label;
    bytes;
    byRun = new Map();
    constructor(device, owned, label, bytes) {
        this.device = device;
        this.owned = owned;
        this.label = label;
        this.bytes = bytes;
    }
    /** The buffer of this run, made and filled with `values()` the first time. */
    of(batch0, batches, values) {
        const key = `${batch0},${batches}`;
        let buffer = this.byRun.get(key);
        if (!buffer) {
            buffer = this.owned.uniform(`${this.label} params, batches ${batch0} to ${batch0 + batches - 1}`, this.bytes);
            this.device.queue.writeBuffer(buffer, 0, values());
            this.byRun.set(key, buffer);
        }
        return buffer;
    }
}
/** Storage buffers a kernel owns: made (and filled) here, destroyed together. */
export class OwnedBuffers {
    device;
    all = [];
    constructor(device) {
        this.device = device;
    }
    /** A STORAGE buffer of `data` (or of `bytes` zeros), at least 16 bytes; COPY_SRC, so that the host may read it back. */
    storage(label, data, bytes = 16) {
        const size = Math.max(16, Math.ceil((data?.byteLength ?? bytes) / 4) * 4);
        const buffer = this.device.createBuffer({ label, size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC });
        if (data)
            this.device.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
        this.all.push(buffer);
        return buffer;
    }
    uniform(label, bytes) {
        const buffer = this.device.createBuffer({ label, size: Math.max(16, Math.ceil(bytes / 16) * 16), usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
        this.all.push(buffer);
        return buffer;
    }
    destroy() {
        for (const buffer of this.all)
            buffer.destroy();
    }
}
//# sourceMappingURL=kernel-support.js.map