/**
 * The matrix-unit attention kernel (attention-matrix.wgsl, resident-o's loop with attention-fp32's heads, groups, bands
 * and masks): its plan for a problem on an adapter. It runs on tiled-host.ts, as attention-fp32 does.
 */
import { kernelWorkgroupBytes, keySplits, matrixUnavailable, type GpuContext, type KernelSource, type SdpaProblem } from '@fa/core';
import type { DecodeTuning } from '../decode/attention-decode.js';
import { COMBINE_WORKGROUP, forTensorType, hasScoreTerms, scoreTermSwitches, type TensorType } from '../kernel-support.js';
import { tiledKernel, type TiledPlan } from '../tiled-host.js';
import code from './attention-matrix.wgsl';

export const ATTENTION_MATRIX_KERNEL = tiledKernel('attention-matrix.wgsl', code);

/** The kernel's register arrays as written (d up to 128), and as the wide-head variant sizes them (d up to 256). */
const NARROW_ARRAYS = 'const DK_MAX: u32 = 8u;   // most fragments across d\nconst O4_MAX: u32 = 16u;';
const WIDE_ARRAYS = 'const DK_MAX: u32 = 16u;  // most fragments across d\nconst O4_MAX: u32 = 32u;';

/** A set of the kernel's register fragments: its letter (the struct `<letter>Fragments`, the accessors `get<letter>`
 * and `set<letter>`) and the type of each (L: a left operand, A: a result). */
export interface FragmentSet {
  readonly letter: 'Q' | 'S' | 'O';
  readonly type: 'L' | 'A';
}
/** Q_i's fragments across d (with two parts, a set each), the S tile's across its keys, and O's across d. */
export const Q_FRAGMENTS: FragmentSet = { letter: 'Q', type: 'L' };
export const S_FRAGMENTS: FragmentSet = { letter: 'S', type: 'A' };
export const O_FRAGMENTS: FragmentSet = { letter: 'O', type: 'A' };

/**
 * The kernel's block of `count` fragments of a set: a struct of `count` members and its two accessors, a switch on the
 * index (attention-matrix.wgsl has why). The file holds each set's block exactly as this writes it (Q and O for 8, S
 * for 4).
 */
export function fragmentStruct({ letter, type }: FragmentSet, count: number): string {
  const name = `${letter}Fragments`;
  const each = (body: (k: number) => string): string =>
    Array.from({ length: count }, (_, k) => (k < count - 1 ? `    case ${k}u: { ${body(k)} }\n` : `    default: { ${body(k)} }\n`)).join('');
  return (
    `struct ${name} {\n  ${Array.from({ length: count }, (_, k) => `f${k}: ${type}`).join(', ')},\n}\n` +
    `fn get${letter}(f: ptr<function, ${name}>, n: u32) -> ${type} {\n  switch n {\n${each((k) => `return (*f).f${k};`)}  }\n}\n` +
    `fn set${letter}(f: ptr<function, ${name}>, n: u32, x: ${type}) {\n  switch n {\n${each((k) => `(*f).f${k} = x;`)}  }\n}\n`
  );
}

/**
 * The same set as an array of DK_MAX behind the same accessors: what the wide-head variant keeps for Q. At d = 256 its
 * 16 fragments as a struct's members beside O's took the H100 2.03 → 2.18 ms (Gemma's causal prefill: docs/sdpa.md).
 */
export function fragmentArray({ letter, type }: FragmentSet): string {
  const name = `${letter}Fragments`;
  return (
    `alias ${name} = array<${type}, DK_MAX>;\n` +
    `fn get${letter}(f: ptr<function, ${name}>, n: u32) -> ${type} { return (*f)[n]; }\n` +
    `fn set${letter}(f: ptr<function, ${name}>, n: u32, x: ${type}) { (*f)[n] = x; }\n`
  );
}

/** One edit of the kernel's text for a variant: `text` as written becomes `replacement`; `what` names it in the error. */
interface KernelEdit {
  readonly text: string;
  readonly replacement: string;
  readonly what: string;
}

/** attention-matrix.wgsl with `edits`, labelled `(suffix)`; throws where the file lacks a text as written. */
function kernelVariant(variant: string, suffix: string, edits: readonly KernelEdit[], base: KernelSource = ATTENTION_MATRIX_KERNEL): KernelSource {
  const { code, label } = base;
  for (const { text, what } of edits) {
    if (!code.includes(text)) throw new Error(`${base.label} lacks ${what} as written; the ${variant} variant cannot be made`);
  }
  return { label: `${label} (${suffix})`, code: edits.reduce((text, edit) => text.replace(edit.text, edit.replacement), code) };
}

/**
 * The kernel above d = 128 where one subgroup holds all of d for its rows (d not a multiple of 32, or tuning's
 * matrixHalves 1; otherwise teams of two take the kernel as written): register arrays for 16 fragments across d, O's
 * 16 as a struct's members and Q's as an array (fragmentArray), the fastest of the four ways measured at d = 256
 * (docs/sdpa.md). The arrays are sized by constants (WGSL sizes a function's arrays by constants only), and sizing them
 * for 256 everywhere cost the H100 4-12% at d = 64 (docs/sdpa.md), so d up to 128 keeps the kernel as written. Made
 * once, when this module loads.
 */
const WIDE_HEAD_KERNEL = kernelVariant('wide-head', 'd up to 256', [
  { text: NARROW_ARRAYS, replacement: WIDE_ARRAYS, what: 'its register arrays\' sizes' },
  { text: fragmentStruct(Q_FRAGMENTS, 8), replacement: fragmentArray(Q_FRAGMENTS), what: 'Q\'s 8 fragments' },
  { text: fragmentStruct(O_FRAGMENTS, 8), replacement: fragmentStruct(O_FRAGMENTS, 16), what: 'O\'s 8 fragments' },
]);

/**
 * The kernel where two subgroups share each 16 query rows (HALVES = 2): the same text with the team's sum of ℓ (the
 * kernel's line that sums a row's ℓ calls teamRowSum, which adds the teammate's sum). The kernel as written leaves that
 * sum out, since its code in the one-subgroup kernel, even where HALVES = 1 made it dead, kept the sinks variant at
 * d = 64 in local memory on an H200 and cost it 1.60 → 1.79 ms (docs/sdpa.md). Made once.
 */
const TEAM_KERNEL = kernelVariant('team', 'two subgroups per 16 rows', [
  {
    text: 'let lRow = l + subgroupShuffleXor(l, 1u);',
    replacement: 'let lRow = teamRowSum(l + subgroupShuffleXor(l, 1u), sBase, sOther);',
    what: 'its sum of ℓ',
  },
]);

/**
 * The kernel with O's rescale apart from the tile loop, for f16 tensors where one subgroup holds d ≤ 128: the loop
 * runs the tiles until one needs O rescaled first (some row's m_i moved past TAU, which is rare) and breaks out before
 * its P̃ V_j; below the loop, O is rescaled, that tile's P̃ V_j (and K_(j+1)'s staging) runs from a second copy of its
 * text, and the loop goes on at the next tile. With no rescale in the loop the compiler schedules each tile as if
 * there were none. On an H200 a first form, which went back into the loop for that P̃ V_j behind a flag, ran the f16
 * BERT batch 0.299 → 0.270 ms but Llama's d = 128 prefills 3-4% slower; this one ran the BERT batch 0.275 → 0.258 ms
 * against the first, the gpt-oss-shaped prefill with sinks 1.28 → 1.19, and Llama's d = 128 prefills 0.3-0.6% faster
 * than the rescale in the loop (docs/sdpa.md). The teams keep the rescale in the loop: made from their text this form
 * ran Gemma 2's softcap prefill 1.2% faster and Gemma's d = 256 prefill 1.2% slower on an H200 (docs/sdpa.md). The
 * wide-head variant (d above 128 without teams) and f32 tensors (two parts, flushed every few tiles) keep it too: not
 * measured. Made once, from the kernel's text.
 */
const RESCALE_OPENS = '    if (moved || flush) {\n';
const PRODUCTS_OPEN = '\n    // o += P̃ V_j';
const LOOP_ENDS = '    }\n    key0 = nextKey0;\n  }\n\n  // The row\'s O (o, plus oRow';
function rescaleApart(): KernelSource {
  const { code } = ATTENTION_MATRIX_KERNEL;
  const from = code.indexOf(RESCALE_OPENS);
  const to = code.indexOf(PRODUCTS_OPEN, from);
  if (from < 0 || to < 0) throw new Error('attention-matrix.wgsl lacks its rescale block as written; the rescale-apart variant cannot be made');
  const block = code.slice(from, to);
  const body = block.slice(RESCALE_OPENS.length, block.lastIndexOf('    }\n'));
  const ends = code.indexOf(LOOP_ENDS, to);
  if (ends < 0) throw new Error('attention-matrix.wgsl lacks its tile loop\'s end as written; the rescale-apart variant cannot be made');
  // The tile's P̃ V_j (and K_(j+1)'s staging with one K/V tile) to the loop's end: written again below the rescale.
  const tail = `${code.slice(to, ends)}    }\n    key0 = nextKey0;\n`;
  return kernelVariant('rescale-apart', 'O rescaled apart from the tile loop', [
    {
      text: '  for (var step = nBegin; step < nEnd; step++) {\n',
      replacement:
        '  // What a tile hands from its softmax to its P̃ V_j, outside the loop so that O\'s rescale can run apart from it.\n' +
        '  var alpha = 1.0;\n  var more = false;\n  var nextKey0 = 0u;\n' +
        '  var step = nBegin;\n  loop {\n  for (; step < nEnd; step++) {\n',
      what: 'its tile loop',
    },
    { text: '    let more = step + 1u < nEnd;\n    var nextKey0 = 0u;\n', replacement: '    more = step + 1u < nEnd;\n    nextKey0 = 0u;\n', what: 'its next tile' },
    { text: '    var alpha = 1.0;\n', replacement: '    alpha = 1.0;\n', what: 'its α' },
    { text: block, replacement: '    if (moved || flush) { break; }   // O is rescaled below the loop, then this tile\'s P̃ V_j added there\n', what: 'its rescale block' },
    {
      text: LOOP_ENDS,
      replacement: `    }\n    key0 = nextKey0;\n  }\n  if (step >= nEnd) { break; }\n  // Tile \`step\` needs O rescaled before its P̃ V_j: the rescale, then the rest of the tile, then the loop again.\n${body}${tail}  step++;\n  }\n\n  // The row's O (o, plus oRow`,
      what: 'its loop\'s end',
    },
  ]);
}
const RESCALE_APART_KERNEL = rescaleApart();

/**
 * The kernel with Q_i staged as it was before its rows were read ahead: each round of QR rows reads its vectors, then
 * writes them to KV. The kernel as written reads every round's vectors first (QIN per invocation), so that its rounds
 * wait on memory once. On an H200 (f16) that ran Llama's causal prefill 0.914-0.928 → 0.893-0.899 ms, Llama-3 GQA
 * 0.927-0.929 → 0.882-0.883, Gemma's d = 256 1.227 → 1.184 and the gpt-oss-shaped prefill with sinks (d = 64) 1.202 →
 * 1.166, but the BERT batch 0.260-0.262 → 0.300 (docs/sdpa.md): there the read-ahead takes the kernel from 128
 * registers to 144, 16 warps per unit to 12, and BERT's 3072 row blocks fill every unit many times over. GPT-2's
 * prefills, the same kernel with 192 row blocks (their keys split: four ways unmasked, seven causal), gained: causal
 * 0.050 → 0.046, unmasked 0.055 → 0.049. So the plan keeps the rounds at d ≤ 64 without score terms on full grids
 * (qByRoundsAt; one subgroup per 16 rows: teams forced there by tuning read ahead), with f32 tensors (two parts) and
 * in the wide-head variant, where reading ahead was not timed. tuning.matrixQAhead overrides the rule.
 */
const QIN_LINE = 'override QIN: u32 = BR * D4V / WG;    // vec4s of Q_i\'s rows per invocation (D / 8 / HALVES ≤ O4_MAX)\n';
// Where the kernel as written reads Q_i ahead: from its comment to the barrier after the rounds' writes to KV.
const Q_AHEAD_OPENS = '  // Every round\'s vectors read first';
const Q_AHEAD_ENDS = '    workgroupBarrier();\n    let mine';
const Q_BY_ROUNDS = `  for (var q0 = 0u; q0 < BR; q0 += QR) {
    if (q0 > 0u) { workgroupBarrier(); }   // every subgroup has its fragments of the last round
    for (var e = t; e < QR * D4V; e += WG) {
      let row = q0 + e / D4V;
      var x = vec4<f32>(0.0);
      if (i * BR + row < Lq) { x = unpack(q[qBase + (i * BR + row) * params.qRow + e % D4V]) * qScale; }
      put4((e / D4V) * KS + 4u * (e % D4V), x, QL);
    }
`;
function qByRounds(base: KernelSource): KernelSource {
  const from = base.code.indexOf(Q_AHEAD_OPENS);
  const to = base.code.indexOf(Q_AHEAD_ENDS, from);
  if (from < 0 || to < 0) throw new Error(`${base.label} lacks its staging of Q_i as written; the Q-by-rounds variant cannot be made`);
  return kernelVariant('Q-by-rounds', 'Q_i read round by round', [
    { text: QIN_LINE, replacement: '', what: 'QIN' },
    { text: base.code.slice(from, to), replacement: Q_BY_ROUNDS, what: 'its staging of Q_i' },
  ], base);
}
const TWO_PART_KERNEL = qByRounds(ATTENTION_MATRIX_KERNEL);
const WIDE_HEAD_ROUNDS_KERNEL = qByRounds(WIDE_HEAD_KERNEL);
const RESCALE_APART_ROUNDS_KERNEL = qByRounds(RESCALE_APART_KERNEL);

/**
 * Keys per tile (BC in the kernel) from d = 65 to 128, and with two parts (f32 tensors) at every head size: 16 keys ran
 * Llama's f16 d = 128 prefills 3-5% slower on the H100 (docs/sdpa.md).
 */
const MATRIX_BC = 32;
/**
 * Keys per tile at d ≤ 64 with one part (f16 tensors). While the kernel's fragments sat in local memory, 64 keys were
 * the fastest where every score is computed; since they left it, on the H100 (f16, docs/sdpa.md) the BERT batch ran
 * 0.541 ms with 64 keys, 0.357 with 32 and 0.293 with 16, the causal GPT-2 prefill 0.063 with 32 and 0.057 with 16.
 */
const NARROW_HEAD_BC = 16;
/** Most subgroups of 16 query rows per workgroup; fewer where their workgroup memory does not fit. */
const MAX_SUBGROUPS = 4;
/**
 * Tiles between flushes of O to f32 registers with two parts (fp32-grade: the sum leaves the matrix units every 8
 * tiles, as rung 24's did); with one part O stays in the matrix units and is rescaled in place (rung 25's FLUSH = 0).
 */
const TWO_PART_FLUSH = 8;
/** The largest head size with one part: D/16 fragments of Q and of O per subgroup (the kernel's DK_MAX = 16). */
const MATRIX_MAX_HEAD_SIZE = 256;
/** The largest with two parts (f32 tensors), whose high and low fragments of Q double the registers. */
const TWO_PART_MAX_HEAD_SIZE = 128;
/** Keys per tile above d = 128 where each subgroup holds all of d, where 32-key tiles of K and V would leave room for fewer subgroups. */
const WIDE_HEAD_BC = 16;
/**
 * Above d = 128 with f16 tensors and d a multiple of 32, two subgroups share each 16 query rows, each holding half of
 * d's columns of Q and O (the kernel's HALVES = 2): d = 256 then takes d = 128's registers (192 per invocation on an
 * H200, against 255 and 384 bytes of local memory), in 32-key tiles and 4 teams of 2 subgroups (64 rows) per
 * workgroup where that fits the workgroup memory, else 16-key tiles and 2 teams. On an H200 (f16, Gemma's causal
 * prefill 1×16/8×4096×256) it ran 1.947 ms with every subgroup holding all of d, 1.494 with teams in 16-key tiles, 1.383 with
 * 32-key tiles and 4 teams (docs/sdpa.md).
 */
const TEAM_BC = 32;
/** A workgroup's shape: its K/V tiles in workgroup memory, subgroups, columns of O per round, and bytes. */
interface MatrixLayout {
  readonly KV_TILES: number;
  readonly NSG: number;
  readonly OW: number;
  readonly bytes: number;
}

/**
 * Two K/V tiles side by side, or one (V_j in K_j's place, one more barrier per tile), whichever keeps more subgroups
 * on a compute unit, counted as if each unit had the adapter's workgroup memory limit: on the H100 it has exactly that
 * (48 KiB: `resident-workgroups` in experiments/, docs/sdpa.md). Llama's d = 128 takes 31,760 bytes with two tiles and
 * 23,056 with one, one workgroup per unit against two, and ran 3.12 → 2.58 ms (f16, causal); BERT's 64-key tiles (its
 * default then) stayed one workgroup either way and lost 5% with the barrier, so a tie keeps two.
 */
function chooseKvTiles(two: MatrixLayout, one: MatrixLayout, limit: number): MatrixLayout {
  const resident = ({ NSG, bytes }: MatrixLayout): number => NSG * Math.floor(limit / bytes);
  return resident(one) > resident(two) ? one : two;
}

/**
 * Which exact tests the kernel needs for the tiles that need them (its EXACT, through exactTestsCompiled): 0 where no
 * tile can need one (no mask, no block mask, no cache lengths, Lk a multiple of BC, and a band that shows every row
 * every key: left ≥ Lk − 1 and right ≥ Lq − 1 from the diagonal i + Lk − Lq), 1 where only the band and Lk are tested
 * (no element mask and no block mask read per element), else 2 (maskedScore). On an H200 the band's own test ran
 * Llama's causal f16 prefill 3.5% faster than maskedScore (docs/sdpa.md).
 */
export function exactTests(problem: SdpaProblem, BC: number, blockTiles: boolean): 0 | 1 | 2 {
  const { Lq, Lk } = problem.dims;
  const perElement = problem.mask !== undefined || (problem.blockMask !== undefined && !blockTiles);
  if (perElement) return 2;
  const everyKey = problem.left >= Lk - 1 && problem.right >= Lq - 1;
  return problem.blockMask === undefined && problem.cacheLengths === undefined && Lk % BC === 0 && everyKey ? 0 : 1;
}

/**
 * The EXACT the kernel is compiled with: exactTests' choice, except that at d ≤ 64 a problem that needs no test keeps
 * maskedScore's code (2). On an H200 (f16) compiling the tests out ran Llama's d = 128 unmasked prefill 0.7% faster
 * (1.7539 against 1.7664 ms), but GPT-2's d = 64 unmasked prefill 7% slower (0.0580 against 0.0538) and the BERT batch
 * 1% slower (0.2584 against 0.2550): docs/sdpa.md.
 */
export function exactTestsCompiled(exact: 0 | 1 | 2, d: number): 0 | 1 | 2 {
  return exact === 0 && d <= 64 ? 2 : exact;
}

/**
 * Q_i round by round at d ≤ 64 without score terms on a full grid: at least as many row blocks (all B batches) as the
 * key splits aim for, so that keySplits over the problem without its band gives 1 (640 row blocks: BERT's 3072, not
 * GPT-2's 192). There the registers the read-ahead costs lose workgroups per unit; on shorter grids the wait it saves
 * is worth more (above). This counts the grid, not the ranges the host runs: it splits banded and block-masked
 * problems by their own counts (tiled-host.ts), and the crossover between 192 and 3072 row blocks was not measured.
 */
function qByRoundsAt(problem: SdpaProblem, BR: number, BC: number): boolean {
  const { B, Hq, Lq, Lk, d } = problem.dims;
  return d <= 64 && !hasScoreTerms(problem) && keySplits(B * Hq * Math.ceil(Lq / BR), Math.ceil(Lk / BC)) === 1;
}

/** The kernel's text for a plan: teams, wide heads, O rescaled apart, and Q_i read ahead or round by round (above). */
function kernelFor(HALVES: number, dh: number, apart: boolean, qByRoundsApart: boolean): KernelSource {
  if (HALVES === 2) return TEAM_KERNEL;
  if (dh > 128) return WIDE_HEAD_ROUNDS_KERNEL;
  if (apart) return qByRoundsApart ? RESCALE_APART_ROUNDS_KERNEL : RESCALE_APART_KERNEL;
  return TWO_PART_KERNEL;
}

/**
 * The kernel's plan for `problem`, or why it cannot run it. f16 tensors take one f16 part per operand (nothing is lost
 * in the conversion); f32 tensors take two (high and low, three products each: fp32-grade, as rung 17). `tuning` sets
 * sizes instead of the plan's own, for experiments (the bench's FA_SDPA_TUNING).
 */
export function matrixPlan(problem: SdpaProblem, gpu: GpuContext, lse: boolean, dtype: TensorType, tuning?: DecodeTuning): TiledPlan | string {
  const { d } = problem.dims;
  const unavailable = matrixUnavailable(gpu);
  if (unavailable) return unavailable;
  if (problem.blockMask && problem.cacheLengths) return 'a block mask with cache lengths (the tile lists are built for Lk keys)';
  if (problem.mods) return 'score and mask functions (scoreMod, maskMod) are attention-fp32\'s';
  if (problem.dims.dv !== undefined) return `dv = ${problem.dims.dv} ≠ d = ${d}: a V head size of its own is attention-fp32's and attention-decode's`;
  if (d % 16 !== 0) return `d = ${d} is not a multiple of 16 (the matrix fragments are 16 wide)`;
  if (d > MATRIX_MAX_HEAD_SIZE) return `d = ${d} is above the matrix kernel's ${MATRIX_MAX_HEAD_SIZE}`;
  const PARTS = dtype === 'f16' ? 1 : 2;
  const terms = hasScoreTerms(problem);
  if (PARTS === 2 && terms) {
    return 'softcap, ALiBi slopes and sinks with f32 tensors are attention-fp32\'s (the matrix kernel takes them with f16 tensors)';
  }
  if (PARTS === 2 && d > TWO_PART_MAX_HEAD_SIZE) return `d = ${d} with f32 tensors is above the matrix kernel's ${TWO_PART_MAX_HEAD_SIZE} for two f16 parts (f16 tensors run to ${MATRIX_MAX_HEAD_SIZE})`;
  const limit = gpu.report.limits.maxComputeWorkgroupStorageSize;
  const HALVES = tuning?.matrixHalves ?? (PARTS === 1 && d > 128 && d % 32 === 0 ? 2 : 1);
  if (HALVES !== 1 && HALVES !== 2) return `tuning.matrixHalves is ${HALVES}; give 1 or 2`;
  if (HALVES === 2 && (PARTS === 2 || d % 32 !== 0)) return 'tuning.matrixHalves 2 takes f16 tensors and d a multiple of 32';
  const bytesAt = (BC: number, NSG: number, OW: number, KV_TILES = 2): number => kernelWorkgroupBytes(ATTENTION_MATRIX_KERNEL.code, { D: d, NSG, PARTS, OW, BC, KV_TILES, HALVES });
  const dh = d / HALVES;   // the columns of Q and O one subgroup holds
  // Columns of O per round through S tiles BC keys wide (16 where BC does not divide a subgroup's columns).
  const narrowColumns = (BC: number): number => (dh % BC === 0 ? Math.min(BC, dh) : 16);
  // With teams, 32-key tiles and 4 teams where they fit the workgroup memory (V in K's place), else 16-key tiles.
  const teamsFit = HALVES === 2 && bytesAt(TEAM_BC, 2 * MAX_SUBGROUPS, narrowColumns(TEAM_BC), 1) <= limit;
  const BC = tuning?.matrixKeysPerTile ?? (d > 128 ? (teamsFit ? TEAM_BC : WIDE_HEAD_BC) : d <= 64 && PARTS === 1 ? NARROW_HEAD_BC : MATRIX_BC);
  const maxSubgroups = teamsFit && BC === TEAM_BC ? 2 * MAX_SUBGROUPS : MAX_SUBGROUPS;
  const FLUSH = tuning?.matrixFlush ?? (PARTS === 2 ? TWO_PART_FLUSH : 0);
  if (![16, 32, 64].includes(BC)) return `tuning.matrixKeysPerTile is ${BC}; give 16, 32 or 64`;
  if (tuning?.matrixSubgroups !== undefined && ![1, 2, 4, 8].includes(tuning.matrixSubgroups)) return `tuning.matrixSubgroups is ${tuning.matrixSubgroups}; give 1, 2, 4 or 8`;
  if (tuning?.matrixKvTiles !== undefined && ![1, 2].includes(tuning.matrixKvTiles)) return `tuning.matrixKvTiles is ${tuning.matrixKvTiles}; give 1 or 2`;
  if (tuning?.matrixColumnsPerRound !== undefined && (dh % tuning.matrixColumnsPerRound !== 0 || tuning.matrixColumnsPerRound % 16 !== 0)) {
    return `tuning.matrixColumnsPerRound is ${tuning.matrixColumnsPerRound}; give a multiple of 16 that divides ${HALVES === 2 ? 'd / 2' : 'd'}`;
  }
  const layout = (KV_TILES: number): MatrixLayout => {
    const subgroups = (OW: number): number => {
      let NSG = tuning?.matrixSubgroups ?? maxSubgroups;
      if (NSG < HALVES) NSG = HALVES;
      while (NSG > HALVES && bytesAt(BC, NSG, OW, KV_TILES) > limit) NSG /= 2;
      return NSG;
    };
    // S tiles BC columns wide (O through them in d / OW rounds) with one part: at d = 64 that is 23.0 KiB of workgroup
    // memory, and BERT's f16 batch ran 0.627 → 0.549 ms on the H100 with it. With two parts, tiles d columns wide (O in
    // one round) unless narrow ones fit more subgroups (3.0× faster at Llama's d = 128 with f32 tensors; docs/sdpa.md).
    const narrow = narrowColumns(BC);
    const OW = tuning?.matrixColumnsPerRound ?? (PARTS === 1 || subgroups(narrow) > subgroups(d) ? narrow : d);
    const NSG = subgroups(OW);
    return { KV_TILES, NSG, OW, bytes: bytesAt(BC, NSG, OW, KV_TILES) };
  };
  const { KV_TILES, NSG, OW, bytes } = tuning?.matrixKvTiles !== undefined ? layout(tuning.matrixKvTiles) : chooseKvTiles(layout(2), layout(1), limit);
  if (bytes > limit) return `d = ${d} needs ${bytes} bytes of workgroup memory, over this GPU's ${limit}`;
  const BR = (16 * NSG) / HALVES;
  const apart = PARTS === 1 && HALVES === 1 && dh <= 128;   // O rescaled apart from the tile loop (RESCALE_APART_KERNEL)
  const qAhead = tuning?.matrixQAhead;
  if (qAhead !== undefined && qAhead !== 0 && qAhead !== 1) return `tuning.matrixQAhead is ${qAhead}; give 0 or 1`;
  // Outside the rescale-apart kernel the staging is fixed: teams read ahead, f32 tensors and wide heads by rounds.
  const fixedAhead = HALVES === 2 ? 1 : 0;
  if (qAhead !== undefined && !apart && qAhead !== fixedAhead) {
    return `tuning.matrixQAhead is ${qAhead}; this plan's kernel reads Q_i ${fixedAhead ? 'ahead' : 'round by round'} only (the choice is made with f16 tensors, d ≤ 128 and one subgroup per 16 rows)`;
  }
  const blocks = problem.blockMask;
  const blockTiles = blocks !== undefined && blocks.rows % BR === 0 && blocks.keys % BC === 0;
  return {
    id: 'attention-matrix',
    kernel: forTensorType(kernelFor(HALVES, dh, apart, qAhead === undefined ? qByRoundsAt(problem, BR, BC) : qAhead === 0), dtype),
    dtype,
    // TERMS only where softcap, ALiBi or sinks are given, so that the plain kernel's constants stay as they were.
    constants: { D: d, NSG, PARTS, OW, BC, FLUSH, CW: COMBINE_WORKGROUP, EXACT: exactTestsCompiled(exactTests(problem, BC, blockTiles), d), ...(KV_TILES === 1 ? { KV_TILES } : {}), ...(HALVES === 2 ? { HALVES } : {}), ...(terms ? { TERMS: 1 } : {}) },
    switches: { mask: problem.mask ? 1 : 0, blocks: blocks ? 1 : 0, blockTiles: blockTiles ? 1 : 0, writeLse: lse ? 1 : 0, cached: problem.cacheLengths ? 1 : 0, ...scoreTermSwitches(problem) },
    BR,
    BC,
    workgroupBytes: bytes,
    summary: `${NSG} subgroups${HALVES === 2 ? ' (two per 16 rows, each with half of d)' : ''}, ${BC}-key tiles${KV_TILES === 1 ? ' (V in K\'s place)' : ''}, ${PARTS === 1 ? 'f16 products' : 'high and low f16 parts'}${OW < d ? `, O flushed ${OW} columns at a time` : ''}${apart ? ', O rescaled apart from the tile loop' : ''}`,
  };
}
