/**
 * attention(q, k, v, options): scaled-dot-product attention on typed arrays, with PyTorch's semantics and
 * FlashAttention-2's alignment (@fa/core's sdpa/problem.ts). On a GPU it runs the kernel that fits the problem (f16
 * tensors stay f16 in memory); without one, or for a problem the kernel declines, the
 * plain float32 CPU computation of @fa/reference, and says why in `note`. Values on which that float32 arithmetic could
 * overflow (float32-range.ts, decided in one pass over q, k and v) are computed with the float64 oracle on the CPU,
 * with a note; a kernel named with `kernel` refuses them instead (SdpaOverflowError). The problem is validated once
 * and the kernel planned once (`planProblem`), and that plan is what gets prepared; a caller that planned already
 * (`planAttention`, to ask first whether the GPU runs the problem) hands its plan in with `{ plan }`.
 */
import { sdpaProblem, SdpaArgumentError, valueHeadSize } from '@fa/core';
import { sdpaFloat32Async } from '@fa/reference';
import { attentionKernel } from './fp32/attention-fp32.js';
import { evaluateMods } from './mods/mod-host.js';
import { checkModFunctions } from './mods/mod-source.js';
import { floatsToHalves, halvesToFloats } from './f16.js';
import { float32OverflowReason, float64Attention, SdpaOverflowError, tensorRange } from './float32-range.js';
import { planProblem, plannedOnly, prepareAttention } from './prepare.js';
import { attentionOptionsOf, checkPlannedAttentionOptions } from './validate-options.js';
/**
 * The dimensions q, k and v describe in `layout` (dv from v's last dimension, where it differs from d); a one-line
 * SdpaArgumentError when they disagree.
 */
export function dimsOf(q, k, v, layout = 'bhsd') {
    for (const [name, t] of [['q', q], ['k', k], ['v', v]]) {
        if (t.shape.length !== 4)
            throw new SdpaArgumentError(`${name} has ${t.shape.length} dimensions; give 4 (${layout === 'bhsd' ? 'B, H, L, d' : 'B, L, H, d'})`);
        const size = t.shape.reduce((a, n) => a * n, 1);
        if (t.data.length !== size)
            throw new SdpaArgumentError(`${name} holds ${t.data.length} values but its shape [${t.shape.join(', ')}] needs ${size}`);
    }
    const [B, a, b, d] = q.shape;
    const [kB, ka, kb, kd] = k.shape;
    const [Hq, Lq] = layout === 'bhsd' ? [a, b] : [b, a];
    const [Hkv, Lk] = layout === 'bhsd' ? [ka, kb] : [kb, ka];
    if (kB !== B)
        throw new SdpaArgumentError(`q has batch ${B} but k has ${kB}; give the same batch`);
    if (kd !== d)
        throw new SdpaArgumentError(`q has head size ${d} but k has ${kd}; give the same head size`);
    const dv = v.shape[3];
    if (v.shape.slice(0, 3).join() !== k.shape.slice(0, 3).join()) {
        throw new SdpaArgumentError(`v has shape [${v.shape.join(', ')}] but k has [${k.shape.join(', ')}]; give v the shape of k but for its last dimension (V's head size)`);
    }
    if (q.data.constructor !== k.data.constructor || q.data.constructor !== v.data.constructor) {
        throw new SdpaArgumentError('q, k and v have different types; give all three as Float32Array, or all three as f16 bits in a Uint16Array');
    }
    return { B, Hq, Hkv, Lq, Lk, d, ...(dv !== d ? { dv } : {}) };
}
/** The output's shape: q's, with V's head size last. */
function outputShape(q, problem) {
    return [...q.shape.slice(0, 3), valueHeadSize(problem.dims)];
}
const asFloats = (data) => (data instanceof Uint16Array ? halvesToFloats(data) : data);
/**
 * Attention of q, k and v: on `options.gpu` with the kernel that fits (or `options.kernel`), on the CPU otherwise or
 * where the kernel declines the problem (with a `note`); with `options.plan`, the plan of `planAttention` on its GPU.
 */
export async function attention(q, k, v, options = {}) {
    // Options of any type may come from JavaScript: those with a plan go their own way, the rest are checked below.
    if (options?.plan !== undefined)
        return attentionPlanned(q, k, v, options);
    const checked = attentionOptionsOf(options); // every option checked at run time, before any work
    const dims = dimsOf(q, k, v, options.layout);
    const problem = sdpaProblem(dims, checked.sdpa);
    const f16 = q.data instanceof Uint16Array;
    const withLse = options.returnLse === true;
    let note;
    if (options.gpu !== undefined) {
        // Planned once, on the problem validated above; prepareAttention takes the plan as it is.
        const plan = planProblem(options.gpu, problem, { ...checked.prepare, lse: withLse, dtype: f16 ? 'f16' : 'f32' });
        if (typeof plan !== 'string')
            return runPlan(q, k, v, plan);
        note = `the GPU kernel cannot run this problem here (${plan}); computed on the CPU`;
    }
    const overflow = float32OverflowReason('cpu-fp32', tensorRange(q.data, k.data, v.data, dims.d, valueHeadSize(dims)), problem, f16 ? 'f16' : 'f32');
    if (overflow !== undefined) {
        if (options.kernel !== undefined)
            throw new SdpaOverflowError('cpu-fp32', overflow);
        const declined = note === undefined ? '' : `${note.replace(/; computed on the CPU$/, '')}, and `;
        return inFloat64(problem, q, k, v, withLse, `${declined}float32 could overflow on these values (${overflow}); computed in float64 on the CPU`, options.gpu);
    }
    const mods = await modValues(options.gpu, problem, q, k);
    const { out, lse } = await sdpaFloat32Async(problem, asFloats(q.data), asFloats(k.data), asFloats(v.data), mods);
    return { out: { data: f16 ? floatsToHalves(out) : out, shape: outputShape(q, problem) }, ...(withLse ? { lse } : {}), impl: 'cpu-fp32', ...(note ? { note } : {}) };
}
/** attention() with a plan from planAttention: the tensors checked against it, then run on its GPU. */
async function attentionPlanned(q, k, v, options) {
    checkPlannedAttentionOptions(options);
    const plan = plannedOnly(options.plan, 'plan');
    if (options.gpu !== undefined && options.gpu.device !== plan.gpu.device)
        throw new SdpaArgumentError('gpu is not the GPU the plan was made for; leave gpu out, or plan again on this one');
    const { problem } = plan;
    const dims = dimsOf(q, k, v, problem.layout);
    const planned = problem.dims;
    const names = new Set([...Object.keys(planned), ...Object.keys(dims)]);
    if ([...names].some((name) => dims[name] !== planned[name])) {
        const shown = (d) => `B ${d.B}, Hq ${d.Hq}, Hkv ${d.Hkv}, Lq ${d.Lq}, Lk ${d.Lk}, d ${d.d}${d.dv !== undefined ? `, dv ${d.dv}` : ''}`;
        throw new SdpaArgumentError(`the tensors are ${shown(dims)} (${problem.layout}) but the plan is for ${shown(planned)}; plan these tensors' dimensions`);
    }
    const dtype = q.data instanceof Uint16Array ? 'f16' : 'f32';
    if (dtype !== plan.options.dtype)
        throw new SdpaArgumentError(`the tensors are ${dtype} (${q.data.constructor.name}) but the plan is for ${plan.options.dtype} tensors; plan with dtype '${dtype}'`);
    return runPlan(q, k, v, plan);
}
/** The plan prepared on its GPU and run; values on which its float32 could overflow go to float64 unless the kernel was named. */
async function runPlan(q, k, v, plan) {
    const prepared = await prepareAttention(plan.gpu, plan);
    try {
        const { out, lse } = await prepared.run(q.data, k.data, v.data);
        return { out: { data: out, shape: outputShape(q, plan.problem) }, ...(lse ? { lse } : {}), impl: prepared.impl };
    }
    catch (error) {
        // Values on which the kernel's float32 could overflow (run checks them first): float64, unless it was named.
        if (!(error instanceof SdpaOverflowError) || plan.options.kernel !== undefined)
            throw error;
        return await inFloat64(plan.problem, q, k, v, plan.options.lse, `${prepared.impl} could overflow float32 on these values (${error.reason}); computed in float64 on the CPU`, plan.gpu);
    }
    finally {
        prepared.dispose();
    }
}
/**
 * The values of the problem's score and mask functions for the CPU computations, evaluated on `gpu` (WGSL runs only
 * there); undefined without functions, or without a GPU, where the CPU computations refuse them in one line.
 */
async function modValues(gpu, problem, q, k) {
    if (!problem.mods || gpu === undefined)
        return undefined;
    await checkModFunctions(gpu, problem.mods, attentionKernel('f32'));
    return evaluateMods(gpu, problem, asFloats(q.data), asFloats(k.data));
}
/** The float64 oracle's result, for values on which float32 could overflow (float32-range.ts). */
async function inFloat64(problem, q, k, v, withLse, why, gpu) {
    const { out, lse } = await float64Attention(problem, q.data, k.data, v.data, withLse, await modValues(gpu, problem, q, k));
    return { out: { data: out, shape: outputShape(q, problem) }, ...(lse ? { lse } : {}), impl: 'cpu-fp64', note: why };
}
//# sourceMappingURL=attention.js.map