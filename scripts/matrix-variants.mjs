#!/usr/bin/env node
// Times the kernel of a tensor-core rung from rung 23 on (its convert and main passes in one compute pass) and variants
// of it, one variant per process, on random ±3 data, and checks the output against a float64 computation on sampled
// rows. A knock-out (✗) removes one part of the loop and gives wrong results: it only shows what that part costs.
// Needs a GPU with f16 subgroup matrices (an H100 through Dawn with allow_unsafe_apis and vulkan_enable_f16_on_nvidia).
// Usage: npm run bundle && cp scripts/matrix-variants.mjs bundle/hw4-cli/ &&
//        node bundle/hw4-cli/matrix-variants.mjs RUNG VARIANT [B,N,d]
//   RUNG: staged-matrix or resident-o; VARIANT: one of the rung's names below; default shape 100,2048,64.
// Prints: B×N×d, the rung and variant, the best of 3 timed runs after a warm-up, TFLOP/s (4·B·N²·d flops) and the max
// abs error on 18 rows of the first and last batch. The data repeat every 2^20 values, so where N·d is a multiple of
// 2^20 (2×32768×64) every query row equals a key row: a peaked softmax, where errors run higher than on the bench's.
// Dawn sometimes crashed here when a second shape was run in the same process, hence one variant and shape per process.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const webgpu = require('webgpu');
const { GPUBufferUsage } = webgpu.globals;
const { deviceWithAdapterLimits, uploadRandomInput, timePasses, maxErrorOnSampledRows } = await import(new URL('../../scripts/variant-harness.mjs', import.meta.url));

const source = (rung) => readFileSync(new URL(`../../packages/tensor/src/${rung}.wgsl`, import.meta.url), 'utf8');
const replace = (code, from, to) => {
  if (!code.includes(from)) throw new Error(`the kernel no longer contains: ${from}`);
  return code.split(from).join(to);
};
const staged = () => source('23-staged-matrix/staged-matrix');
const resident = () => source('24-resident-o/resident-o');
const plainProducts = (code) =>
  ['s0 = subgroupMatrixMultiplyAccumulate(ql[k], kh0, s0);', 's1 = subgroupMatrixMultiplyAccumulate(ql[k], kh1, s1);',
    's0 = subgroupMatrixMultiplyAccumulate(qh[k], kl0, s0);', 's1 = subgroupMatrixMultiplyAccumulate(qh[k], kl1, s1);',
    'o[n] = subgroupMatrixMultiplyAccumulate(pl, vh, o[n]);', 'o[n] = subgroupMatrixMultiplyAccumulate(ph, vl, o[n]);'].reduce((text, line) => replace(text, line, ''), code);
const noCopy = (code) => replace(code, 'let more = j + 1u < Tc;\n    if (more) {', 'let more = j + 1u < Tc;\n    if (false) {');
const noSoftmax = (code) =>
  replace(replace(code, 'if (j * BC + col < N) { sv[k] = Sf[sBase + col]; }', ''), 'Ph[pBase + col] = f16(ph);\n      Pl[pBase + col] = f16(p - ph);', '');
const noRoundTrip = (code) =>
  replace(
    replace(
      replace(code, '    var s0 = A();\n    var s1 = A();\n', ''),
      'subgroupMatrixStore<row_major>(&Sf, 16u * sg * SO, s0, SO);\n    subgroupMatrixStore<row_major>(&Sf, 16u * sg * SO + 16u, s1, SO);',
      '',
    ),
    '  for (var j = 0u; j < Tc; j++) {',
    '  var s0 = A();\n  var s1 = A();\n  for (var j = 0u; j < Tc; j++) {',
  ).replace('  // O_i = (oRow + o) / ℓ_i', '  subgroupMatrixStore<row_major>(&Sf, 16u * sg * SO, s0, SO);\n  subgroupMatrixStore<row_major>(&Sf, 16u * sg * SO + 16u, s1, SO);\n  // O_i = (oRow + o) / ℓ_i');
const RUNGS = {
  'staged-matrix': {
    kernel: staged,
    // S with one product (Qh·Khᵀ) instead of three.
    'one-product-S': () =>
      ['s0 = subgroupMatrixMultiplyAccumulate(ql[k], kh0, s0);', 's1 = subgroupMatrixMultiplyAccumulate(ql[k], kh1, s1);',
        's0 = subgroupMatrixMultiplyAccumulate(qh[k], kl0, s0);', 's1 = subgroupMatrixMultiplyAccumulate(qh[k], kl1, s1);'].reduce((code, line) => replace(code, line, ''), staged()),
    // P̃V_j with one product (P̃h·Vh) instead of three.
    'one-product-PV': () => replace(replace(staged(), 'ot[n] = subgroupMatrixMultiplyAccumulate(pl, vh, ot[n]);', ''), 'ot[n] = subgroupMatrixMultiplyAccumulate(ph, vl, ot[n]);', ''),
    // ✗ The next tile is never written to workgroup memory: tile 0 serves every step.
    'no-copy': () => replace(staged(), 'if (more) {\n      for (var u = 0u; u < PF; u++) {\n        let e = t + WG * u;\n        let at', 'if (false) {\n      for (var u = 0u; u < PF; u++) {\n        let e = t + WG * u;\n        let at'),
    // ✗ P̃V_j is not added to O.
    'no-O-update': () => replace(staged(), 'o[k] = o[k] * alpha + Sf[sBase + 2u * ((k + rot) % (D / 2u)) + h];', 'o[k] = o[k] * alpha + f32(j);'),
    // ✗ No exponential in the softmax.
    'no-exp': () => replace(staged(), 'let p = exp2(sv[k] - mNew);', 'let p = sv[k] - mNew;'),
  },
  'resident-o': {
    kernel: resident,
    // o added to O in f32 registers every tile, every 2 or 4 tiles, or only when a row's maximum moves.
    'flush-1': () => replace(resident(), 'override FLUSH: u32 = 8u;', 'override FLUSH: u32 = 1u;'),
    'flush-2': () => replace(resident(), 'override FLUSH: u32 = 8u;', 'override FLUSH: u32 = 2u;'),
    'flush-4': () => replace(resident(), 'override FLUSH: u32 = 8u;', 'override FLUSH: u32 = 4u;'),
    'flush-16': () => replace(resident(), 'override FLUSH: u32 = 8u;', 'override FLUSH: u32 = 16u;'),
    'never-flush': () => replace(resident(), 'override FLUSH: u32 = 8u;', 'override FLUSH: u32 = 0x40000000u;'),
    // Plain f16 products (Qh·Khᵀ and P̃h·Vh only, as rung 16 computes): the cost of the compensation.
    'plain-products': () => plainProducts(resident()),
    // ✗ No reads of K and V after tile 0 (the tiles are still written to workgroup memory, from stale registers).
    'no-copy': () => noCopy(resident()),
    // ✗ A plain barrier after the softmax instead of the uniform load (a moved row no longer forces a flush).
    'plain-barrier': () => replace(resident(), 'let moved = workgroupUniformLoad(&movedAt).x == j && j > 0u;', 'workgroupBarrier();\n    let moved = false;'),
    // ✗ Both: what is left is the S → P̃ round trip through workgroup memory, the softmax and the barriers.
    'plain-no-copy': () => noCopy(plainProducts(resident())),
    // Each invocation's half of its row's S and P̃ as 16 contiguous columns instead of every other column.
    'contiguous-softmax': () => replace(resident(), 'let col = 2u * ((k + rot) % (BC / 2u)) + h;', 'let col = (BC / 2u) * h + k;'),
    // ✗ S is stored but not read, and P̃ not written (the products read stale P̃ tiles): no softmax work.
    'no-softmax': () => noSoftmax(resident()),
    // ✗ Plain products, no copy, no softmax: the products, their fragment loads and the barriers alone.
    'skeleton': () => noSoftmax(noCopy(plainProducts(resident()))),
    // ✗ The skeleton without the S round trip: S accumulates over all tiles in registers and is stored once, after
    // the loop. What is left: the products, their fragment loads from workgroup memory, and the barriers.
    'no-round-trip': () => noRoundTrip(noSoftmax(noCopy(plainProducts(resident())))),
  },
};

const [rung = '', name = '', shapeArg = '100,2048,64'] = process.argv.slice(2);
if (!(rung in RUNGS) || !(name in RUNGS[rung])) {
  const lists = Object.entries(RUNGS).map(([id, variants]) => `${id}: ${Object.keys(variants).join(', ')}`).join('; ');
  process.stderr.write(`usage: matrix-variants.mjs RUNG VARIANT [B,N,d]; ${lists}\n`);
  process.exit(2);
}
const [B, N, d] = shapeArg.split(',').map(Number);
if (![B, N, d].every((x) => Number.isInteger(x) && x > 0) || d % 16 !== 0 || d > 64) {
  process.stderr.write(`matrix-variants: shape ${shapeArg}: B,N,d with d a multiple of 16 up to 64 (four subgroups per workgroup)\n`);
  process.exit(2);
}

const instance = webgpu.create(['enable-dawn-features=allow_unsafe_apis,vulkan_enable_f16_on_nvidia', 'disable-dawn-features=timestamp_quantization']);
const adapter = await instance.requestAdapter({ powerPreference: 'high-performance' });
const FEATURES = ['shader-f16', 'subgroups', 'timestamp-query', 'chromium-experimental-subgroup-matrix'];
const missing = FEATURES.filter((f) => !adapter?.features.has(f));
if (!adapter || missing.length > 0) {
  process.stderr.write(`matrix-variants: this GPU lacks ${adapter ? missing.join(', ') : 'an adapter'}; nothing to measure\n`);
  process.exit(2);
}
const device = await deviceWithAdapterLimits(adapter, FEATURES);

const NSG = 4;
const NP = Math.ceil(N / 64) * 64;
const { qkv, at } = uploadRandomInput(device, webgpu.globals, B, N, d);
const O = device.createBuffer({ size: B * N * d * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
const scratch = device.createBuffer({ size: B * 6 * NP * d * 2, usage: GPUBufferUsage.STORAGE });
const params = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
const packed = new ArrayBuffer(16);
new Uint32Array(packed, 0, 3).set([N, NP, B]);
new Float32Array(packed, 12, 1)[0] = Math.LOG2E / Math.sqrt(d);
device.queue.writeBuffer(params, 0, packed);

const module = device.createShaderModule({ code: RUNGS[rung][name]() });
const error = (await module.getCompilationInfo()).messages.find((m) => m.type === 'error');
if (error) throw new Error(`${name}: line ${error.lineNum}: ${error.message.split('\n')[0]}`);
// Synchronous pipeline creation: the asynchronous one aborted this process in Dawn (std::system_error).
const convert = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'convert', constants: { D: d } } });
const main = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main', constants: { D: d, NSG } } });
const group = (pipeline, entries) =>
  device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: entries.map(([binding, buffer]) => ({ binding, resource: { buffer } })) });
const convertGroup = group(convert, [[0, qkv], [2, params], [3, scratch]]);
const mainGroup = group(main, [[1, O], [2, params], [4, scratch]]);
const { best, out } = await timePasses(device, webgpu.globals, [
  [convert, convertGroup, Math.ceil((B * 3 * NP * d) / 4 / 256)],
  [main, mainGroup, B * Math.ceil(N / (16 * NSG))],
], O);
const worst = maxErrorOnSampledRows(out, at, B, N, d);
console.log(`${B}×${N}×${d} ${rung} ${name.padEnd(16)} ${best.toFixed(3)} ms  ${((4 * B * N * N * d) / best / 1e9).toFixed(1)} TFLOP/s  max error ${worst.toExponential(1)}`);
device.destroy();
process.exit(0);
