#!/usr/bin/env node
// Times the fp32 microtile experiment (scripts/microtiles-experiment.wgsl: S and P̃ V as 8 × 8 register blocks, every
// operand in workgroup memory) and variants of it, one per process, on random ±3 data, and checks the output against a
// float64 computation on sampled rows. A knock-out (✗) removes one part of the loop and gives wrong results: it only
// shows what that part costs. Results: docs/workgroup-reads-bench.md.
// Usage: npm run bundle && cp scripts/microtiles-variants.mjs bundle/hw4-cli/ &&
//        node bundle/hw4-cli/microtiles-variants.mjs VARIANT [B,N,d]    (default shape 100,2048,64; d = 32 or 64)
// Prints: B×N×d, the variant, the best of 3 timed runs after a warm-up (both dispatches), TFLOP/s (4·B·N²·d flops) and
// the max abs error on 18 rows of the first and last batch.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const webgpu = require('webgpu');
const { GPUBufferUsage } = webgpu.globals;
const { deviceWithAdapterLimits, uploadRandomInput, timePasses, maxErrorOnSampledRows } = await import(new URL('../../scripts/variant-harness.mjs', import.meta.url));

const kernel = () => readFileSync(new URL('../../scripts/microtiles-experiment.wgsl', import.meta.url), 'utf8');
const replace = (code, from, to) => {
  if (!code.includes(from)) throw new Error(`the kernel no longer contains: ${from}`);
  return code.split(from).join(to);
};
const VARIANTS = {
  kernel,
  // ✗ The next tiles are never written to workgroup memory: tile 0 serves every step.
  'no-stage': () => replace(kernel(), 'let more = j + 1u < Tc;', 'let more = false;'),
  // ✗ P̃ᵀ and α are not written (P̃ V_j reads what is there).
  'no-P-store': () =>
    replace(replace(replace(kernel(), 'Pt[pa0] = ta[0];', '// '), 'Pt[pb0] = tb[0];', '// '), 'if (cg == 0u) { rowScale[rowVec] = alpha; }', ''),
  // ✗ No S products.
  'no-S': () => replace(kernel(), 'y < DH;', 'y < 0u;'),
  // ✗ No P̃V products.
  'no-PV': () => replace(kernel(), 'c < BC;', 'c < 0u;'),
  // ✗ Neither product.
  'no-products': () => replace(replace(kernel(), 'y < DH;', 'y < 0u;'), 'c < BC;', 'c < 0u;'),
  // Kᵀ rows of 36 floats instead of 48: the two halves' reads of Kᵀ share banks.
  'ks9': kernel,
};
/** Variants that change the layout: query rows per workgroup BR and the row stride of Kᵀ in vec4s KS4. */
const VARIANT_LAYOUT = { ks9: { KS4: 9 } };
/** The layouts to try, best first, as far as the adapter's workgroup memory allows (as the kernel's header says). */
const LAYOUTS = [{ BR: 64, KS4: 12 }, { BR: 64, KS4: 9 }, { BR: 32, KS4: 12 }, { BR: 32, KS4: 9 }];
const workgroupBytes = ({ BR, KS4 }) => 4 * (d * (BR + 4) + d * 4 * KS4 + 32 * d + 32 * (BR + 4) + BR);
const [name = 'kernel', shapeArg = '100,2048,64'] = process.argv.slice(2);
const [B, N, d] = shapeArg.split(',').map(Number);
if (!(name in VARIANTS)) {
  process.stderr.write(`usage: microtiles-variants.mjs VARIANT [B,N,d]; variants: ${Object.keys(VARIANTS).join(', ')}\n`);
  process.exit(2);
}
if (![B, N, d].every((x) => Number.isInteger(x) && x > 0) || (d !== 32 && d !== 64)) {
  process.stderr.write(`microtiles-variants: shape ${shapeArg}: B,N,d with d = 32 or 64\n`);
  process.exit(2);
}

const instance = webgpu.create(['disable-dawn-features=timestamp_quantization']);
const adapter = await instance.requestAdapter({ powerPreference: 'high-performance' });
const FEATURES = ['subgroups', 'timestamp-query'];
const { limits } = adapter;
const device = await deviceWithAdapterLimits(adapter, FEATURES);

const fitting = LAYOUTS.filter((l) => workgroupBytes(l) <= limits.maxComputeWorkgroupStorageSize);
if (fitting.length === 0) {
  process.stderr.write(`microtiles-variants: no layout fits this GPU's ${limits.maxComputeWorkgroupStorageSize} bytes of workgroup memory\n`);
  process.exit(2);
}
const { BR, KS4 } = { ...fitting[0], ...VARIANT_LAYOUT[name] };
const NP = Math.ceil(N / 32) * 32;
const { qkv, at } = uploadRandomInput(device, webgpu.globals, B, N, d);
const O = device.createBuffer({ size: B * N * d * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
const KT = device.createBuffer({ size: B * d * NP * 4, usage: GPUBufferUsage.STORAGE });
const params = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
const packed = new ArrayBuffer(16);
new Uint32Array(packed, 0, 3).set([N, NP, B]);
new Float32Array(packed, 12, 1)[0] = Math.LOG2E / Math.sqrt(d);
device.queue.writeBuffer(params, 0, packed);

const module = device.createShaderModule({ code: VARIANTS[name]() });
const error = (await module.getCompilationInfo()).messages.find((m) => m.type === 'error');
if (error) throw new Error(`${name}: line ${error.lineNum}: ${error.message.split('\n')[0]}`);
const pipeline = (entryPoint) => device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint, constants: { D: d, BR, KS4 } } });
const group = (pipe, entries) =>
  device.createBindGroup({ layout: pipe.getBindGroupLayout(0), entries: entries.map(([binding, buffer]) => ({ binding, resource: { buffer } })) });
const transpose = pipeline('main');
const attend = pipeline('attend');
const transposeGroup = group(transpose, [[0, qkv], [2, params], [3, KT]]);
const attendGroup = group(attend, [[0, qkv], [1, O], [2, params], [3, KT]]);
const { best, out } = await timePasses(device, webgpu.globals, [
  [transpose, transposeGroup, Math.ceil((B * NP * d) / 4 / 256)],
  [attend, attendGroup, B * Math.ceil(N / BR)],
], O);
const worst = maxErrorOnSampledRows(out, at, B, N, d);
console.log(`${B}×${N}×${d} microtiles ${name.padEnd(12)} (BR = ${BR}, KS4 = ${KS4}) ${best.toFixed(3)} ms  ${((4 * B * N * N * d) / best / 1e9).toFixed(1)} TFLOP/s  max error ${worst.toExponential(1)}`);
device.destroy();
process.exit(0);
