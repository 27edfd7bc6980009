/**
 * The host of the tiled attention kernels, attention-fp32 and attention-matrix, which share bindings and a uniform: a
 * workgroup per (batch, head, query tile, range of its key tiles), the tile lists of a block mask, the key ranges under
 * a band, and the `combine` pass that merges ranges. Compiled once per problem; buffers are bound per encode.
 */
import {
  bandOf,
  checked,
  checkUniforms,
  computePipelines,
  grid2d,
  kernelBindings,
  keySplits,
  packUniforms,
  type GpuContext,
  type KernelSource,
  valueHeadSize,
  type SdpaProblem,
} from '@fa/core';
import combineCode from './combine.wgsl';
import interfaceCode from './tiled-interface.wgsl';
import { scheduledKeyRanges, type KeyRanges, type ScheduledRanges } from './key-ranges.js';
import { prepareMods, type ModPlan } from './mods/mod-host.js';
import { bindingResource, COMBINE_WORKGROUP, commonUniforms, explicitLayout, headTerms, OwnedBuffers, RunUniforms, softcapUniforms, valueStrides, type KernelBuffers, type TensorBinding, type TensorType } from './kernel-support.js';

/** A tiled kernel's source: its `main` (`code`) with the shared interface and `combine` entry point appended. */
export function tiledKernel(label: string, code: string): KernelSource {
  return { label, code: `${code}\n${interfaceCode}\n${combineCode}` };
}

/** A tiled kernel's plan for one problem on one adapter. */
export interface TiledPlan {
  readonly id: 'attention-fp32' | 'attention-matrix';
  /** The kernel's source for the plan's dtype. */
  readonly kernel: KernelSource;
  readonly dtype: TensorType;
  readonly constants: Readonly<Record<string, number>>;
  /**
   * What the kernel does beyond the band, as uniforms rather than constants (one pipeline serves every mask, which
   * a software GPU would otherwise compile once per combination): mask, blocks, blockTiles, writeLse, cached, softcap,
   * alibi, sinks.
   */
  readonly switches: Readonly<Record<string, number>>;
  /** Query rows per workgroup. */
  readonly BR: number;
  /** Keys per tile. */
  readonly BC: number;
  readonly workgroupBytes: number;
  readonly summary: string;
  /** attention-fp32's score and mask functions, when the problem has them (its kernel then has them compiled in). */
  readonly mods?: ModPlan;
}

export interface TiledKernel {
  readonly plan: TiledPlan;
  /** Records one dispatch for batches batch0 … batch0 + batches − 1 (the buffers hold those batches only). */
  encode(encoder: GPUCommandEncoder, buffers: KernelBuffers, batch0: number, batches: number, timestampWrites?: GPUComputePassTimestampWrites): void;
  destroy(): void;
}

/**
 * Where Q, K, V and O lie in their bindings, in vec4s (of the tensors' type), when not in the problem's layout: the
 * strides of Q and of K and V (which share theirs), where K and V begin, and O's own strides. hw4's file holds each
 * batch's Q, K and V one after the other in one buffer (hw4-adapter.ts); O has the layout of Q otherwise.
 */
export interface TensorPlacement {
  readonly qBatch: number;
  readonly qHead: number;
  readonly qRow: number;
  readonly kvBatch: number;
  readonly kvHead: number;
  readonly kvRow: number;
  readonly kStart: number;
  readonly vStart: number;
  readonly oBatch: number;
  readonly oHead: number;
  readonly oRow: number;
}

/**
 * The placement of the problem's own layout: separate tensors from offset 0, O shaped as Q with V's head size (the
 * kernel finds V's strides from K's: valueStrides).
 */
function placementOf(problem: SdpaProblem): TensorPlacement {
  const { qBatch = 0, qHead = 0, qRow = 0, kvBatch = 0, kvHead = 0, kvRow = 0 } = commonUniforms(problem);
  const { oBatch, oHead, oRow } = valueStrides(problem);
  return { qBatch, qHead, qRow, kvBatch, kvHead, kvRow, kStart: 0, vStart: 0, oBatch, oHead, oRow };
}

/**
 * The kernel compiled for `problem`, with its masks and tile lists uploaded; buffers are bound per encode. `splitsSet`:
 * key ranges per row block an experiment sets instead of the rule; `placement`: where the tensors lie in their
 * bindings, when not in the problem's layout.
 */
export async function prepareTiledKernel(gpu: GpuContext, problem: SdpaProblem, plan: TiledPlan, splitsSet?: number, placement = placementOf(problem)): Promise<TiledKernel> {
  const { device } = gpu;
  const { Hq, Lq, Lk, d } = problem.dims;
  const dv = valueHeadSize(problem.dims); // the width of O's rows, and of the partial O of key ranges
  const { kernel, id } = plan;
  const uniformsOf = (batch0: number, batches: number, ranges: KeyRanges): Record<string, number> => ({
    ...bandAndMaskUniforms(problem, batch0, batches, ranges),
    ...placement,
  });
  const fields = checkUniforms(id, kernel, { ...uniformsOf(0, 1, UNSPLIT), ...plan.switches });
  const bindings = kernelBindings(kernel.code);
  const layout = explicitLayout(gpu, bindings, id);
  const owned = new OwnedBuffers(device);
  // Score and mask functions: their buffers in group 1, and the pre-pass that lists the tiles a mask function leaves.
  const mods = plan.mods && prepareMods(gpu, problem, { ...plan, mods: plan.mods }, layout.getBindGroupLayout(0), owned);
  const Tr = Math.ceil(Lq / plan.BR);
  const tiles = Math.ceil(Lk / plan.BC);
  const banded = bandTileCounts(problem, plan);
  /** Tiles come from lists (a block mask's, or a mask function's): their ranges are even, and more of them. */
  const listedTiles = problem.blockMask !== undefined || plan.mods?.lists === true;
  /** The unbanded problem's even key ranges for `rowBlocks` row blocks. */
  const evenRanges = (rowBlocks: number): number => Math.min(tiles, keySplits(rowBlocks, tiles) * (listedTiles ? BLOCK_MASK_SPLIT_FACTOR : 1));
  /** attention-fp32's key ranges by the schedule model, once per count of row blocks (the model takes milliseconds). */
  const scheduled = new Map<number, ScheduledRanges>();
  const scheduledFor = (rowBlocks: number): ScheduledRanges | undefined => {
    if (id !== 'attention-fp32' || splitsSet !== undefined || banded || listedTiles) return undefined;
    let ranges = scheduled.get(rowBlocks);
    if (!ranges) scheduled.set(rowBlocks, (ranges = scheduledKeyRanges(rowBlocks, tiles, evenRanges(rowBlocks))));
    return ranges;
  };
  /**
   * The workgroups' order, a constant of the pipeline: range by range where the model lays out a run of all B batches
   * that way. Runs of fewer batches (a last chunk, a run cut at a binding's limit) take the model's layout where it has
   * this order, and even ranges in this order otherwise.
   */
  const rangeMajor = scheduledFor(problem.dims.B * Hq * Tr)?.rangeMajor ?? 0;
  const entryPoints: ('main' | 'combine' | 'modTiles')[] = ['main', 'combine', ...(mods?.entryPoints ?? [])];
  const constants = { ...plan.constants, ...(rangeMajor === 1 ? { RANGE_MAJOR: 1 } : {}) };
  const pipelines = await checked(gpu, `compiling ${id} (${plan.summary}, d = ${d}, ${plan.dtype} tensors)`, () =>
    computePipelines(gpu, kernel, entryPoints, constants, mods?.layout ?? layout),
  );
  const storage = (label: string, data: ArrayBufferView | undefined, bytes = 16): GPUBuffer => owned.storage(label, data, bytes);
  const fixed: Record<string, GPUBuffer> = {
    mask: storage(`${id} mask`, maskAndHeadTerms(problem)),
    blockFlags: storage(`${id} block flags`, problem.blockMask ? Uint32Array.from(problem.blockMask.data) : undefined),
    tileLists: mods?.tileLists ?? storage(`${id} tile lists`, problem.blockMask ? tileLists(problem, plan) : undefined),
    lse: storage(`${id} no lse`, undefined),
  };
  const runUniforms = new RunUniforms(device, owned, id, fields.length * 4);
  /** The partial results of key ranges, grown to the largest run so far. */
  let scratch: { Opart: GPUBuffer; ML: GPUBuffer; rows: number } | undefined;
  const scratchFor = (rows: number): { Opart: GPUBuffer; ML: GPUBuffer } => {
    if (!scratch || scratch.rows < rows) {
      scratch?.Opart.destroy();
      scratch?.ML.destroy();
      scratch = { Opart: storage(`${id} partial O`, undefined, rows * dv * 4), ML: storage(`${id} partial m, ℓ`, undefined, rows * 8), rows };
    }
    return scratch;
  };
  /** Stand-ins for the partial results when the keys are not split (writable bindings may not share a buffer). */
  const unsplit = { Opart: storage(`${id} no partial O`, undefined), ML: storage(`${id} no partial m, ℓ`, undefined) };
  /** A mask function's list lengths, per (batch, head, row block) of the whole problem, where the lists are written once. */
  let listed: number[] | undefined;
  /** The key ranges per row block of a run of `batches` batches. */
  const splitsFor = (batches: number): KeyRanges => {
    if (splitsSet !== undefined) return { splits: splitsSet, perSplit: 0 };
    if (banded) return bandSplits(banded, batches * Hq);
    if (listed) return bandSplits(listed, batches / problem.dims.B);
    const rowBlocks = batches * Hq * Tr;
    const ranges = scheduledFor(rowBlocks);
    if (ranges?.rangeMajor === rangeMajor) return ranges;
    return { splits: evenRanges(rowBlocks), perSplit: 0 };
  };
  /** The uniform's bytes for a run of batches cut into key ranges. */
  const packed = (batch0: number, batches: number, ranges: KeyRanges): ArrayBuffer =>
    packUniforms(fields, { ...uniformsOf(batch0, batches, ranges), ...plan.switches });
  const paramsOf = (batch0: number, batches: number): GPUBuffer => runUniforms.of(batch0, batches, () => packed(batch0, batches, splitsFor(batches)));
  /** Group 0's bind group: each of the kernel's bindings from `resources`, by name. */
  const groupOf = (label: string, resources: Record<string, TensorBinding>): GPUBindGroup =>
    device.createBindGroup({
      label,
      layout: layout.getBindGroupLayout(0),
      entries: bindings.map(({ binding, name }) => ({ binding, resource: bindingResource(resources[name] as TensorBinding) })),
    });
  /**
   * The pre-pass's uniform for all B batches: the runs' own are made after it, once the lists' lengths have set their
   * key ranges (the pre-pass reads no range).
   */
  const prePassParams = (): GPUBuffer => {
    const buffer = owned.uniform(`${id} params of the mask function's tile lists`, fields.length * 4);
    device.queue.writeBuffer(buffer, 0, packed(0, problem.dims.B, UNSPLIT));
    return buffer;
  };
  /**
   * A mask function's tile lists for every batch, written once (their buffers are the caller's typed arrays, so the
   * lists never change): the pre-pass over all B batches, with stand-ins for the tensors it does not read.
   */
  async function writeFixedLists(): Promise<void> {
    const { B } = problem.dims;
    const standIn = (name: string): GPUBuffer => storage(`${id} stand-in ${name}`, undefined);
    const resources: Record<string, TensorBinding> = {
      ...fixed,
      ...unsplit,
      q: standIn('q'),
      k: standIn('k'),
      v: standIn('v'),
      O: standIn('O'),
      params: prePassParams(),
    };
    await checked(gpu, `writing the tile lists of ${id}'s mask function`, () => {
      const group = groupOf(`${id} mask function's tile lists`, resources);
      const encoder = device.createCommandEncoder({ label: `${id} mask function's tile lists` });
      const pass = encoder.beginComputePass({ label: `${id} mask function's tile lists` });
      pass.setBindGroup(0, group);
      mods?.encode(pass, pipelines.modTiles, B);
      pass.end();
      device.queue.submit([encoder.finish()]);
      return Promise.resolve();
    });
  }
  /**
   * The lengths of the lists written once (each (batch, head, row block)'s start and length lead the buffer): read back
   * once, so that their key ranges are cut as a band's are (bandSplits), the longest lists into the most ranges.
   */
  async function listLengths(): Promise<number[]> {
    const words = 2 * problem.dims.B * Hq * Tr;
    const read = device.createBuffer({ label: `${id} tile list lengths`, size: 4 * words, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    try {
      const encoder = device.createCommandEncoder({ label: `${id} tile list lengths` });
      encoder.copyBufferToBuffer(fixed.tileLists as GPUBuffer, 0, read, 0, 4 * words);
      device.queue.submit([encoder.finish()]);
      await read.mapAsync(GPUMapMode.READ);
      const entries = new Uint32Array(read.getMappedRange());
      return Array.from({ length: words / 2 }, (_, e) => entries[2 * e + 1] as number);
    } finally {
      read.destroy();
    }
  }
  if (mods?.listsFixed) {
    await writeFixedLists();
    if (splitsSet === undefined) listed = await listLengths();
  }
  return {
    plan,
    encode(encoder, buffers, batch0, batches, timestampWrites) {
      const { splits } = splitsFor(batches);
      const params = paramsOf(batch0, batches);
      const partial = splits > 1 ? scratchFor(batches * Hq * splits * Lq) : unsplit;
      if (problem.cacheLengths && !buffers.lengths) throw new RangeError(`${id}: the problem has cache lengths; bind a lengths buffer`);
      const resources: Record<string, TensorBinding> = {
        ...fixed,
        ...partial,
        q: buffers.q,
        k: buffers.k,
        v: buffers.v,
        O: buffers.O,
        params,
        ...(buffers.lse ? { lse: buffers.lse } : {}),
        ...(problem.cacheLengths && buffers.lengths ? { tileLists: buffers.lengths } : {}),
      };
      const group = groupOf(id, resources);
      const pass = encoder.beginComputePass({ label: id, ...(timestampWrites ? { timestampWrites } : {}) });
      pass.setBindGroup(0, group);
      mods?.encode(pass, pipelines.modTiles, batches, !mods.listsFixed);
      pass.setPipeline(pipelines.main);
      pass.dispatchWorkgroups(...grid2d(gpu, batches * Hq * Tr * splits));
      if (splits > 1) {
        pass.setPipeline(pipelines.combine);
        pass.dispatchWorkgroups(...grid2d(gpu, Math.ceil((batches * Hq * Lq * (dv / 4)) / COMBINE_WORKGROUP)));
      }
      pass.end();
    },
    destroy() {
      owned.destroy();
    },
  };
}

/**
 * Under a block mask, the key tiles each (batch, head, query tile) computes: those in its rows' band that some kept
 * block touches. Layout: for each (batch, head, query tile) in order, its start and count; then the tiles.
 */
export function tileLists(problem: SdpaProblem, plan: Pick<TiledPlan, 'BR' | 'BC'>): Uint32Array {
  const { B, Hq, Lq, Lk } = problem.dims;
  const blocks = problem.blockMask;
  if (!blocks) return new Uint32Array(0);
  const Tr = Math.ceil(Lq / plan.BR);
  const heads = B * Hq * Tr;
  const lists: number[] = [];
  const entries = new Uint32Array(2 * heads);
  const s = blocks.strides;
  const kept = (b: number, h: number, ib: number, jb: number): boolean => blocks.data[b * s.b + h * s.h + ib * s.i + jb * s.j] !== 0;
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < Hq; h++) {
      for (let i = 0; i < Tr; i++) {
        const rowFirst = i * plan.BR;
        const rowLast = Math.min(Lq, rowFirst + plan.BR) - 1;
        const { first: keyFirst, last: keyLast } = rowBlockKeys(problem, b, rowFirst, rowLast);
        const entry = (b * Hq + h) * Tr + i;
        entries[2 * entry] = 2 * heads + lists.length;
        for (let j = Math.floor(keyFirst / plan.BC); keyFirst <= keyLast && j <= Math.floor(keyLast / plan.BC); j++) {
          const jbLast = Math.floor((Math.min(Lk, (j + 1) * plan.BC) - 1) / blocks.keys);
          let any = false;
          for (let ib = Math.floor(rowFirst / blocks.rows); ib <= Math.floor(rowLast / blocks.rows) && !any; ib++) {
            for (let jb = Math.floor((j * plan.BC) / blocks.keys); jb <= jbLast && !any; jb++) any = kept(b, h, ib, jb);
          }
          if (any) lists.push(j);
        }
        entries[2 * entry + 1] = 2 * heads + lists.length - (entries[2 * entry] as number);
      }
    }
  }
  const all = new Uint32Array(2 * heads + lists.length);
  all.set(entries);
  all.set(lists, 2 * heads);
  return all;
}

/** What the host writes for an excluded key (−∞, false): below the kernels' EXCLUDED, −3.0e38, and every finite value. */
const MASK_EXCLUDED = -3.4e38;
/** tiled-interface.wgsl's MASK_KNEE and MASK_TOP: 2^126, and 2^127 − 2^110. */
export const MASK_KNEE = 2 ** 126;
export const MASK_TOP = 2 ** 127 - 2 ** 110;
const FLOAT32_MAX = 3.4028234663852886e38;

/**
 * An additive mask value as the tiled kernels read it: in base 2 (their scores are scale·log2(e)·q·k), computed in
 * float64 and rounded once. x·log2(e) past ±3.4e38/log2(e) would overflow float32, and a sum or difference of scores
 * near ±3.4e38 would too (∞ − ∞ = NaN in exp2), so values past ±MASK_KNEE (x beyond ±5.9e37) are brought linearly
 * within ±MASK_TOP: float32's most negative value, −3.4028235e38 (Hugging Face's padding value), maps to −MASK_TOP, a
 * finite score like any other, not an exclusion. The map is monotone, so the order of mask values is kept; past the
 * knee, where a score (|s| < 2^101) is absorbed in s + x as float32 absorbs it in the plain computation, values within
 * about five float32 steps of each other may tie. The kernels undo the map in the log-sum-exp (naturalLse).
 * −∞ becomes MASK_EXCLUDED.
 */
export function maskBase2(x: number): number {
  if (x === Number.NEGATIVE_INFINITY) return MASK_EXCLUDED;
  const y = x * Math.LOG2E;
  if (Math.abs(y) <= MASK_KNEE) return y;
  return Math.sign(y) * (MASK_KNEE + ((Math.abs(y) - MASK_KNEE) * (MASK_TOP - MASK_KNEE)) / (FLOAT32_MAX * Math.LOG2E - MASK_KNEE));
}

/** The element mask as the kernel reads it: additive float32 in base 2 (maskBase2), MASK_EXCLUDED for −∞ and for false. */
export function kernelMask(mask: NonNullable<SdpaProblem['mask']>): Float32Array {
  const out = new Float32Array(mask.data.length);
  if (mask.kind === 'bool') for (let e = 0; e < out.length; e++) out[e] = mask.data[e] === 0 ? MASK_EXCLUDED : 0;
  else for (let e = 0; e < out.length; e++) out[e] = maskBase2(mask.data[e] as number);
  return out;
}

/**
 * What the kernels' `mask` binding holds: the element mask as they read it (kernelMask), then, with ALiBi or sinks,
 * each query head's slope and sink logit in base 2 (headTerms, from uniform headTerms on), so that these take no
 * binding of their own: the tiled kernels bind 10 storage buffers already, past WebGPU's default 8 per stage.
 */
export function maskAndHeadTerms(problem: SdpaProblem): Float32Array | undefined {
  const mask = problem.mask ? kernelMask(problem.mask) : undefined;
  const terms = headTerms(problem);
  if (!terms) return mask;
  const all = new Float32Array((mask?.length ?? 0) + terms.length);
  if (mask) all.set(mask);
  all.set(terms, mask?.length ?? 0);
  return all;
}

/** The uniform's values for a run of `batches` batches from `batch0`, but where the tensors lie (TensorPlacement). */
function bandAndMaskUniforms(problem: SdpaProblem, batch0: number, batches: number, { splits, perSplit }: KeyRanges): Record<string, number> {
  const m = problem.mask?.strides ?? { b: 0, h: 0, i: 0, j: 0 };
  const bm = problem.blockMask;
  const bs = bm?.strides ?? { b: 0, h: 0, i: 0, j: 0 };
  return {
    ...commonUniforms(problem),
    bh: batches * problem.dims.Hq,
    batch0,
    maskB: m.b,
    maskH: m.h,
    maskI: m.i,
    maskJ: m.j,
    blockRows: bm?.rows ?? 1,
    blockKeys: bm?.keys ?? 1,
    blocksB: bs.b,
    blocksH: bs.h,
    blocksI: bs.i,
    blocksJ: bs.j,
    splits,
    perSplit,
    ...softcapUniforms(problem),
    headTerms: problem.mask?.data.length ?? 0,
  };
}

/**
 * Under a band (causal, windows) without block masks or cache lengths: the K/V tiles each row block sees (the same for
 * every batch and head). Undefined when every row block sees all the tiles, or the tiles depend on the data.
 */
function bandTileCounts(problem: SdpaProblem, plan: TiledPlan): number[] | undefined {
  if (problem.blockMask || problem.cacheLengths || (!Number.isFinite(problem.left) && !Number.isFinite(problem.right))) return undefined;
  const { Lq } = problem.dims;
  const counts: number[] = [];
  for (let rowFirst = 0; rowFirst < Lq; rowFirst += plan.BR) {
    const { first, last } = rowBlockKeys(problem, 0, rowFirst, Math.min(Lq, rowFirst + plan.BR) - 1);
    counts.push(first > last ? 0 : Math.floor(last / plan.BC) - Math.floor(first / plan.BC) + 1);
  }
  return counts;
}

/** The keys any of rows rowFirst … rowLast of batch b sees by the band: from its first row's first to its last's last. */
function rowBlockKeys(problem: SdpaProblem, b: number, rowFirst: number, rowLast: number): { first: number; last: number } {
  return { first: bandOf(problem, b, rowFirst).first, last: bandOf(problem, b, rowLast).last };
}

/** One range per row block: O written directly, no merge. */
const UNSPLIT: KeyRanges = { splits: 1, perSplit: 0 };

/**
 * Key ranges per row block under a block mask, as a multiple of the unmasked rule's: the row blocks' lists differ in
 * length (each row of blocks keeps its own number), so more, shorter ranges let the GPU balance them. Measured on the
 * H100 (1×12×4096×64, 50% of the blocks, ms; the rule gives 2): 1.097 with 1 range, 0.896 with 2, 0.888 with 3, 0.878
 * with 4, 0.869 with 6, 0.875 with 8; dense: 1.491 with 2 (docs/sdpa.md). A mask function's tile lists are as uneven:
 * the causal mask written as a mask function at 1×12×4096×64 took 1.363 ms with 1 range, 1.114 with 2 (the rule's),
 * 1.012 with 4 and 0.997 with 8, against 0.998 for the built-in causal option (H100, 2026-11-27). Lists written once
 * are cut by their lengths instead (listLengths, bandSplits); this factor serves the lists written in every run.
 */
const BLOCK_MASK_SPLIT_FACTOR = 3;

/** Most key ranges per row block under a band: the row blocks' shares are unequal, so it may take more than keySplits' 8. */
const MAX_BAND_SPLITS = 16;

/**
 * Key ranges under a band, `perSplit` tiles each: the ranges keySplits gives the band's work counted in row blocks
 * of the longest's length, so the longest row block gets the most workgroups and the short ones few. A causal
 * prefill on a small grid then takes about half the time of the unmasked one instead of waiting for its longest row
 * block, split as evenly as the others.
 */
function bandSplits(counts: readonly number[], heads: number): KeyRanges {
  const longest = Math.max(0, ...counts);
  if (longest === 0) return UNSPLIT;
  const work = counts.reduce((a, n) => a + n, 0);
  const rowBlocks = Math.ceil((heads * work) / longest);
  const perSplit = Math.ceil(longest / keySplits(rowBlocks, longest, MAX_BAND_SPLITS));
  return { splits: Math.ceil(longest / perSplit), perSplit };
}
