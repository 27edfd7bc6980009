/**
 * The hw4 format's problem through the product: a file of B batches, each one head of N query rows, N keys and head
 * size d, becomes SdpaDims { B, Hq: 1, Hkv: 1, Lq: N, Lk: N, d } with the default scale 1/√d, run by attention-fp32 as a
 * rung, so that hw4-cli's streaming, its memory bound and its proven error bound serve the library's kernel unchanged.
 *
 * The file holds each batch's Q, K and V one after the other, the layout the rungs read. The kernel reads them where
 * they lie: Q, K and V are bound to the one input buffer, with a batch stride of 3·N·d and K and V starting N·d and
 * 2·N·d in (`TensorPlacement`), and O is written N·d per batch. Nothing is copied or rearranged on the GPU.
 */
import { blockedModel, keySplits, lazyRescaleLag, prepareAttentionRunner, sdpaProblem, UnsupportedShapeError, } from '@fa/core';
import { ATTENTION_FP32_KERNEL, fp32Plan } from './fp32/attention-fp32.js';
import { prepareTiledKernel } from './tiled-host.js';
/** The library's problem for an hw4 shape: one head per batch, Lq = Lk = N, scale 1/√d. */
export function hw4Problem({ B, N, d }) {
    return sdpaProblem({ B, Hq: 1, Hkv: 1, Lq: N, Lk: N, d });
}
/** Where hw4's Q, K, V and O lie, in vec4s: per batch Q, K, V of N·d floats each in one buffer; O, N·d per batch. */
export function hw4Placement({ N, d }) {
    const matrix = (N * d) / 4;
    return {
        qBatch: 3 * matrix,
        qHead: matrix,
        qRow: d / 4,
        kvBatch: 3 * matrix,
        kvHead: matrix,
        kvRow: d / 4,
        kStart: matrix,
        vStart: 2 * matrix,
        oBatch: matrix,
        oHead: matrix,
        oRow: d / 4,
    };
}
/** attention-fp32's plan for an hw4 shape here (fp32Plan checks the head size and the workgroup memory), or why it cannot run it. */
function planFor(shape, env) {
    if (!env.gpu)
        return env.gpuUnavailableReason ?? 'needs a GPU';
    const plan = fp32Plan(hw4Problem(shape), env.gpu, false, 'f32');
    return typeof plan === 'string' ? plan : { gpu: env.gpu, plan };
}
/**
 * How attention-fp32 rounds on an hw4 shape: lean-loop's loop (rung 20), whose model it keeps (@fa/optimized's
 * leanLoopRounding), with two rows per group or four: each step's KEYS products P̃·V summed apart, ℓ gaining at most
 * two sums per 16 keys, the lazy rescale's lag (TAU), and at most as many key ranges merged as the fewest row blocks a
 * run can have (one batch) give.
 */
function roundingOf(shape, plan) {
    const tiles = Math.ceil(shape.N / plan.BC);
    const mostRanges = Math.min(tiles, keySplits(Math.ceil(shape.N / plan.BR), tiles));
    return blockedModel(shape.d, plan.constants.KEYS ?? 16, Math.ceil(shape.N / 8), mostRanges, lazyRescaleLag(ATTENTION_FP32_KERNEL));
}
/** The kernel on hw4's buffers: one dispatch (and `combine` where keys are split) per run of batches, read in place. */
async function hw4Kernel(gpu, shape, plan) {
    const tiled = await prepareTiledKernel(gpu, hw4Problem(shape), plan, undefined, hw4Placement(shape));
    return {
        scratchBytesPerBatch: {},
        bind: ({ qkv, O }) => ({
            encode(encoder, batches, timer) {
                tiled.encode(encoder, { q: qkv, k: qkv, v: qkv, O }, 0, batches, timer.writes(true, true));
            },
            destroy() {
                tiled.destroy();
            },
        }),
    };
}
/** The plan for a shape here, or the reason, thrown. */
function planned(env, shape) {
    const found = planFor(shape, env);
    if (typeof found === 'string')
        throw new UnsupportedShapeError(`attention-fp32: ${found}`);
    return found;
}
/**
 * The product's float32 kernel as hw4-cli runs it (`--impl attention-fp32`, and the automatic choice): not a rung of the
 * ladder but the kernel the lessons led to, promoted from rung 20 lean-loop (docs/sdpa.md).
 */
export const hw4AttentionFp32 = {
    id: 'attention-fp32',
    kind: 'gpu',
    title: "GPU, the product: @fa/sdpa's float32 kernel (lean-loop's loop with heads, bands and masks), one head per batch",
    delta: "The library's attention-fp32, promoted from rung 20 lean-loop, run on hw4's layout in place: the kernel models call, " +
        'so that the default run and the library share one kernel line.',
    parent: 'lean-loop',
    product: true,
    requires: ['subgroups'],
    kernels: [ATTENTION_FP32_KERNEL],
    supports: (shape, env) => {
        const found = planFor(shape, env);
        return typeof found === 'string' ? found : true;
    },
    rounding: (shape, env) => {
        const found = planFor(shape, env);
        return typeof found === 'string' ? undefined : roundingOf(shape, found.plan);
    },
    prepare: async (env, shape, options) => {
        const { gpu, plan } = planned(env, shape);
        return prepareAttentionRunner(gpu, shape, 'attention-fp32', await hw4Kernel(gpu, shape, plan), options);
    },
    prepareKernel: (env, shape) => {
        const { gpu, plan } = planned(env, shape);
        return hw4Kernel(gpu, shape, plan);
    },
};
//# sourceMappingURL=hw4-adapter.js.map