#!/usr/bin/env node
// Times the kernel of an fp32 row-group rung (split-softmax by default) with other tiles than its plan's: invocations
// per workgroup WG, keys per tile BC and the prefetch of the next tile, each in its own process, on random ±3 data,
// checked against float64 on sampled rows. Keys are not split (SPLITS = 1: shapes with enough row blocks).
// Usage: npm run bundle && cp scripts/fp32-tiles-sweep.mjs bundle/hw4-cli/ &&
//        node bundle/hw4-cli/fp32-tiles-sweep.mjs WG,BC,PREFETCH [B,N,d] [RUNG]   (default 500,2048,64 split-softmax)
// Prints: B×N×d, the rung and tiles, the best of 3 timed runs after a warm-up, TFLOP/s and the max abs error.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const webgpu = require('webgpu');
const { GPUBufferUsage } = webgpu.globals;
const { deviceWithAdapterLimits, uploadRandomInput, timePasses, maxErrorOnSampledRows } = await import(new URL('../../scripts/variant-harness.mjs', import.meta.url));

const FOLDERS = { 'split-softmax': '22-split-softmax/split-softmax', 'lean-loop': '20-lean-loop/lean-loop' };
const [tilesArg = '128,32,0', shapeArg = '500,2048,64', rung = 'split-softmax'] = process.argv.slice(2);
const [WG, BC, PREFETCH] = tilesArg.split(',').map(Number);
const [B, N, d] = shapeArg.split(',').map(Number);
if (!(rung in FOLDERS) || ![WG, BC, B, N, d].every((x) => Number.isInteger(x) && x > 0) || d % 4 !== 0) {
  process.stderr.write(`usage: fp32-tiles-sweep.mjs WG,BC,PREFETCH [B,N,d] [${Object.keys(FOLDERS).join('|')}]\n`);
  process.exit(2);
}
const code = readFileSync(new URL(`../../packages/optimized/src/${FOLDERS[rung]}.wgsl`, import.meta.url), 'utf8');
// The plan's H: the fewest invocations per row pair whose share of d/4 is at most 8 vec4s; 16 keys a step when H = 1.
let H = 1;
while (Math.ceil(d / 4 / H) > 8) H *= 2;
const KEYS = H === 1 ? 16 : 8;

const instance = webgpu.create(['disable-dawn-features=timestamp_quantization']);
const adapter = await instance.requestAdapter({ powerPreference: 'high-performance' });
const device = await deviceWithAdapterLimits(adapter, ['subgroups', 'timestamp-query']);
const { qkv, at } = uploadRandomInput(device, webgpu.globals, B, N, d);
const O = device.createBuffer({ size: B * N * d * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
const unused = () => device.createBuffer({ size: 16 * B, usage: GPUBufferUsage.STORAGE });
const params = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
const packed = new ArrayBuffer(16);
new Uint32Array(packed, 0, 2).set([N, B]);
new Float32Array(packed, 8, 1)[0] = Math.LOG2E / Math.sqrt(d);
new Uint32Array(packed, 12, 1)[0] = 1; // splits: one key range
device.queue.writeBuffer(params, 0, packed);

const module = device.createShaderModule({ code });
const constants = { D: d, H, BC, KEYS, WG, PREFETCH, CW: 64 };
const main = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main', constants } });
const group = device.createBindGroup({
  layout: main.getBindGroupLayout(0),
  entries: [[0, qkv], [1, O], [2, params], [3, unused()], [4, unused()]].map(([binding, buffer]) => ({ binding, resource: { buffer } })),
});
const BR = (WG / H) * 2;
const { best, out } = await timePasses(device, webgpu.globals, [[main, group, B * Math.ceil(N / BR)]], O);
const worst = maxErrorOnSampledRows(out, at, B, N, d);
console.log(`${B}×${N}×${d} ${rung} WG = ${WG}, BC = ${BC}, prefetch ${PREFETCH} ${best.toFixed(3)} ms  ${((4 * B * N * N * d) / best / 1e9).toFixed(1)} TFLOP/s  max error ${worst.toExponential(1)}`);
device.destroy();
process.exit(0);
