/**
 * A mask function's tile lists: written once when the kernel is prepared where every mod buffer is a typed array (the
 * values cannot change), and before every dispatch where one is the caller's GPU buffer (they can). Both checked
 * against the float64 oracle of the same mask given as a boolean mask, run after run.
 */
import { describe, expect, it } from 'vitest';
import { sdpaProblem } from '@fa/core';
import { sdpaOracle } from '@fa/reference';
import { prepareAttention } from '../src/index.js';
import { maxAbs, tensors } from '../src/conformance.js';
import { deviceForGroup } from './device-for-group.js';
const L = 256;
const DIMS = { B: 2, Hq: 2, Hkv: 1, Lq: L, Lk: L, d: 16 };
const DOCUMENTS = 'fn mask_mod(b: u32, h: u32, q: u32, k: u32) -> bool { return doc[q] == doc[k] && k <= q; }';
/** Each token's document: `count` documents of equal length. */
const documents = (count) => Int32Array.from({ length: L }, (_, i) => Math.floor((i * count) / L));
/** The same mask as a boolean [Lq, Lk] mask, for the oracle. */
function visible(doc) {
    const flags = new Uint8Array(L * L);
    for (let i = 0; i < L; i++)
        for (let j = 0; j <= i; j++)
            flags[i * L + j] = doc[i] === doc[j] ? 1 : 0;
    return flags;
}
describe('the tile lists of a mask function', () => {
    const group = deviceForGroup();
    it('follow the caller\'s GPU buffer from run to run, and stay right run after run for a typed array', { timeout: 300_000 }, async (context) => {
        const gpu = group.gpu();
        if (!gpu) {
            context.skip(`no GPU: ${group.missing()}`);
            return;
        }
        const { device } = gpu;
        const doc = device.createBuffer({ size: 4 * L, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
        const onGpu = await prepareAttention(gpu, DIMS, { maskMod: DOCUMENTS, modBuffers: { doc: { buffer: doc, type: 'i32' } } });
        const typed = await prepareAttention(gpu, DIMS, { maskMod: DOCUMENTS, modBuffers: { doc: documents(3) } });
        try {
            const { q, k, v } = tensors(DIMS, 5);
            const error = async (prepared, count) => {
                const { out } = await prepared.run(q, k, v);
                const exact = sdpaOracle(sdpaProblem(DIMS, { mask: { kind: 'bool', data: visible(documents(count)), shape: [L, L] } }), q, k, v);
                return maxAbs(out, exact.out);
            };
            for (const count of [3, 1, 4]) {
                device.queue.writeBuffer(doc, 0, documents(count));
                expect(await error(onGpu, count), `${count} documents in the caller's buffer`).toBeLessThan(1e-5);
                expect(await error(typed, 3), 'the typed array\'s 3 documents, run again').toBeLessThan(1e-5);
            }
        }
        finally {
            onGpu.dispose();
            typed.dispose();
            doc.destroy();
        }
    });
});
//# sourceMappingURL=mod-lists.test.js.map