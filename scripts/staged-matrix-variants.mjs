#!/usr/bin/env node
// Times rung 23's kernel (packages/tensor/src/23-staged-matrix/staged-matrix.wgsl: the convert and main passes in one
// compute pass) and knock-out variants of it, one variant per process, on random ±3 data. A knock-out removes one
// part of the loop and gives wrong results: it only shows what that part costs. Needs a GPU with f16 subgroup matrices
// (an H100 through Dawn with allow_unsafe_apis and vulkan_enable_f16_on_nvidia).
// Usage: npm run bundle && cp scripts/staged-matrix-variants.mjs bundle/hw4-cli/ &&
//        node bundle/hw4-cli/staged-matrix-variants.mjs VARIANT [B,N,d]     (VARIANT: one of the names below; default shape 100,2048,64)
// Prints: B×N×d, the variant, the best of 3 timed runs after a warm-up, and TFLOP/s (4·B·N²·d flops).
// Dawn sometimes crashed here when a second shape was run in the same process, hence one variant and shape per process.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const webgpu = require('webgpu');
const { GPUBufferUsage, GPUMapMode } = webgpu.globals;

const KERNEL = new URL('../../packages/tensor/src/23-staged-matrix/staged-matrix.wgsl', import.meta.url);
const base = readFileSync(KERNEL, 'utf8');
const replace = (code, from, to) => {
  if (!code.includes(from)) throw new Error(`the kernel no longer contains: ${from}`);
  return code.split(from).join(to);
};
const VARIANTS = {
  kernel: () => base,
  // S with one product (Qh·Khᵀ) instead of three.
  'one-product-S': () => replace(replace(base, 's = subgroupMatrixMultiplyAccumulate(ql[k], kh, s);', ''), 's = subgroupMatrixMultiplyAccumulate(qh[k], kl, s);', ''),
  // P̃V_j with one product (P̃h·Vh) instead of three.
  'one-product-PV': () => replace(replace(base, 'ot[n] = subgroupMatrixMultiplyAccumulate(pl, vh, ot[n]);', ''), 'ot[n] = subgroupMatrixMultiplyAccumulate(ph, vl, ot[n]);', ''),
  // ✗ The next tile is never written to workgroup memory: tile 0 serves every step.
  'no-copy': () => replace(base, 'if (more) {\n      for (var u = 0u; u < PF; u++) {\n        let e = t + WG * u;\n        let at', 'if (false) {\n      for (var u = 0u; u < PF; u++) {\n        let e = t + WG * u;\n        let at'),
  // ✗ P̃V_j is not added to O.
  'no-O-update': () => replace(base, 'o[k] = o[k] * alpha + Sf[sBase + 2u * ((k + rot) % (D / 2u)) + h];', 'o[k] = o[k] * alpha + f32(j);'),
  // ✗ No exponential in the softmax.
  'no-exp': () => replace(base, 'let p = exp2(sv[k] - mNew);', 'let p = sv[k] - mNew;'),
};

const [name = '', shapeArg = '100,2048,64'] = process.argv.slice(2);
if (!(name in VARIANTS)) {
  process.stderr.write(`usage: staged-matrix-variants.mjs VARIANT [B,N,d]; VARIANT is one of ${Object.keys(VARIANTS).join(', ')}\n`);
  process.exit(2);
}
const [B, N, d] = shapeArg.split(',').map(Number);
if (![B, N, d].every((x) => Number.isInteger(x) && x > 0) || d % 16 !== 0 || d > 64) {
  process.stderr.write(`staged-matrix-variants: shape ${shapeArg}: B,N,d with d a multiple of 16 up to 64 (four subgroups per workgroup)\n`);
  process.exit(2);
}

const instance = webgpu.create(['enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia', 'disable-dawn-features=timestamp_quantization']);
const adapter = await instance.requestAdapter({ powerPreference: 'high-performance' });
const FEATURES = ['shader-f16', 'subgroups', 'timestamp-query', 'chromium-experimental-subgroup-matrix'];
const missing = FEATURES.filter((f) => !adapter?.features.has(f));
if (!adapter || missing.length > 0) {
  process.stderr.write(`staged-matrix-variants: this GPU lacks ${adapter ? missing.join(', ') : 'an adapter'}; nothing to measure\n`);
  process.exit(2);
}
const limits = adapter.limits;
const device = await adapter.requestDevice({
  requiredFeatures: FEATURES,
  requiredLimits: {
    maxComputeWorkgroupStorageSize: limits.maxComputeWorkgroupStorageSize,
    maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize,
    maxBufferSize: limits.maxBufferSize,
  },
});

const NSG = 4;
const NP = Math.ceil(N / 64) * 64;
const inputBytes = B * 3 * N * d * 4;
const qkv = device.createBuffer({ size: inputBytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
const O = device.createBuffer({ size: B * N * d * 4, usage: GPUBufferUsage.STORAGE });
const scratch = device.createBuffer({ size: B * 6 * NP * d * 2, usage: GPUBufferUsage.STORAGE });
const params = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
const packed = new ArrayBuffer(16);
new Uint32Array(packed, 0, 3).set([N, NP, B]);
new Float32Array(packed, 12, 1)[0] = Math.LOG2E / Math.sqrt(d);
device.queue.writeBuffer(params, 0, packed);
const chunk = new Float32Array(1 << 20).map(() => Math.random() * 6 - 3);
for (let offset = 0; offset < inputBytes; offset += chunk.byteLength) {
  device.queue.writeBuffer(qkv, offset, chunk, 0, Math.min(chunk.length, (inputBytes - offset) / 4));
}

const module = device.createShaderModule({ code: VARIANTS[name]() });
const error = (await module.getCompilationInfo()).messages.find((m) => m.type === 'error');
if (error) throw new Error(`${name}: line ${error.lineNum}: ${error.message.split('\n')[0]}`);
// Synchronous pipeline creation: the asynchronous one aborted this process in Dawn (std::system_error).
const convert = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'convert', constants: { D: d } } });
const main = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main', constants: { D: d, NSG } } });
const group = (pipeline, entries) =>
  device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: entries.map(([binding, buffer]) => ({ binding, resource: { buffer } })) });
const convertGroup = group(convert, [[0, qkv], [2, params], [3, scratch]]);
const mainGroup = group(main, [[1, O], [2, params], [4, scratch]]);
const grid = (n) => [Math.min(n, 65535), Math.ceil(n / 65535)];

const RUNS = 4;
const querySet = device.createQuerySet({ type: 'timestamp', count: 2 * RUNS });
const resolved = device.createBuffer({ size: 16 * RUNS, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
const readable = device.createBuffer({ size: 16 * RUNS, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
const encoder = device.createCommandEncoder();
for (let k = 0; k < RUNS; k++) {
  const pass = encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * k, endOfPassWriteIndex: 2 * k + 1 } });
  pass.setPipeline(convert);
  pass.setBindGroup(0, convertGroup);
  pass.dispatchWorkgroups(...grid(Math.ceil((B * 3 * NP * d) / 4 / 256)));
  pass.setPipeline(main);
  pass.setBindGroup(0, mainGroup);
  pass.dispatchWorkgroups(...grid(B * Math.ceil(N / (16 * NSG))));
  pass.end();
}
encoder.resolveQuerySet(querySet, 0, 2 * RUNS, resolved, 0);
encoder.copyBufferToBuffer(resolved, 0, readable, 0, 16 * RUNS);
device.queue.submit([encoder.finish()]);
await readable.mapAsync(GPUMapMode.READ);
const stamps = new BigUint64Array(readable.getMappedRange().slice(0));
readable.unmap();
// The first run warms up; the best of the other three counts.
const best = Math.min(...Array.from({ length: RUNS - 1 }, (_, k) => Number(stamps[2 * k + 3] - stamps[2 * k + 2]) / 1e6));
console.log(`${B}×${N}×${d} ${name.padEnd(16)} ${best.toFixed(3)} ms  ${((4 * B * N * N * d) / best / 1e9).toFixed(1)} TFLOP/s`);
device.destroy();
process.exit(0);
