/**
 * What a read of workgroup memory costs in the fp32 rungs' inner loop, by how many different vec4s the 32 invocations
 * of a subgroup read at once. In `lean-loop` at d = 32 (H = 1) every invocation of a subgroup reads the same vec4 of
 * K_j or V_j (one address, broadcast); in `split-softmax` at d = 64 (H = 2) the two invocations of a pair read
 * neighbouring vec4s (two addresses per read). Each vec4 read here feeds 8 multiply-adds, as there (two rows × 4).
 * Patterns: same (every invocation the same vec4), pair (invocation & 1), quad (& 3), all (32 vec4s); each with two
 * rows per invocation (8 multiply-adds per read, as in those rungs), with four (16, as in `four-rows`), and with four
 * whose query vec4s are read from workgroup memory each step as well (4 more reads, each invocation its own address).
 * Then the pair pattern with scalars shuffled between the pair, and register microtiles (lds-pattern-kernels.ts).
 * Needs a GPU with `timestamp-query`. Prints per row count and pattern: ms (best of 5 after a warm-up), vec4 reads
 * per ns (the query rows' reads included), and the multiply-adds as TFLOP/s (2 flops each).
 */
import { atMost } from './args.js';
import type { Experiment } from './experiment.js';
import { assertCompiles, highPerformanceAdapter, NotHereError, storage, timeDispatches } from './harness.js';
import { MICRO_FMAS, MICROTILES, microtileKernel, PATTERNS, READ_LOOPS, readsKernel, SHUFFLE_LOOPS, STEPS, WG, WORKGROUPS } from './lds-pattern-kernels.js';

/** Each dispatch: the first warms up, the best of the other five counts. */
const RUNS = 6;

async function run(args: readonly string[], print: (line: string) => void): Promise<void> {
  atMost(args, 0);
  const adapter = await highPerformanceAdapter();
  if (!adapter.features.has('timestamp-query')) throw new NotHereError('this GPU has no timestamp-query; nothing to measure');
  const hasSubgroups = adapter.features.has('subgroups');
  const device = await adapter.requestDevice({
    requiredFeatures: ['timestamp-query', ...(hasSubgroups ? ['subgroups' as const] : [])],
    requiredLimits: { maxComputeWorkgroupStorageSize: adapter.limits.maxComputeWorkgroupStorageSize }, // the microtiles' 32 KiB
  });
  const out = storage(device, WORKGROUPS * WG * 16);
  const time = async (code: string, label: string, constants: Record<string, number>, workgroups = WORKGROUPS): Promise<number> => {
    const module = device.createShaderModule({ code });
    await assertCompiles(module, label);
    const pipeline = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main', constants } });
    const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: out } }] });
    return Math.min(...(await timeDispatches(device, [[pipeline, group, workgroups]], RUNS)));
  };
  const kReads = WORKGROUPS * WG * STEPS * 8; // each feeds 4 multiply-adds per row
  print(`${adapter.info.vendor} ${adapter.info.device}: ${WORKGROUPS} workgroups of ${WG}, ${STEPS} steps of 8 vec4 reads`);
  for (const [ROWS, qFromMemory] of READ_LOOPS) {
    const code = readsKernel(ROWS, qFromMemory);
    for (const [name, MASK] of Object.entries(PATTERNS)) {
      const ms = await time(code, `${ROWS} rows`, { MASK });
      const addresses = MASK + 1;
      const reads = (kReads * (8 + (qFromMemory ? ROWS : 0))) / 8;
      print(`${ROWS} rows${qFromMemory ? ' read from memory' : ''}, ${name.padEnd(6)} (${String(addresses).padStart(2)} vec4 per read) ${ms.toFixed(3)} ms  ${(reads / ms / 1e6).toFixed(1)} reads/ns  ${((kReads * 4 * ROWS * 2) / ms / 1e9).toFixed(1)} TFLOP/s`);
    }
  }
  if (hasSubgroups) {
    for (const [ROWS, SHUFFLES] of SHUFFLE_LOOPS) {
      const ms = await time(readsKernel(ROWS, false, SHUFFLES), 'shuffles', { MASK: PATTERNS.pair });
      print(`${ROWS} rows, pair   ( 2 vec4 per read), ${SHUFFLES} scalar shuffle${SHUFFLES > 1 ? 's' : ''} per 8 reads ${ms.toFixed(3)} ms  ${((kReads * 4 * ROWS * 2) / ms / 1e9).toFixed(1)} TFLOP/s`);
    }
  }
  for (const [R, C, RG, WG_M, pad] of MICROTILES) {
    const workgroups = (WORKGROUPS * WG) / WG_M; // the same invocations in all
    const ms = await time(microtileKernel(R, C, RG, WG_M, pad), `microtile ${R}×${C}`, {}, workgroups);
    const perRead = (R * C) / ((R + C) / 4);
    const shape = WG_M === WG && !pad ? '' : `, workgroups of ${WG_M}${pad ? ' with 44 KiB' : ''}`;
    print(`microtile ${R}×${C}, ${RG} × ${32 / RG} groups per subgroup${shape} (${perRead.toFixed(1)} multiply-adds per read) ${ms.toFixed(3)} ms  ${((WORKGROUPS * WG * MICRO_FMAS * 2) / ms / 1e9).toFixed(1)} TFLOP/s`);
  }
  device.destroy();
}

export const ldsPatternBench: Experiment = {
  name: 'lds-pattern-bench',
  summary: 'what a read of workgroup memory costs, by read pattern, with shuffles, and as register microtiles',
  usage: '',
  page: 'docs/workgroup-reads-bench.md',
  run,
};
