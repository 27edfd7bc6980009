#!/usr/bin/env node
// What a read of workgroup memory costs in the fp32 rungs' inner loop, by how many different vec4s the 32 invocations
// of a subgroup read at once. In `lean-loop` at d = 32 (H = 1) every invocation of a subgroup reads the same vec4 of
// K_j or V_j (one address, broadcast); in `split-softmax` at d = 64 (H = 2) the two invocations of a pair read
// neighbouring vec4s (two addresses per read). Each vec4 read here feeds 8 multiply-adds, as there (two rows × 4).
// Patterns: same (every invocation the same vec4), pair (invocation & 1), quad (& 3), all (32 vec4s); each with two
// rows per invocation (8 multiply-adds per read, as in those rungs), with four (16, as in `four-rows`), and with four
// whose query vec4s are read from workgroup memory each step as well (4 more reads, each invocation its own address).
// Then register microtiles (docs/workgroup-reads-bench.md, last section): each invocation accumulating an R × C block
// from two operands read out of workgroup memory, in workgroups of 128 with a 32 KiB tile, and three with 44 KiB.
// Needs a GPU with `timestamp-query`. Prints per row count and pattern: ms (best of 5 after a warm-up), vec4 reads
// per ns (the query rows' reads included), and the multiply-adds as TFLOP/s (2 flops each).
// Usage: npm run bundle && cp scripts/lds-pattern-bench.mjs bundle/hw4-cli/ && node bundle/hw4-cli/lds-pattern-bench.mjs
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const webgpu = require('webgpu');
const { GPUBufferUsage, GPUMapMode } = webgpu.globals;
const instance = webgpu.create(['disable-dawn-features=timestamp_quantization']);
const adapter = await instance.requestAdapter({ powerPreference: 'high-performance' });
if (!adapter?.features.has('timestamp-query')) {
  process.stderr.write('lds-pattern-bench: this GPU has no timestamp-query; nothing to measure\n');
  process.exit(2);
}
const hasSubgroups = adapter.features.has('subgroups');
const device = await adapter.requestDevice({
  requiredFeatures: ['timestamp-query', ...(hasSubgroups ? ['subgroups'] : [])],
  requiredLimits: { maxComputeWorkgroupStorageSize: adapter.limits.maxComputeWorkgroupStorageSize },   // the microtiles' 32 KiB
});

const WG = 128;
const WORKGROUPS = 132 * 32;
const STEPS = 2048;   // loop iterations per invocation, 8 vec4 reads each
const PATTERNS = { same: 0, pair: 1, quad: 3, all: 31 };

// Reads vec4 ((8·it) mod 32 + x)·32 + (lane & MASK) of a 1024-vec4 tile (16 KiB), 8 per iteration, each into ROWS
// rows' accumulators (4·ROWS multiply-adds per read); with qFromMemory also the ROWS query vec4s.
const kernel = (ROWS, qFromMemory = false, SHUFFLES = 0) => {
  const rows = Array.from({ length: ROWS }, (_, r) => r);
  // With qFromMemory, the rows' vec4s are read each step too, 32 different ones per read (each invocation its own rows).
  const qReads = qFromMemory
    ? rows.map((r) => `let q${r} = tile[(((8u * it + ${r}u) % 32u) * 32u + lane + 512u) % 1024u];`).join('\n    ')
    : '';
  const fmas = (k, a) => rows.map((r) => `acc${r}_${a} = fma(q${r}, ${k}, acc${r}_${a});`).join(' ');
  // With SHUFFLES, that many scalars per step also go to the partner invocation (lane ^ 1) and are added to an
  // accumulator of the other row, as split-softmax's scores and P̃ do (about one scalar per 8 reads at d = 64).
  const shuffles = Array.from({ length: SHUFFLES }, (_, s) =>
    `acc0_${s % 4}[${s % 4}] += subgroupShuffleXor(acc${ROWS - 1}_${(s + 1) % 4}[${(s + 2) % 4}], 1u);`).join('\n    ');
  return `
${SHUFFLES > 0 ? 'enable subgroups;' : ''}
override MASK: u32;
@group(0) @binding(0) var<storage, read_write> out: array<vec4<f32>>;
var<workgroup> tile: array<vec4<f32>, 1024>;

@compute @workgroup_size(${WG})
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3u) {
  for (var e = t; e < 1024u; e += ${WG}u) { tile[e] = vec4<f32>(f32(e % 7u) * 0.125, 0.5, -0.25, f32(e % 3u)); }
  workgroupBarrier();
  let lane = t % 32u;
  ${qFromMemory ? '' : rows.map((r) => `let q${r} = vec4<f32>(f32(t) * 1e-3 + ${r}.0, 0.5, 0.25, 0.125);`).join('\n  ')}
  ${rows.map((r) => [0, 1, 2, 3].map((a) => `var acc${r}_${a} = vec4<f32>(0.0);`).join(' ')).join('\n  ')}
  for (var it = 0u; it < ${STEPS}u; it++) {
    let base = ((8u * it) % 32u) * 32u + (lane & MASK);
    ${qReads}
    ${[0, 1, 2, 3, 4, 5, 6, 7].map((x) => `let k${x} = tile[base + ${32 * x}u];`).join('\n    ')}
    ${[0, 1, 2, 3, 4, 5, 6, 7].map((x) => fmas(`k${x}`, x % 4)).join('\n    ')}
    ${shuffles}
  }
  out[wid.x * ${WG}u + t] = ${rows.map((r) => [0, 1, 2, 3].map((a) => `acc${r}_${a}`).join(' + ')).join(' + ')};
}`;
};


/** Best of RUNS − 1 timed dispatches (after a warm-up) of the module's `main` with these override constants, in ms. */
async function timeDispatches(module, constants, workgroups = WORKGROUPS) {
  const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main', constants } });
  const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: out } }] });
  const querySet = device.createQuerySet({ type: 'timestamp', count: 2 * RUNS });
  const resolved = device.createBuffer({ size: 16 * RUNS, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
  const readable = device.createBuffer({ size: 16 * RUNS, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const encoder = device.createCommandEncoder();
  for (let k = 0; k < RUNS; k++) {
    const pass = encoder.beginComputePass({ timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * k, endOfPassWriteIndex: 2 * k + 1 } });
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(workgroups);
    pass.end();
  }
  encoder.resolveQuerySet(querySet, 0, 2 * RUNS, resolved, 0);
  encoder.copyBufferToBuffer(resolved, 0, readable, 0, 16 * RUNS);
  device.queue.submit([encoder.finish()]);
  await readable.mapAsync(GPUMapMode.READ);
  const stamps = new BigUint64Array(readable.getMappedRange().slice(0));
  readable.unmap();
  // The first run warms up; the best of the others counts.
  return Math.min(...Array.from({ length: RUNS - 1 }, (_, k) => Number(stamps[2 * k + 3] - stamps[2 * k + 2]) / 1e6));
}

const out = device.createBuffer({ size: WORKGROUPS * WG * 16, usage: GPUBufferUsage.STORAGE });
const RUNS = 6;
const kReads = WORKGROUPS * WG * STEPS * 8;   // each feeds 4 multiply-adds per row
console.log(`${adapter.info.vendor} ${adapter.info.device}: ${WORKGROUPS} workgroups of ${WG}, ${STEPS} steps of 8 vec4 reads`);
for (const [ROWS, qFromMemory] of [[2, false], [4, false], [4, true]]) {
 const module = device.createShaderModule({ code: kernel(ROWS, qFromMemory) });
 const error = (await module.getCompilationInfo()).messages.find((m) => m.type === 'error');
 if (error) throw new Error(`line ${error.lineNum}: ${error.message.split('\n')[0]}`);
 for (const [name, MASK] of Object.entries(PATTERNS)) {
  const ms = await timeDispatches(module, { MASK });
  const addresses = MASK + 1;
  console.log(`${ROWS} rows${qFromMemory ? ' read from memory' : ''}, ${name.padEnd(6)} (${String(addresses).padStart(2)} vec4 per read) ${ms.toFixed(3)} ms  ${((kReads * (8 + (qFromMemory ? ROWS : 0))) / 8 / ms / 1e6).toFixed(1)} reads/ns  ${((kReads * 4 * ROWS * 2) / ms / 1e9).toFixed(1)} TFLOP/s`);
 }
}

// The same loop with scalars exchanged between the invocations of a pair (neighbouring vec4s per read, `pair`), the
// traffic that splitting d between two invocations adds: split-softmax at d = 64 shuffles 17 scalars per 128 reads
// (8 partial scores, 8 P̃, a rescale factor per 8 keys), about one per step here; four rows per pair would need two.
if (hasSubgroups) {
  for (const [ROWS, SHUFFLES] of [[2, 1], [2, 2], [2, 4], [4, 2], [4, 4]]) {
    const module = device.createShaderModule({ code: kernel(ROWS, false, SHUFFLES) });
    const error = (await module.getCompilationInfo()).messages.find((m) => m.type === 'error');
    if (error) throw new Error(`shuffles: line ${error.lineNum}: ${error.message.split('\n')[0]}`);
    const ms = await timeDispatches(module, { MASK: PATTERNS.pair });
    console.log(`${ROWS} rows, pair   ( 2 vec4 per read), ${SHUFFLES} scalar shuffle${SHUFFLES > 1 ? 's' : ''} per 8 reads ${ms.toFixed(3)} ms  ${((kReads * 4 * ROWS * 2) / ms / 1e9).toFixed(1)} TFLOP/s`);
  }
}

// Register microtiles, the other way to make a read feed more multiply-adds (the GEMM kernels' way, not the rungs'
// so far): each invocation accumulates an R × C block of scalars (R query rows × C keys of S, say), and per step of
// the shared dimension reads R/4 vec4s of one operand and C/4 of the other, both from workgroup memory (rows of the
// tile hold the operands transposed, 64 vec4s of each). A subgroup is RG groups of rows × 32/RG groups of columns, so
// a read of the first operand touches RG different vec4s, of the second 32/RG (neighbouring ones: no bank conflicts).
// R·C multiply-adds per (R + C)/4 reads: 8 at 4 × 4 (the rungs' ratio), 16 at 8 × 8, 21.3 at 8 × 16.
// With `pad` the workgroup also holds 12 KiB it barely uses (44 KiB in all), so at most 5 workgroups fit an SM, as in
// a FlashAttention kernel whose tiles fill the workgroup memory.
const microtile = (R, C, RG, WG = 128, pad = false) => {
  const CG = 32 / RG;
  const K_UNROLL = 4;
  const accs = Array.from({ length: R }, (_, r) => Array.from({ length: C / 4 }, (__, y) => `acc${r}_${y}`));
  const step = (kk) => [
    `{ let row = ((it * ${K_UNROLL}u + ${kk}u) % 16u) * 128u;`,
    ...Array.from({ length: R / 4 }, (_, x) => `let a${x} = tile[row + ${x * RG}u + rg];`),
    ...Array.from({ length: C / 4 }, (_, y) => `let b${y} = tile[row + ${64 + y * CG}u + cg];`),
    ...accs.flatMap((row, r) => row.map((name, y) => `${name} = fma(vec4<f32>(a${Math.floor(r / 4)}[${r % 4}]), b${y}, ${name});`)),
    '}',
  ].join('\n    ');
  return `
@group(0) @binding(0) var<storage, read_write> out: array<vec4<f32>>;
var<workgroup> tile: array<vec4<f32>, 2048>;
${pad ? 'var<workgroup> pad: array<vec4<f32>, 768>;' : ''}

@compute @workgroup_size(${WG})
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3u) {
  for (var e = t; e < 2048u; e += ${WG}u) { tile[e] = vec4<f32>(f32(e % 7u) * 0.125, 0.5, -0.25, f32(e % 3u)); }
  ${pad ? 'pad[t] = vec4<f32>(f32(t));' : ''}
  workgroupBarrier();
  let lane = t % 32u;
  let rg = lane / ${CG}u;
  let cg = lane % ${CG}u;
  ${accs.flat().map((name) => `var ${name} = vec4<f32>(0.0);`).join(' ')}
  for (var it = 0u; it < ${MICRO_FMAS / (R * C * K_UNROLL)}u; it++) {
    ${Array.from({ length: K_UNROLL }, (_, kk) => step(kk)).join('\n    ')}
  }
  out[wid.x * ${WG}u + t] = ${accs.flat().join(' + ')}${pad ? ' + pad[(t + 1u) % 768u]' : ''};
}`;
};
const MICRO_FMAS = 131072;   // scalar multiply-adds per invocation, as in the loops above
for (const [R, C, RG, WG_M = 128, pad = false] of [[4, 4, 4], [8, 8, 4], [8, 8, 2], [8, 8, 1], [8, 16, 4], [16, 8, 4],
  [8, 8, 4, 64, true], [8, 4, 4, 128, true], [8, 8, 4, 128, true]]) {
  const module = device.createShaderModule({ code: microtile(R, C, RG, WG_M, pad) });
  const error = (await module.getCompilationInfo()).messages.find((m) => m.type === 'error');
  if (error) throw new Error(`microtile ${R}×${C}: line ${error.lineNum}: ${error.message.split('\n')[0]}`);
  const workgroups = (WORKGROUPS * WG) / WG_M;   // the same invocations in all
  const ms = await timeDispatches(module, {}, workgroups);
  const perRead = (R * C) / ((R + C) / 4);
  const shape = WG_M === WG && !pad ? '' : `, workgroups of ${WG_M}${pad ? ' with 44 KiB' : ''}`;
  console.log(`microtile ${R}×${C}, ${RG} × ${32 / RG} groups per subgroup${shape} (${perRead.toFixed(1)} multiply-adds per read) ${ms.toFixed(3)} ms  ${((WORKGROUPS * WG * MICRO_FMAS * 2) / ms / 1e9).toFixed(1)} TFLOP/s`);
}
device.destroy();
process.exit(0);
