/**
 * The host side of score and mask functions: their buffers bound in group 1 (the caller's typed arrays uploaded once,
 * or the caller's GPU buffers), the pipeline layout of both groups, the pre-pass that lists the visible key tiles of a
 * mask function on the GPU before each dispatch of attention-fp32 (`prepareMods`, for tiled-host.ts), and the functions
 * evaluated for the CPU computations (`evaluateMods`).
 */
import { checked, computePipelines, grid2d } from '@fa/core';
import { heldScore, sdpaScores } from '@fa/reference';
import { OwnedBuffers } from '../kernel-support.js';
import { MOD_BUFFER_FIRST_BINDING, modEvalKernel } from './mod-source.js';
/** The tile lists' size for a mask function's pre-pass: 2 + ⌈Lk/BC⌉ u32s per (batch, head, query tile). */
export function modListWords(problem, BR, BC) {
    const { B, Hq, Lq, Lk } = problem.dims;
    return B * Hq * Math.ceil(Lq / BR) * (2 + Math.ceil(Lk / BC));
}
/** Group 1's layout (ModParams, then one read-only buffer per mod buffer) and the pipeline layout of groups 0 and 1, one per device and group 0. */
const layouts = new WeakMap();
function modLayouts(device, group0, buffers) {
    let byCount = layouts.get(group0);
    if (!byCount) {
        byCount = new Map();
        layouts.set(group0, byCount);
    }
    let found = byCount.get(buffers);
    if (!found) {
        const entries = [
            { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform' } },
            ...Array.from({ length: buffers }, (_, n) => ({ binding: MOD_BUFFER_FIRST_BINDING + n, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } })),
        ];
        const group1 = device.createBindGroupLayout({ label: 'score and mask functions\' buffers', entries });
        found = { group1, pipeline: device.createPipelineLayout({ label: 'attention with score and mask functions', bindGroupLayouts: [group0, group1] }) };
        byCount.set(buffers, found);
    }
    return found;
}
/** Group 1's bind group: ModParams (`params`, 4 u32s) and the buffers, typed arrays uploaded into `owned`. */
function modBindGroup(device, layout, mods, params, owned) {
    const uniform = owned.uniform('score and mask functions\' params', 16);
    device.queue.writeBuffer(uniform, 0, params.buffer, params.byteOffset, params.byteLength);
    const entries = [{ binding: 0, resource: { buffer: uniform } }];
    mods.buffers.forEach(({ name, data, buffer }, n) => {
        const bound = buffer ?? owned.storage(`mod buffer ${name}`, data);
        entries.push({ binding: MOD_BUFFER_FIRST_BINDING + n, resource: { buffer: bound } });
    });
    return device.createBindGroup({ label: 'score and mask functions\' buffers', layout, entries });
}
/** Group 1 and the pre-pass of a tiled plan's functions (`group0`: the kernel's own layout). */
export function prepareMods(gpu, problem, plan, group0, owned) {
    const { device } = gpu;
    const { mods, lists, listWords } = plan.mods;
    const { Hq, Lq, Lk } = problem.dims;
    const Tr = Math.ceil(Lq / plan.BR);
    const { group1, pipeline } = modLayouts(device, group0, mods.buffers.length);
    const listBase = 2 * problem.dims.B * Hq * Tr;
    const params = Uint32Array.of(listBase, problem.blockMask ? 1 : 0, Math.ceil(Lk / plan.BC), lists ? 1 : 0);
    const group = modBindGroup(device, group1, mods, params, owned);
    return {
        layout: pipeline,
        entryPoints: lists ? ['modTiles'] : [],
        ...(lists ? { tileLists: owned.storage('attention-fp32 tile lists of the mask function', undefined, 4 * listWords) } : {}),
        listsFixed: lists && mods.buffers.every((entry) => entry.buffer === undefined),
        encode(pass, modTiles, batches, prePass = true) {
            pass.setBindGroup(1, group);
            if (!lists || !modTiles || !prePass)
                return;
            pass.setPipeline(modTiles);
            pass.dispatchWorkgroups(...grid2d(gpu, batches * Hq * Tr));
        },
    };
}
/** The most scores `evaluateMods` takes: one binding of float32s on a small GPU (128 MiB). */
const MOST_EVALUATED = 2 ** 25;
/**
 * The functions' values over [B, Hq, Lq, Lk] for the CPU computations (@fa/reference's ModValues): score_mod of each
 * float64 score s = scale·q·k rounded to float32 (held within ±2^64 as the kernel holds it), and mask_mod, computed on
 * `gpu`. One line refuses a problem of more than 2^25 scores.
 */
export async function evaluateMods(gpu, problem, q, k) {
    const { mods } = problem;
    if (!mods)
        return {};
    const { B, Hq, Lq, Lk } = problem.dims;
    const count = B * Hq * Lq * Lk;
    if (count > MOST_EVALUATED)
        throw new RangeError(`score and mask functions are evaluated for the CPU computation on at most ${MOST_EVALUATED} scores; this problem has ${count}`);
    const { device } = gpu;
    const owned = new OwnedBuffers(device);
    try {
        const group0 = device.createBindGroupLayout({
            label: 'score and mask functions evaluated',
            entries: [
                { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform' } },
                { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } },
                { binding: 2, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } },
            ],
        });
        const { group1, pipeline: layout } = modLayouts(device, group0, mods.buffers.length);
        const kernel = modEvalKernel(mods);
        const { modEval } = await checked(gpu, 'compiling the score and mask functions\' evaluation', () => computePipelines(gpu, kernel, ['modEval'], {}, layout));
        const sizes = owned.uniform('evaluated sizes', 16);
        device.queue.writeBuffer(sizes, 0, Uint32Array.of(Hq, Lq, Lk, count));
        const scores = owned.storage('scores to evaluate', Float32Array.from(sdpaScores(problem, q, k)));
        const results = device.createBuffer({ label: 'evaluated', size: 8 * count, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
        const read = device.createBuffer({ label: 'evaluated, read back', size: 8 * count, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
        const resources = [sizes, scores, results];
        const group = device.createBindGroup({ layout: group0, entries: resources.map((buffer, binding) => ({ binding, resource: { buffer: buffer } })) });
        const extra = modBindGroup(device, group1, mods, new Uint32Array(4), owned);
        await checked(gpu, 'evaluating the score and mask functions', () => {
            const encoder = device.createCommandEncoder();
            const pass = encoder.beginComputePass();
            pass.setPipeline(modEval);
            pass.setBindGroup(0, group);
            pass.setBindGroup(1, extra);
            pass.dispatchWorkgroups(...grid2d(gpu, Math.ceil(count / 64)));
            pass.end();
            encoder.copyBufferToBuffer(results, 0, read, 0, 8 * count);
            device.queue.submit([encoder.finish()]);
        });
        await read.mapAsync(GPUMapMode.READ);
        const pairs = new Float32Array(read.getMappedRange().slice(0));
        read.unmap();
        results.destroy();
        read.destroy();
        const values = {};
        if (mods.scoreMod !== undefined)
            values.scores = Float32Array.from({ length: count }, (_, e) => heldScore(pairs[2 * e]));
        if (mods.maskMod !== undefined)
            values.visible = Uint8Array.from({ length: count }, (_, e) => (pairs[2 * e + 1] === 0 ? 0 : 1));
        return values;
    }
    finally {
        owned.destroy();
    }
}
//# sourceMappingURL=mod-host.js.map