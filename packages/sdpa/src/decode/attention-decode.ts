/**
 * The decode kernel (attention-decode.wgsl): a few query rows per head against a long cache, the query heads of a KV
 * group together so that K and V are read once per group, keys split over workgroups and merged by `combine`.
 */
import {
  checked,
  checkUniforms,
  computePipelines,
  grid2d,
  kernelBindings,
  kernelWorkgroupBytes,
  packUniforms,
  valueHeadSize,
  type GpuContext,
  type KernelSource,
  type SdpaProblem,
} from '@fa/core';
import {
  bindingResource,
  COMBINE_WORKGROUP,
  commonUniforms,
  explicitLayout,
  forTensorType,
  headSizesReason,
  headTerms,
  OwnedBuffers,
  RunUniforms,
  scoreTermSwitches,
  softcapUniforms,
  valueStrides,
  type KernelBuffers,
  type TensorBinding,
  type TensorType,
} from '../kernel-support.js';
import lanesCode from './attention-decode-lanes.wgsl';
import code from './attention-decode.wgsl';

export const ATTENTION_DECODE_KERNEL = { label: 'attention-decode.wgsl', code };
/** The kernel with its lane loop (`lanes`): subgroups enabled, the loop after the tile loop's declarations. */
export const ATTENTION_DECODE_LANES_KERNEL = { label: 'attention-decode.wgsl with its lane loop', code: `enable subgroups;\n${code}\n${lanesCode}` };

/** Invocations per workgroup. */
const WG = 128;
/** Most vec4 slots of O per invocation (the kernel's SLOT_MAX). */
const SLOT_MAX = 8;
/** Query rows a workgroup may hold: GROUP · Lq. */
export const DECODE_MAX_ROWS = 32;
/** Workgroups to aim for (several per compute unit on a large GPU). */
const TARGET_WORKGROUPS = 512;
/**
 * Keys per tile, the first that fits (16 at the common sizes), for f32 and f16 tensors alike. The K and V tiles stay
 * packed in workgroup memory (f16 tensors: 8 bytes per vec4), so 16 f16 keys take 10,688 bytes at d = 128 with 4 rows,
 * four workgroups per H100 compute unit, as 8 keys did when the tiles were unpacked to f32. Measured on the H100 (2026-11-27, f16 decode, 32/8
 * heads, d = 128, 32768 keys, ms): 1 row 0.083 against 0.107-0.108 with 8 unpacked keys, 4 rows 0.246 against 0.334
 * (docs/decode.md). Before the tiles were packed, 16 keys (19,008 bytes, two workgroups per unit) lost to 8.
 */
const TILE_KEYS = [16, 8];
/** Most vec4s of K_j (and of V_j) one invocation loads per tile (the kernel's LD_MAX). */
const LD_MAX = 16;

/** Sizes an experiment may set instead of the plan's own (the bench's FA_SDPA_TUNING). */
export interface DecodeTuning {
  /** Keys per tile (BK). */
  readonly keysPerTile?: number;
  /** Workgroups to aim for when splitting the keys. */
  readonly targetWorkgroups?: number;
  /** The tiled kernels' key ranges per row block (attention-fp32, attention-matrix), instead of their rule. */
  readonly prefillSplits?: number;
  /** attention-matrix's keys per tile (16, 32 or 64) instead of its rule. */
  readonly matrixKeysPerTile?: number;
  /** attention-matrix's subgroups per workgroup (1, 2, 4 or 8), where their workgroup memory fits. */
  readonly matrixSubgroups?: number;
  /** attention-matrix's OW: columns of O per round through the S tiles (a multiple of 16 dividing d). */
  readonly matrixColumnsPerRound?: number;
  /** attention-matrix's FLUSH (0: O rescaled in place; else tiles between flushes to f32 registers). */
  readonly matrixFlush?: number;
  /** attention-matrix's KV_TILES: 2 (K and V tiles side by side) or 1 (V in K's place) instead of its rule. */
  readonly matrixKvTiles?: number;
  /** attention-matrix's HALVES: 1 (a subgroup holds all of d for its 16 rows) or 2 (two subgroups share them, each with half of d) instead of its rule. */
  readonly matrixHalves?: number;
  /** attention-matrix with f16 tensors up to d = 128: Q_i's rows read ahead of their staging rounds (1) or round by round (0) instead of its rule. */
  readonly matrixQAhead?: number;
  /** attention-fp32's invocations per workgroup (32, 64, 128 or 256: BR = WG / H · ROWS query rows) instead of its rule. */
  readonly fp32Invocations?: number;
  /** attention-decode's loop: 1 the lane loop (attention-decode-lanes.wgsl) where it takes the problem (the default), 2 the tile loop. */
  readonly decodeLoop?: number;
  /** The lane loop's keys per cluster per step (KB, 1 to 4). */
  readonly laneKeys?: number;
  /** When the lane loop issues each step's loads (its PREFETCH): 1 a step ahead (the plan), 2 at that step, to measure what 1 saves. */
  readonly lanePrefetch?: number;
  /** How the lane loop sums each step's scores over a cluster (its SCATTER): 1 by halves where the step's scores are a multiple of its lanes (the plan), 2 each score by its own steps. */
  readonly laneScatter?: number;
}

/** The keys of DecodeTuning, for the checks of the library's options and of the bench's FA_SDPA_TUNING. */
export const TUNING_KEYS = ['keysPerTile', 'targetWorkgroups', 'prefillSplits', 'matrixKeysPerTile', 'matrixSubgroups', 'matrixFlush', 'matrixColumnsPerRound', 'matrixKvTiles', 'matrixHalves', 'matrixQAhead', 'fp32Invocations', 'decodeLoop', 'laneKeys', 'lanePrefetch', 'laneScatter'] as const satisfies readonly (keyof DecodeTuning)[];

export interface DecodePlan {
  readonly dtype: TensorType;
  /** The key loop: `main` (tiles through workgroup memory) or `lanes` (a cluster of lanes per key, no barriers). */
  readonly loop: 'main' | 'lanes';
  readonly constants: Readonly<Record<string, number>>;
  /** Keys per tile. */
  readonly BK: number;
  /** Workgroups the key splits aim for. */
  readonly targetWorkgroups: number;
  readonly summary: string;
}


/** The decode kernel's plan, or why it does not take this problem (the prefill kernel then does). */
export function decodePlan(problem: SdpaProblem, gpu: GpuContext, lse: boolean, dtype: TensorType, tuning: DecodeTuning = {}): DecodePlan | string {
  const { Hq, Hkv, Lq, d } = problem.dims;
  const dv = valueHeadSize(problem.dims);
  const R = (Hq / Hkv) * Lq;
  if (R > DECODE_MAX_ROWS) return `${R} query rows per KV head, more than the decode kernel's ${DECODE_MAX_ROWS}`;
  if (problem.mask || problem.blockMask) return 'element and block masks are the prefill kernel\'s';
  if (problem.mods) return 'score and mask functions (scoreMod, maskMod) are the prefill kernel\'s (attention-fp32)';
  const head = headSizesReason(d, dv);
  if (head !== undefined) return head;
  if (Math.ceil((R * dv) / 4 / WG) > SLOT_MAX) return `${R} rows of ${dv} need more than ${SLOT_MAX} slots per invocation`;
  const limit = gpu.report.limits.maxComputeWorkgroupStorageSize;
  // V's head size only where it differs, so that dv = d compiles as before.
  const heads = { D: d, ...(dv !== d ? { DV: dv } : {}) };
  // Workgroup memory as the kernel for these tensors declares it (the query rows, the K and V tiles as the tensors hold
  // them, the scores, each row's m, ℓ, α).
  const declared = forTensorType(ATTENTION_DECODE_KERNEL, dtype).code;
  const bytes = (keys: number): number => kernelWorkgroupBytes(declared, { ...heads, R, BK: keys, WG, LSE: 0, CW: COMBINE_WORKGROUP });
  const fits = (keys: number): boolean => bytes(keys) <= limit && Math.ceil((keys * Math.max(d, dv)) / 4 / WG) <= LD_MAX;
  const BK = tuning.keysPerTile ?? TILE_KEYS.find(fits);
  if (BK === undefined || !fits(BK)) return `the decode tiles for d = ${d} do not fit ${limit} bytes of workgroup memory`;
  const targetWorkgroups = tuning.targetWorkgroups ?? TARGET_WORKGROUPS;
  const constants = { ...heads, R, BK, WG, LSE: lse ? 1 : 0, CW: COMBINE_WORKGROUP };
  const refused =
    notOneOrTwo(tuning, 'decodeLoop', 'the lane loop', 'the tile loop') ??
    (tuning.laneKeys !== undefined && tuning.laneKeys > LANE_KEYS_MAX ? `tuning.laneKeys is ${tuning.laneKeys}; give 1 to ${LANE_KEYS_MAX}` : undefined) ??
    notOneOrTwo(tuning, 'lanePrefetch', 'a step ahead', 'at the step') ??
    notOneOrTwo(tuning, 'laneScatter', 'by halves', 'each score by its own steps');
  if (refused) return refused;
  // Whether a step of `keys` keys has its scores summed by halves: KB·R a multiple of the cluster's lanes.
  const byHalves = (keys: number): boolean => (keys * R) % LANE_CLUSTER === 0;
  const laneKeys = tuning.laneKeys ?? (dtype === 'f16' && byHalves(LANE_KEYS_F16) ? LANE_KEYS_F16 : LANE_KEYS);
  const lanes = tuning.decodeLoop !== 2;
  if (lanes && lanesReason(gpu, R, d, dv, laneKeys) === undefined) {
    // A step of the lane loop covers WG / LANE_CLUSTER clusters of laneKeys keys: the splits count steps as tiles.
    const stepKeys = (WG / LANE_CLUSTER) * laneKeys;
    const scatter = tuning.laneScatter !== 2 && byHalves(laneKeys);
    return { dtype, loop: 'lanes', constants: { ...constants, BK: stepKeys, CL: LANE_CLUSTER, KB: laneKeys, PREFETCH: tuning.lanePrefetch === 2 ? 0 : 1, ...(scatter ? { SCATTER: 1 } : {}) }, BK: stepKeys, targetWorkgroups: tuning.targetWorkgroups ?? LANE_TARGET_WORKGROUPS, summary: `${R} rows per KV head, lanes of ${LANE_CLUSTER} per key, ${laneKeys} keys a step` };
  }
  return { dtype, loop: 'main', constants, BK, targetWorkgroups, summary: `${R} rows per KV head, ${BK} keys per tile` };
}

/** Why tuning's switch `key` (1 or 2, each meaning as given) cannot be taken, or undefined when it is unset or 1 or 2. */
function notOneOrTwo(tuning: DecodeTuning, key: 'decodeLoop' | 'lanePrefetch' | 'laneScatter', one: string, two: string): string | undefined {
  const value = tuning[key];
  return value === undefined || value === 1 || value === 2 ? undefined : `tuning.${key} is ${value}; give 1 (${one}) or 2 (${two})`;
}

/** Lanes per key in the lane loop (its CL). */
const LANE_CLUSTER = 8;
/** The lane loop's keys per cluster per step (its KB), and the most it takes (the kernel's LANE_KEYS_MAX). */
const LANE_KEYS = 2;
const LANE_KEYS_MAX = 4;
/**
 * The lane loop's keys per step with f16 tensors where the step's scores are summed by halves (KB·R a multiple of the
 * cluster's lanes: R even). On an H200 (2026-11-28, 32/8 heads, d = 128, R = 4, ms, docs/decode.md): 1 row of 32768
 * keys 0.0630 against 0.0637 with 2 keys, B = 8 0.293 against 0.321, 1 row of 4096 keys 0.0253 against 0.0255. f32
 * tensors lost with 4 (0.098 against 0.087 at 1 row), and keep 2.
 */
const LANE_KEYS_F16 = 4;
/**
 * Workgroups the lane loop's key splits aim for: its workgroups hold little workgroup memory, and fewer, longer
 * ranges spend less on each range's merge. Measured on the H100 (2026-11-28, 32/8 heads, d = 128, 32768 keys, ms,
 * docs/decode.md): f32 1 row 0.118 with 256, 0.139 with 512 (the tile loop 0.161). With the loads a step ahead, on an
 * H200 (2026-11-28): f16 1 row 0.079 with 256 against the tile loop's 0.094, so f16 tensors take the lane loop too
 * (512 was timed only in a slower build of the loop: 0.114 against that build's 0.095 with 256).
 */
const LANE_TARGET_WORKGROUPS = 256;

/** Why the lane loop does not take the problem, or undefined when it does (its LANE_* limits, subgroups of CL or more). */
function lanesReason(gpu: GpuContext, R: number, d: number, dv: number, laneKeys: number): string | undefined {
  if (!gpu.device.features.has('subgroups') || (gpu.report.subgroupMinSize ?? 0) < LANE_CLUSTER) return `the lane loop needs subgroups of ${LANE_CLUSTER} or more`;
  if (dv !== d || d % (4 * LANE_CLUSTER) !== 0) return `the lane loop takes dv = d, a multiple of ${4 * LANE_CLUSTER}`;
  const per = d / 4 / LANE_CLUSTER;
  if (R * per > 16 || laneKeys * per > 32) return `the lane loop holds at most 16 vec4s of O per lane (${R} rows of d = ${d})`;
  return undefined;
}

/** The WGSL a plan compiles: the tile loop's module, or with the lane loop after it, for the plan's tensors. */
export function decodeKernelSource(plan: DecodePlan): KernelSource {
  return forTensorType(plan.loop === 'lanes' ? ATTENTION_DECODE_LANES_KERNEL : ATTENTION_DECODE_KERNEL, plan.dtype);
}

export interface DecodeKernel {
  readonly plan: DecodePlan;
  encode(encoder: GPUCommandEncoder, buffers: KernelBuffers, batch0: number, batches: number, timestampWrites?: GPUComputePassTimestampWrites): void;
  destroy(): void;
}

/** The entry point that merges the key ranges: the lane loop's own, a cluster of lanes per vec4 of O, or `combine`. */
const mergeEntry = (plan: DecodePlan): 'combine' | 'combineLanes' => (plan.loop === 'lanes' ? 'combineLanes' : 'combine');
/** Invocations per vec4 of O in the merge. */
const mergeLanes = (plan: DecodePlan): number => (plan.loop === 'lanes' ? LANE_CLUSTER : 1);

/** Key ranges per (batch, KV head): enough workgroups to fill the GPU, each at least a few tiles. */
function decodeSplits(pairs: number, tiles: number, target: number): number {
  return Math.max(1, Math.min(Math.ceil(target / pairs), Math.ceil(tiles / 4)));
}

export async function prepareDecodeKernel(gpu: GpuContext, problem: SdpaProblem, plan: DecodePlan): Promise<DecodeKernel> {
  const { device } = gpu;
  const { Hkv, Lk, d } = problem.dims;
  const dv = valueHeadSize(problem.dims);
  const R = plan.constants.R as number;
  const kernel = decodeKernelSource(plan);
  // The softcap, ALiBi and sinks: switches and the softcap's factors in the uniform; each query head's slope and sink
  // (base 2) in the first Hq entries of ML, which the host writes whenever it makes ML.
  const terms = headTerms(problem);
  const headUniforms = { ...scoreTermSwitches(problem), ...softcapUniforms(problem), headTerms: terms ? problem.dims.Hq : 0, ...valueStrides(problem) };
  const fields = checkUniforms('attention-decode', kernel, { ...commonUniforms(problem), Hkv, pairs: 1, splits: 1, batch0: 0, cached: 0, ...headUniforms });
  const bindings = kernelBindings(kernel.code);
  const layout = explicitLayout(gpu, bindings, 'attention-decode');
  const pipelines = await checked(gpu, `compiling attention-decode (${plan.summary}, d = ${d}, ${plan.dtype} tensors)`, () =>
    computePipelines(gpu, kernel, [plan.loop, mergeEntry(plan)], { ...plan.constants }, layout),
  );
  const owned = new OwnedBuffers(device);
  const runUniforms = new RunUniforms(device, owned, 'attention-decode', fields.length * 4);
  const noLse = owned.storage('attention-decode no lse');
  const noLengths = owned.storage('attention-decode no cache lengths');
  const cached = problem.cacheLengths ? 1 : 0;
  const tiles = Math.ceil(Lk / plan.BK);
  let scratch: { Opart: GPUBuffer; ML: GPUBuffer; rows: number } | undefined;
  return {
    plan,
    encode(encoder, buffers, batch0, batches, timestampWrites) {
      if (cached && !buffers.lengths) throw new RangeError('attention-decode: the problem has cache lengths; bind a lengths buffer');
      const pairs = batches * Hkv;
      const splits = decodeSplits(pairs, tiles, plan.targetWorkgroups);
      const rows = pairs * splits * R;
      if (!scratch || scratch.rows < rows) {
        const ML = owned.storage('attention-decode slopes, sinks and partial m, ℓ', undefined, (headUniforms.headTerms + rows) * 8);
        if (terms) device.queue.writeBuffer(ML, 0, terms);
        scratch = { Opart: owned.storage('attention-decode partial O', undefined, rows * dv * 4), ML, rows };
      }
      const params = runUniforms.of(batch0, batches, () => packUniforms(fields, { ...commonUniforms(problem), Hkv, pairs, splits, batch0, cached, ...headUniforms }));
      const resources: Record<string, TensorBinding> = { q: buffers.q, k: buffers.k, v: buffers.v, O: buffers.O, lse: buffers.lse ?? noLse, lengths: buffers.lengths ?? noLengths, params, Opart: scratch.Opart, ML: scratch.ML };
      const group = device.createBindGroup({
        label: 'attention-decode',
        layout: layout.getBindGroupLayout(0),
        entries: bindings.map(({ binding, name }) => ({ binding, resource: bindingResource(resources[name] as TensorBinding) })),
      });
      const pass = encoder.beginComputePass({ label: 'attention-decode', ...(timestampWrites ? { timestampWrites } : {}) });
      pass.setBindGroup(0, group);
      pass.setPipeline(pipelines[plan.loop]);
      pass.dispatchWorkgroups(...grid2d(gpu, pairs * splits));
      pass.setPipeline(pipelines[mergeEntry(plan)]);
      pass.dispatchWorkgroups(...grid2d(gpu, Math.ceil((pairs * R * (dv / 4) * mergeLanes(plan)) / COMBINE_WORKGROUP)));
      pass.end();
    },
    destroy() {
      owned.destroy();
    },
  };
}
