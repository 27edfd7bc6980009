/**
 * The decode kernel (attention-decode.wgsl): a few query rows per head against a long cache, the query heads of a KV
 * group together so that K and V are read once per group, keys split over workgroups and merged by `combine`.
 */
import { checked, checkUniforms, computePipelines, grid2d, kernelBindings, kernelWorkgroupBytes, packUniforms, valueHeadSize, } from '@fa/core';
import { bindingResource, COMBINE_WORKGROUP, commonUniforms, explicitLayout, forTensorType, headSizesReason, headTerms, OwnedBuffers, RunUniforms, scoreTermSwitches, softcapUniforms, valueStrides, } from '../kernel-support.js';
import code from './attention-decode.wgsl';
export const ATTENTION_DECODE_KERNEL = { label: 'attention-decode.wgsl', code };
/** Invocations per workgroup. */
const WG = 128;
/** Most vec4 slots of O per invocation (the kernel's SLOT_MAX). */
const SLOT_MAX = 8;
/** Query rows a workgroup may hold: GROUP · Lq. */
export const DECODE_MAX_ROWS = 32;
/** Workgroups to aim for (several per compute unit on a large GPU). */
const TARGET_WORKGROUPS = 512;
/**
 * Keys per tile, the first that fits: 16 for f32 tensors, 8 for f16 ones. Measured on the H100 (2026-11-27, f16 decode,
 * 32/8 heads, d = 128, ms, 16 keys against 8): 1 row of 4096 keys 0.037 / 0.035, of 32768 keys 0.140 / 0.123, B = 8
 * 0.121 / 0.114 and 0.806 / 0.772, 4 rows of 32768 keys 0.375 / 0.292; f32, 1 row of 32768 keys: 0.134 / 0.135
 * (docs/decode.md).
 */
const F32_TILE_KEYS = [16, 8];
const F16_TILE_KEYS = [8, 16];
/** Most vec4s of K_j (and of V_j) one invocation loads per tile (the kernel's LD_MAX). */
const LD_MAX = 16;
/** The keys of DecodeTuning, for the checks of the library's options and of the bench's FA_SDPA_TUNING. */
export const TUNING_KEYS = ['keysPerTile', 'targetWorkgroups', 'prefillSplits', 'matrixKeysPerTile', 'matrixSubgroups', 'matrixFlush', 'matrixColumnsPerRound', 'matrixKvTiles', 'fp32Invocations'];
/** The decode kernel's plan, or why it does not take this problem (the prefill kernel then does). */
export function decodePlan(problem, gpu, lse, dtype, tuning = {}) {
    const { Hq, Hkv, Lq, d } = problem.dims;
    const dv = valueHeadSize(problem.dims);
    const R = (Hq / Hkv) * Lq;
    if (R > DECODE_MAX_ROWS)
        return `${R} query rows per KV head, more than the decode kernel's ${DECODE_MAX_ROWS}`;
    if (problem.mask || problem.blockMask)
        return 'element and block masks are the prefill kernel\'s';
    if (problem.mods)
        return 'score and mask functions (scoreMod, maskMod) are the prefill kernel\'s (attention-fp32)';
    const head = headSizesReason(d, dv);
    if (head !== undefined)
        return head;
    if (Math.ceil((R * dv) / 4 / WG) > SLOT_MAX)
        return `${R} rows of ${dv} need more than ${SLOT_MAX} slots per invocation`;
    const limit = gpu.report.limits.maxComputeWorkgroupStorageSize;
    // V's head size only where it differs, so that dv = d compiles as before.
    const heads = { D: d, ...(dv !== d ? { DV: dv } : {}) };
    // Workgroup memory as the kernel declares it (the query rows, the K and V tiles, the scores, each row's m, ℓ, α).
    const bytes = (keys) => kernelWorkgroupBytes(ATTENTION_DECODE_KERNEL.code, { ...heads, R, BK: keys, WG, LSE: 0, CW: COMBINE_WORKGROUP });
    const fits = (keys) => bytes(keys) <= limit && Math.ceil((keys * Math.max(d, dv)) / 4 / WG) <= LD_MAX;
    const BK = tuning.keysPerTile ?? (dtype === 'f16' ? F16_TILE_KEYS : F32_TILE_KEYS).find(fits);
    if (BK === undefined || !fits(BK))
        return `the decode tiles for d = ${d} do not fit ${limit} bytes of workgroup memory`;
    const targetWorkgroups = tuning.targetWorkgroups ?? TARGET_WORKGROUPS;
    return { dtype, constants: { ...heads, R, BK, WG, LSE: lse ? 1 : 0, CW: COMBINE_WORKGROUP }, BK, targetWorkgroups, summary: `${R} rows per KV head, ${BK} keys per tile` };
}
/** Key ranges per (batch, KV head): enough workgroups to fill the GPU, each at least a few tiles. */
function decodeSplits(pairs, tiles, target) {
    return Math.max(1, Math.min(Math.ceil(target / pairs), Math.ceil(tiles / 4)));
}
export async function prepareDecodeKernel(gpu, problem, plan) {
    const { device } = gpu;
    const { Hkv, Lk, d } = problem.dims;
    const dv = valueHeadSize(problem.dims);
    const R = plan.constants.R;
    const kernel = forTensorType(ATTENTION_DECODE_KERNEL, plan.dtype);
    // The softcap, ALiBi and sinks: switches and the softcap's factors in the uniform; each query head's slope and sink
    // (base 2) in the first Hq entries of ML, which the host writes whenever it makes ML.
    const terms = headTerms(problem);
    const headUniforms = { ...scoreTermSwitches(problem), ...softcapUniforms(problem), headTerms: terms ? problem.dims.Hq : 0, ...valueStrides(problem) };
    const fields = checkUniforms('attention-decode', kernel, { ...commonUniforms(problem), Hkv, pairs: 1, splits: 1, batch0: 0, cached: 0, ...headUniforms });
    const bindings = kernelBindings(kernel.code);
    const layout = explicitLayout(gpu, bindings, 'attention-decode');
    const pipelines = await checked(gpu, `compiling attention-decode (${plan.summary}, d = ${d}, ${plan.dtype} tensors)`, () => computePipelines(gpu, kernel, ['main', 'combine'], { ...plan.constants }, layout));
    const owned = new OwnedBuffers(device);
    const runUniforms = new RunUniforms(device, owned, 'attention-decode', fields.length * 4);
    const noLse = owned.storage('attention-decode no lse');
    const noLengths = owned.storage('attention-decode no cache lengths');
    const cached = problem.cacheLengths ? 1 : 0;
    const tiles = Math.ceil(Lk / plan.BK);
    let scratch;
    return {
        plan,
        encode(encoder, buffers, batch0, batches, timestampWrites) {
            if (cached && !buffers.lengths)
                throw new RangeError('attention-decode: the problem has cache lengths; bind a lengths buffer');
            const pairs = batches * Hkv;
            const splits = decodeSplits(pairs, tiles, plan.targetWorkgroups);
            const rows = pairs * splits * R;
            if (!scratch || scratch.rows < rows) {
                const ML = owned.storage('attention-decode slopes, sinks and partial m, ℓ', undefined, (headUniforms.headTerms + rows) * 8);
                if (terms)
                    device.queue.writeBuffer(ML, 0, terms);
                scratch = { Opart: owned.storage('attention-decode partial O', undefined, rows * dv * 4), ML, rows };
            }
            const params = runUniforms.of(batch0, batches, () => packUniforms(fields, { ...commonUniforms(problem), Hkv, pairs, splits, batch0, cached, ...headUniforms }));
            const resources = { q: buffers.q, k: buffers.k, v: buffers.v, O: buffers.O, lse: buffers.lse ?? noLse, lengths: buffers.lengths ?? noLengths, params, Opart: scratch.Opart, ML: scratch.ML };
            const group = device.createBindGroup({
                label: 'attention-decode',
                layout: layout.getBindGroupLayout(0),
                entries: bindings.map(({ binding, name }) => ({ binding, resource: bindingResource(resources[name]) })),
            });
            const pass = encoder.beginComputePass({ label: 'attention-decode', ...(timestampWrites ? { timestampWrites } : {}) });
            pass.setBindGroup(0, group);
            pass.setPipeline(pipelines.main);
            pass.dispatchWorkgroups(...grid2d(gpu, pairs * splits));
            pass.setPipeline(pipelines.combine);
            pass.dispatchWorkgroups(...grid2d(gpu, Math.ceil((pairs * R * (dv / 4)) / COMBINE_WORKGROUP)));
            pass.end();
        },
        destroy() {
            owned.destroy();
        },
    };
}
//# sourceMappingURL=attention-decode.js.map