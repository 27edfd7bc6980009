/**
 * A KV cache that grows in place (append-cache.wgsl): the new rows of K and V copied into the caller's preallocated
 * cache at each batch's valid length, and the lengths advanced, on the GPU, in the caller's command encoder. The
 * attention prepared with `cacheLengths` and encoded after it in the same encoder reads the new lengths.
 */
import { checkDimsObject, checked, checkUniforms, computePipelines, describeValue, grid2d, kernelBindings, packUniforms, SdpaArgumentError, UnsupportedShapeError, validCacheLengths, } from '@fa/core';
import { explicitLayout, OwnedBuffers } from '../kernel-support.js';
import { checkCacheAppendOptions, checkGpu } from '../validate-options.js';
import code from './append-cache.wgsl';
export const APPEND_CACHE_KERNEL = { label: 'append-cache.wgsl', code };
const WG = 64;
/** The lengths after one append: each grows by Lnew; a one-line error when one is not an integer from 0 to Lk, or would pass Lk. */
export function lengthsAfter(lengths, dims) {
    checkAppendDims(dims);
    return validCacheLengths(lengths, dims.B, dims.Lk).map((n, b) => {
        if (n + dims.Lnew > dims.Lk)
            throw new SdpaArgumentError(`batch ${b} holds ${n} of ${dims.Lk} rows; appending ${dims.Lnew} would pass the end: preallocate a larger cache`);
        return n + dims.Lnew;
    });
}
/** Strides in u32 words of a [B, H, L, d] tensor in `layout`, rows of `rowWords` words. */
function wordStrides(layout, heads, rows, rowWords) {
    return layout === 'bhsd' ? [heads * rows * rowWords, rows * rowWords, rowWords] : [rows * heads * rowWords, rowWords, heads * rowWords];
}
const APPEND_DIMS = ['B', 'Hkv', 'Lk', 'Lnew', 'd'];
/** Each of the dimensions a positive integer; a one-line SdpaArgumentError otherwise. */
function checkAppendDims(dims) {
    checkDimsObject(dims, APPEND_DIMS);
    for (const name of APPEND_DIMS) {
        const value = dims[name];
        if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1)
            throw new SdpaArgumentError(`${name} is ${describeValue(value)}; give a positive integer`);
    }
}
export async function prepareCacheAppend(gpu, dims, options = {}) {
    checkGpu(gpu);
    checkAppendDims(dims);
    checkCacheAppendOptions(options);
    const { B, Hkv, Lk, Lnew, d } = dims;
    const layout = options.layout ?? 'bhsd';
    const dtype = options.dtype ?? 'f32';
    if (dtype === 'f16' && d % 2 !== 0)
        throw new UnsupportedShapeError(`f16 rows of d = ${d} are not whole u32 words; give an even head size`);
    if (Lnew > Lk)
        throw new SdpaArgumentError(`${Lnew} new rows do not fit a cache of ${Lk}; preallocate a larger cache`);
    const rowWords = dtype === 'f16' ? d / 2 : d;
    const bytes = { cache: B * Hkv * Lk * rowWords * 4, rows: B * Hkv * Lnew * rowWords * 4, lengths: B * 4 };
    const limit = Math.min(gpu.report.limits.maxStorageBufferBindingSize, gpu.report.limits.maxBufferSize);
    if (bytes.cache > limit)
        throw new UnsupportedShapeError(`a cache of ${bytes.cache} bytes is over this GPU's ${limit} per binding`);
    const { device } = gpu;
    const kernel = APPEND_CACHE_KERNEL;
    const [cacheBatch, cacheHead, cacheRow] = wordStrides(layout, Hkv, Lk, rowWords);
    const [newBatch, newHead, newRow] = wordStrides(layout, Hkv, Lnew, rowWords);
    const values = { rowWords, rows: Lnew, heads: Hkv, capacity: Lk, batches: B, cacheBatch, cacheHead, cacheRow, newBatch, newHead, newRow };
    const fields = checkUniforms('append-cache', kernel, values);
    const bindings = kernelBindings(kernel.code);
    const pipelineLayout = explicitLayout(gpu, bindings, 'append-cache');
    const pipelines = await checked(gpu, 'compiling append-cache', () => computePipelines(gpu, kernel, ['append', 'advance'], { WG }, pipelineLayout));
    const owned = new OwnedBuffers(device);
    const params = owned.uniform('append-cache params', fields.length * 4);
    device.queue.writeBuffer(params, 0, packUniforms(fields, values));
    const dispose = () => {
        owned.destroy();
    };
    return {
        encode(encoder, buffers) {
            const need = { k: bytes.cache, v: bytes.cache, kNew: bytes.rows, vNew: bytes.rows, cacheLengths: bytes.lengths };
            for (const [name, size] of Object.entries(need)) {
                if (buffers[name].size < size)
                    throw new RangeError(`append: buffer ${name} holds ${buffers[name].size} bytes; this cache needs ${size}`);
            }
            if (buffers.k === buffers.v)
                throw new RangeError('append: k and v are the same buffer; give each cache its own');
            const resources = { kCache: buffers.k, vCache: buffers.v, kNew: buffers.kNew, vNew: buffers.vNew, lengths: buffers.cacheLengths, params };
            const group = device.createBindGroup({
                label: 'append-cache',
                layout: pipelineLayout.getBindGroupLayout(0),
                entries: bindings.map(({ binding, name }) => ({ binding, resource: { buffer: resources[name] } })),
            });
            const pass = encoder.beginComputePass({ label: 'append-cache' });
            pass.setBindGroup(0, group);
            pass.setPipeline(pipelines.append);
            pass.dispatchWorkgroups(...grid2d(gpu, Math.ceil((B * Hkv * Lnew * rowWords) / WG)));
            pass.setPipeline(pipelines.advance);
            pass.dispatchWorkgroups(Math.ceil(B / WG));
            pass.end();
        },
        dispose,
        destroy() {
            dispose();
        },
    };
}
//# sourceMappingURL=append-cache.js.map