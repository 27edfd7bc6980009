/**
 * The float32 attention kernel (attention-fp32.wgsl, lean-loop's loop with heads, groups, bands and masks): its plan for
 * a problem on an adapter. The host that compiles and runs it is tiled-host.ts, shared with attention-matrix.
 */
import { kernelBindings, kernelWorkgroupBytes, ROW_SPLIT_LAYOUT, rowGroupTilesFor, rowSplitTiles, valueHeadSize } from '@fa/core';
import { COMBINE_WORKGROUP, forTensorType, hasScoreTerms, headSizesReason, scoreTermSwitches } from '../kernel-support.js';
import { modListWords } from '../mods/mod-host.js';
import { modKernel } from '../mods/mod-source.js';
import { tiledKernel } from '../tiled-host.js';
import code from './attention-fp32.wgsl';
export const ATTENTION_FP32_KERNEL = tiledKernel('attention-fp32.wgsl', code);
/** The kernel for tensors of `dtype`. */
export function attentionKernel(dtype) {
    return forTensorType(ATTENTION_FP32_KERNEL, dtype);
}
/** lean-loop's rows and register bounds: a step scores up to 16 keys, so Bc is a multiple of 16. */
const LAYOUT = { ...ROW_SPLIT_LAYOUT, keysPerStep: 16 };
/** four-rows' (rung 21): four rows per group, at most 4 vec4 columns of each per invocation, 8 keys per step. */
const FOUR_ROWS_LAYOUT = { rows: 4, C_MAX: 4, LD_MAX: 8, keysPerStep: 8 };
/** four-rows' tiles for every H: 16-key tiles in workgroups of 128, the next tile prefetched (docs/rungs/21-four-rows.md). */
const fourRowsTiles = (H) => ({ H, BC: 16, WG: 128, prefetch: true });
/**
 * 8-key tiles, for head sizes whose 16-key tiles pass the GPU's workgroup memory: at d = 256 those take 32 KiB for K_j
 * and V_j, just past the 32 KiB of a GPU at WebGPU's default limit (with the kernel's few other bytes). H > 1 there,
 * where a step scores 8 keys.
 */
const HALF_TILE_LAYOUT = { ...ROW_SPLIT_LAYOUT, keysPerStep: 8 };
const halfTiles = (H) => ({ ...rowSplitTiles(H), BC: H === 1 ? 16 : 8 });
/**
 * Head sizes where four rows per group run: d = 128, where they halve the reads of workgroup memory per multiply-add
 * (H = 8). At d ≤ 64 the extra shuffle level costs more than the halved reads save, and at d = 80 or 100 the padded
 * rows of H·C vec4s add 20-28% to the work (rung 21's measurements; the product's: docs/sdpa.md).
 */
const FOUR_ROWS_HEAD_SIZES = [128];
/**
 * Whether a problem has no band, element or block mask, cache lengths, softcap, ALiBi slopes, sinks or score and mask
 * functions, and K and V
 * rows D/4 vec4s apart ([B, H, L, d], or one KV head): the kernel is then compiled with GENERAL = 0, their tests fold
 * away and K/V tiles are read as one run. One constant for all of it, so that a head size compiles at most two
 * variants. Measured on the H100 (hw4's shapes as one head per batch, ms, lean-loop beside it): docs/sdpa.md.
 */
export function plainProblem(problem) {
    const scoreTerms = hasScoreTerms(problem) || problem.mods !== undefined;
    const denseRows = problem.layout === 'bhsd' || problem.dims.Hkv === 1; // K/V tiles then read as one run
    return denseRows && !scoreTerms && !problem.mask && !problem.blockMask && !problem.cacheLengths && !Number.isFinite(problem.left) && !Number.isFinite(problem.right);
}
/** The kernel's plan for `problem` on this adapter, or why it cannot run it; `tuning` sets sizes instead of the plan's own, for experiments. */
export function fp32Plan(problem, gpu, lse, dtype = 'f32', tuning) {
    const { d } = problem.dims;
    const dv = valueHeadSize(problem.dims);
    if (!gpu.device.features.has('subgroups'))
        return 'the GPU lacks feature subgroups';
    if (problem.blockMask && problem.cacheLengths)
        return 'a block mask with cache lengths (the tile lists are built for Lk keys)';
    const head = headSizesReason(d, dv);
    if (head !== undefined)
        return head;
    const chosen = tilesFor(problem, gpu, tuning?.fp32Invocations);
    if (typeof chosen === 'string')
        return chosen;
    const { tiles, ROWS, workgroupBytes } = chosen;
    const { H, BC, WG } = tiles;
    const blocks = problem.blockMask;
    const BR = (WG / H) * ROWS;
    const blockTiles = blocks !== undefined && blocks.rows % BR === 0 && blocks.keys % BC === 0;
    const mods = problem.mods && modPlan(problem, gpu, BR, BC);
    if (typeof mods === 'string')
        return mods;
    return {
        id: 'attention-fp32',
        kernel: mods ? modKernel(attentionKernel(dtype), mods.mods) : attentionKernel(dtype),
        dtype,
        constants: {
            D: d,
            ...(dv !== d ? { DV: dv } : {}), // only where it differs, so that dv = d compiles as before
            H,
            BC,
            KEYS: H === 1 ? 16 : 8,
            WG,
            PREFETCH: tiles.prefetch ? 1 : 0,
            CW: COMBINE_WORKGROUP,
            ROWS,
            GENERAL: plainProblem(problem) ? 0 : 1,
        },
        // A mask function's tile lists take the block mask's place (blocks = 1); the caller's block flags are then tested
        // per score only where its blocks are not whole tiles.
        switches: {
            mask: problem.mask ? 1 : 0,
            blocks: blocks || mods?.lists === true ? 1 : 0,
            blockTiles: blockTiles || !blocks ? 1 : 0,
            writeLse: lse ? 1 : 0,
            cached: problem.cacheLengths ? 1 : 0,
            ...scoreTermSwitches(problem),
        },
        BR,
        BC,
        workgroupBytes,
        summary: `H = ${H}, ${ROWS} rows per group, Bc = ${BC}, ${WG} invocations${mods ? ', score and mask functions' : ''}`,
        ...(mods ? { mods } : {}),
    };
}
/**
 * The row-group tiles for the problem's head sizes: H invocations per row group for the wider of d and dv (each holds
 * ⌈d/4H⌉ vec4s of a Q row and ⌈dv/4H⌉ of an O row), four rows per group at d = dv = 128, 16-key tiles, or 8-key tiles
 * where those pass the GPU's workgroup memory (d = 256 within 32 KiB); the bytes as the kernel declares them.
 */
function tilesFor(problem, gpu, invocations) {
    if (invocations !== undefined && ![32, 64, 128, 256].includes(invocations))
        return `tuning.fp32Invocations is ${invocations}; give 32, 64, 128 or 256`;
    const { d } = problem.dims;
    const dv = valueHeadSize(problem.dims);
    const shape = { B: 1, N: problem.dims.Lq, d: Math.max(d, dv) };
    const limit = gpu.report.limits.maxComputeWorkgroupStorageSize;
    const bytes = (tiles, ROWS) => kernelWorkgroupBytes(ATTENTION_FP32_KERNEL.code, { D: d, DV: dv, H: tiles.H, BC: tiles.BC, WG: tiles.WG, ROWS, KEYS: 8, PREFETCH: 1, CW: COMBINE_WORKGROUP, GENERAL: 1 });
    const candidates = [
        () => (FOUR_ROWS_HEAD_SIZES.includes(d) && dv === d ? rowGroupTilesFor(shape, gpu, FOUR_ROWS_LAYOUT, fourRowsTiles) : undefined),
        () => rowGroupTilesFor(shape, gpu, LAYOUT, rowSplitTiles),
        () => rowGroupTilesFor(shape, gpu, HALF_TILE_LAYOUT, halfTiles),
    ];
    let reason = '';
    for (const [index, candidate] of candidates.entries()) {
        const found = candidate();
        if (found === undefined)
            continue;
        const tiles = typeof found === 'string' || invocations === undefined ? found : { ...found, WG: Math.max(invocations, found.H) };
        if (typeof tiles === 'string') {
            if (index > 0)
                reason ||= tiles; // four rows declining leaves the reason to the two-row tiles
            continue;
        }
        const ROWS = index === 0 ? 4 : 2;
        const workgroupBytes = bytes(tiles, ROWS);
        if (workgroupBytes <= limit)
            return { tiles, ROWS, workgroupBytes };
        reason ||= `tiles of ${tiles.BC} keys need ${workgroupBytes} bytes of workgroup memory, over this GPU's ${limit}`;
    }
    return reason;
}
/** Storage buffers per stage the kernel binds besides the mod buffers (its group 0's storage bindings). */
const KERNEL_STORAGE_BUFFERS = kernelBindings(ATTENTION_FP32_KERNEL.code).filter(({ space }) => space.startsWith('storage')).length;
/**
 * The plan of a problem's score and mask functions, or why this GPU cannot bind their buffers: tile lists from the
 * pre-pass for a mask function, unless cache lengths move the band per batch or the lists would pass one binding
 * (then every tile tests each score).
 */
function modPlan(problem, gpu, BR, BC) {
    const mods = problem.mods;
    const most = gpu.device.limits.maxStorageBuffersPerShaderStage;
    if (KERNEL_STORAGE_BUFFERS + mods.buffers.length > most)
        return `${mods.buffers.length} mod buffers and the kernel's ${KERNEL_STORAGE_BUFFERS} pass this GPU's ${most} storage buffers per stage`;
    const listWords = modListWords(problem, BR, BC);
    const bytes = Math.min(gpu.report.limits.maxStorageBufferBindingSize, gpu.report.limits.maxBufferSize);
    const lists = mods.maskMod !== undefined && !problem.cacheLengths && 4 * listWords <= bytes;
    return { mods, lists, listWords: lists ? listWords : 0 };
}
//# sourceMappingURL=attention-fp32.js.map