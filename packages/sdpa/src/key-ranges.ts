/**
 * How attention-fp32 cuts each row block's key tiles into ranges where the grid is short of workgroups: as many ranges
 * as keySplits gives, even, or laid out as a model of the GPU's scheduling says finishes first.
 *
 * Why a model. With keySplits' even ranges, 10×2048×64 is 640 equal workgroups, about 2.4 times as many as an H100
 * holds at once (132 compute units × 2 of these workgroups). The last 112 finish together only if the GPU puts them
 * one to a unit, where each runs at the unit's full rate; put two to a unit, they take as long as a full wave. The
 * GPU chose one way or the other from run to run, so the same kernel ran in 0.347 or 0.400 ms (docs/sdpa.md, "The
 * last wave"). Ranges of p tiles with a short last one, dispatched range by range (every row block's first range
 * before any second one), leave a last wave of short workgroups, which finishes early whichever way it is placed.
 *
 * The model: `UNITS` compute units, each holding `RESIDENT` workgroups that share its rate equally; a workgroup
 * costs its tiles plus `WORKGROUP_OVERHEAD` (Q's rows in, the partial O out) and the merge `MERGE_COST` per partial
 * row block. A layout's time is the mean of two placements of the waiting workgroups, filling each unit's free places
 * in turn or the least loaded unit first: the GPU was seen to take either. On the H100 the model's times follow the
 * measured ones within a few percent (docs/sdpa.md, "The last wave"); another GPU gets a layout that is valid but may
 * not be its best.
 */

/** How a row block's key tiles are cut: `splits` ranges of `perSplit` tiles (0: even shares). */
export interface KeyRanges {
  readonly splits: number;
  readonly perSplit: number;
}

/** The model's layout: the ranges, and the order the workgroups go in. */
export interface ScheduledRanges extends KeyRanges {
  /** 1: workgroups go range by range (every row block's range 0, then range 1, …); 0: a row block's ranges side by side. */
  readonly rangeMajor: 0 | 1;
}

/** Compute units (an H100's). */
const UNITS = 132;
/** attention-fp32's workgroups one unit holds (251 registers per invocation at d = 64: docs/kernel-registers.md). */
const RESIDENT = 2;
/** A workgroup's cost beyond its tiles, in tiles: Q's rows in, the partial O out. */
const WORKGROUP_OVERHEAD = 1;
/**
 * The merge's cost per partial row block, in tiles (fitted to the H100's times): the same for every layout compared,
 * since all have `most` ranges, it only keeps the 5% relative to the whole run.
 */
const MERGE_COST = 0.005;
/** Where a range layout of p tiles may end: its last range this fraction of the others. */
const LAST_RANGE_FRACTIONS = [0.25, 0.5, 0.75] as const;
/** A layout replaces even ranges only when the model has it this much faster: the model's own error is about 4%. */
const REQUIRED_GAIN = 0.95;

/** The workgroups' tiles in dispatch order: `splits` even shares (as the kernel cuts them) side by side per row block. */
function evenLayout(rowBlocks: number, tiles: number, splits: number): number[] {
  const shares = Array.from({ length: splits }, (_, s) => Math.floor(((s + 1) * tiles) / splits) - Math.floor((s * tiles) / splits));
  return Array.from({ length: rowBlocks * splits }, (_, w) => shares[w % splits] as number);
}

/** Ranges of `perSplit` tiles (the last what is left), range by range. */
function rangeMajorLayout(rowBlocks: number, tiles: number, perSplit: number): number[] {
  const splits = Math.ceil(tiles / perSplit);
  return Array.from({ length: rowBlocks * splits }, (_, w) => {
    const s = Math.floor(w / rowBlocks);
    return Math.min(perSplit, tiles - s * perSplit);
  });
}

/**
 * When the last of `work` (tiles per workgroup, in dispatch order) finishes, in tiles of one workgroup alone at a
 * unit's full rate. The first workgroups go one to a unit, then a second to each; after that a waiting workgroup
 * takes a free place as soon as one opens, the units scanned in order (`leastLoaded` false) or the least loaded first.
 */
export function scheduleMakespan(work: readonly number[], leastLoaded: boolean): number {
  const units: number[][] = Array.from({ length: UNITS }, () => []);
  let next = 0;
  const place = (spread: boolean): void => {
    if (spread) {
      for (let held = 0; held < RESIDENT; held++) {
        for (const unit of units) if (unit.length === held && next < work.length) unit.push((work[next++] as number) + WORKGROUP_OVERHEAD);
      }
    } else {
      for (const unit of units) while (unit.length < RESIDENT && next < work.length) unit.push((work[next++] as number) + WORKGROUP_OVERHEAD);
    }
  };
  let time = 0;
  place(true);
  for (;;) {
    // Each of a unit's n workgroups runs at 1/n of its rate: the next to finish is the one with least left.
    let step = Infinity;
    for (const unit of units) if (unit.length > 0) step = Math.min(step, Math.min(...unit) * unit.length);
    if (step === Infinity) return time;
    time += step;
    for (const unit of units) {
      if (unit.length === 0) continue;
      const done = step / unit.length;
      const left = unit.map((w) => w - done).filter((w) => w > 1e-9);
      unit.length = 0;
      unit.push(...left);
    }
    place(leastLoaded);
  }
}

/** The model's time of a layout: the mean of the two placements (the GPU took either), plus the merge of its partial results. */
function modelTime(work: readonly number[], rowBlocks: number, splits: number): number {
  const merge = splits > 1 ? MERGE_COST * rowBlocks * splits : 0;
  return (scheduleMakespan(work, false) + scheduleMakespan(work, true)) / 2 + merge;
}

/**
 * The key ranges for `rowBlocks` row blocks of `tiles` key tiles each, where keySplits gives `most` even ranges: those
 * even ranges, unless the model finds `most` ranges of p tiles (the last shorter) dispatched range by range at least 5%
 * faster. Always `most` ranges, so the error bounds that count keySplits' ranges hold.
 */
export function scheduledKeyRanges(rowBlocks: number, tiles: number, most: number): ScheduledRanges {
  const even: ScheduledRanges = { splits: most, perSplit: 0, rangeMajor: 0 };
  if (most <= 1) return even;
  let best = even;
  const baseline = modelTime(evenLayout(rowBlocks, tiles, most), rowBlocks, most);
  let bestTime = baseline * REQUIRED_GAIN;
  for (const fraction of LAST_RANGE_FRACTIONS) {
    const perSplit = Math.ceil(tiles / (most - 1 + fraction));
    if (Math.ceil(tiles / perSplit) !== most || perSplit * most === tiles) continue;
    const time = modelTime(rangeMajorLayout(rowBlocks, tiles, perSplit), rowBlocks, most);
    if (time < bestTime) [best, bestTime] = [{ splits: most, perSplit, rangeMajor: 1 }, time];
  }
  return best;
}
