/**
 * Score and mask functions in WGSL (scoreMod, maskMod, modBuffers): refused in one line where they are wrong (most of
 * that without a GPU), declined by the kernels that cannot run them, and a WGSL error reported at the caller's line
 * (checked before anything compiles). Their results against the float64 oracle are conformance.ts's case (a document
 * mask over packed sequences with a relative-position bias table), run by attention.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { sdpaProblem } from '@fa/core';
import { tensors } from '../src/conformance.js';
import { attention, planAttention, prepareAttention, SdpaArgumentError } from '../src/index.js';
import { deviceForGroup } from './device-for-group.js';
const SCORE = 'fn score_mod(s: f32, b: u32, h: u32, q: u32, k: u32) -> f32 {\n  return s + bias[clamp(i32(q) - i32(k) + 8, 0, 16)];\n}';
const MASK = 'fn mask_mod(b: u32, h: u32, q: u32, k: u32) -> bool {\n  return doc[q] == doc[k] && k <= q;\n}';
/** Two packed documents of 13 and 24 tokens, and a bias per relative position −8 … 8. */
const DIMS = { B: 1, Hq: 2, Hkv: 1, Lq: 37, Lk: 37, d: 16 };
const doc = Int32Array.from({ length: 37 }, (_, t) => (t < 13 ? 0 : 1));
const bias = Float32Array.from({ length: 17 }, (_, r) => 0.1 * (r - 8));
function refused(options) {
    try {
        sdpaProblem(DIMS, options);
    }
    catch (error) {
        expect(error).toBeInstanceOf(SdpaArgumentError);
        expect(error.message).not.toContain('\n');
        return error.message;
    }
    throw new Error('the options were accepted');
}
describe('score and mask functions, checked without a GPU', () => {
    it('refuses wrong sources and buffers in one line', () => {
        expect(refused({ scoreMod: '' })).toMatch(/^scoreMod is ""; give WGSL source that defines fn score_mod\(s: f32, b: u32, h: u32, q: u32, k: u32\) -> f32$/);
        expect(refused({ maskMod: 'fn other() {}' })).toMatch(/^maskMod defines no fn mask_mod; give WGSL source/);
        expect(refused({ modBuffers: { doc } })).toMatch(/^modBuffers is given without scoreMod or maskMod/);
        expect(refused({ maskMod: MASK, modBuffers: { '2doc': doc } })).toMatch(/^modBuffers has a buffer named "2doc", which is not a WGSL identifier/);
        expect(refused({ maskMod: MASK, modBuffers: { doc: [1, 2] } })).toMatch(/^modBuffers\.doc is \[1, 2\]; give an Int32Array or Float32Array, or \{ buffer: GPUBuffer, type: 'i32' \| 'f32' \}$/);
        expect(refused({ maskMod: MASK, modBuffers: { doc: new Int32Array(0) } })).toMatch(/^modBuffers\.doc is empty/);
        expect(refused({ maskMod: MASK, modBuffers: { doc: { buffer: { size: 6 }, type: 'i32' } } })).toMatch(/^modBuffers\.doc\.buffer holds 6 bytes/);
        expect(refused({ maskMod: MASK, modBuffers: { doc: { buffer: { size: 8 }, type: 'u32' } } })).toMatch(/^modBuffers\.doc\.type is "u32"; give 'i32' or 'f32'/);
    });
    it('computes nothing on the CPU without a GPU: one line', async () => {
        const { q, k, v } = tensors(DIMS, 3);
        await expect(attention({ data: q, shape: [1, 2, 37, 16] }, { data: k, shape: [1, 1, 37, 16] }, { data: v, shape: [1, 1, 37, 16] }, { maskMod: MASK, modBuffers: { doc } })).rejects.toThrow(/^score and mask functions are WGSL, which the CPU cannot run: give a GPU/);
    });
});
describe('score and mask functions on the GPU (one tiny problem)', () => {
    const device = deviceForGroup();
    // The functions against the float64 oracle: conformance.ts's case 'd = 16, score and mask functions' (attention.test.ts).
    it('is declined by the named kernels that cannot run it, in one line (nothing compiled)', (context) => {
        const gpu = device.gpu();
        if (!gpu) {
            context.skip(`no GPU: ${device.missing()}`);
            return;
        }
        const options = { scoreMod: SCORE, maskMod: MASK, modBuffers: { doc, bias } };
        expect(planAttention(gpu, { ...DIMS, Lq: 1 }, { ...options, kernel: 'attention-decode' })).toMatch(/^score and mask functions \(scoreMod, maskMod\) are the prefill kernel's \(attention-fp32\)$/);
        const matrix = planAttention(gpu, DIMS, { ...options, kernel: 'attention-matrix' });
        expect(typeof matrix === 'string' ? matrix : 'planned').not.toContain('\n');
        expect(planAttention(gpu, { ...DIMS, Lq: 1 }, options)).toMatchObject({ kernel: 'attention-fp32' });
    });
    it('reports a WGSL error at the caller\'s line, a wrong signature and a buffer named as the kernel\'s, in one line', { timeout: 600_000 }, async (context) => {
        const gpu = device.gpu();
        if (!gpu) {
            context.skip(`no GPU: ${device.missing()}`);
            return;
        }
        const g = gpu;
        const refusal = async (options) => {
            try {
                (await prepareAttention(g, DIMS, options)).dispose();
            }
            catch (error) {
                expect(error).toBeInstanceOf(SdpaArgumentError);
                expect(error.message).not.toContain('\n');
                return error.message;
            }
            throw new Error('the functions were accepted');
        };
        expect(await refusal({ scoreMod: 'fn score_mod(s: f32, b: u32, h: u32, q: u32, k: u32) -> f32 {\n  return s + nope;\n}' })).toMatch(/^scoreMod:2:14: .*nope/);
        expect(await refusal({ maskMod: 'fn mask_mod(b: u32, h: u32, q: u32) -> bool { return true; }' })).toMatch(/^maskMod: its mask_mod is not fn mask_mod\(b: u32, h: u32, q: u32, k: u32\) -> bool/);
        expect(await refusal({ maskMod: MASK, modBuffers: { doc, LOWEST: bias } })).toMatch(/^modBuffers\.LOWEST: the kernel declares LOWEST itself; give the buffer another name$/);
    });
});
//# sourceMappingURL=mods.test.js.map