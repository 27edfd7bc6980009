// Score and mask functions in attention-fp32 (mod-source.ts appends this file, then the caller's functions, to the
// kernel, and makes a few one-line changes to its loop: see modKernel). The caller's score_mod takes and returns
// natural-unit scores, so the kernel's base-2 scores are converted around the call; mask_mod joins applyMask's
// exclusions. With a mask function, the pre-pass `modTiles` lists for each (batch, head, query tile) the key tiles in
// which some score is visible (the block-mask path's tile lists), with the bit MOD_PARTIAL on the tiles where some
// are not: only those test each score. A partial tile whose visible scores are exactly those on or below the causal
// diagonal (a document mask's, causal within each document) also gets MOD_DIAGONAL, and its scores take the
// diagonal's test instead of mask_mod: four keys at a time, with no reads of the function's buffers.

struct ModParams {
  listBase: u32,           // where the tiles of the lists begin in tileLists: after 2 u32s per (batch, head, query tile)
  userBlocks: u32,         // 1: the caller's block mask is bound too (blockKept)
  tileSlots: u32,          // ⌈Lk / BC⌉: the slots of each (batch, head, query tile) before they are packed
  lists: u32,              // 1: modTiles writes the tile lists; 0: every tile tests each score
}

@group(1) @binding(0) var<uniform> modParams: ModParams;

const MOD_PARTIAL: u32 = 0x80000000u;   // a listed tile where some score is not visible
const MOD_DIAGONAL: u32 = 0x40000000u;  // a partial tile whose visible scores are those on or below the causal diagonal
const MOD_SKIPPED: u32 = 0xffffffffu;   // a slot whose tile has no visible score, before the lists are packed
const MOD_LN2: f32 = 0.6931471805599453;
const MOD_LOG2E: f32 = 1.4426950408889634;
const MOD_SCORE_LIMIT: f32 = 1.8446744073709552e+19;  // 2^64: the most |score_mod(…)| taken (−∞ kept)

var<private> modBatch: u32;    // the workgroup's batch (in the whole problem) and query head, for score_mod
var<private> modHead: u32;
var<private> modDiagonal: bool;   // the tile the loop is on is MOD_DIAGONAL

// A score function's result as the kernel takes it: within ±MOD_SCORE_LIMIT, −∞ kept (it excludes the key).
fn modHeld(x: f32) -> f32 {
  if (bitcast<u32>(x) == 0xff800000u) { return x; }
  return clamp(x, -MOD_SCORE_LIMIT, MOD_SCORE_LIMIT);
}

// Scores s (base 2) of row i with keys j0 .. j0 + 3 through score_mod, in natural units; rows past Lq and keys past
// the batch's Lk keep theirs (they are excluded after).
fn modScores(s: vec4<f32>, i: u32, j0: u32, Lk: u32) -> vec4<f32> {
  if (!MOD_SCORES) { return s; }
  var r = s;
  for (var x = 0u; x < 4u; x++) {
    if (i < params.Lq && j0 + x < Lk) { r[x] = modHeld(score_mod(s[x] * MOD_LN2, modBatch, modHead, i, j0 + x)) * MOD_LOG2E; }
  }
  return r;
}

// Keys j of row i still kept after mask_mod: on a MOD_DIAGONAL tile, those on or below the causal diagonal
// (j ≤ i + Lk − Lq, the band's alignment), which the pre-pass found to be mask_mod's there; elsewhere mask_mod's.
fn modKept(kept: vec4<bool>, b: u32, hq: u32, i: u32, j: vec4<u32>, Lk: u32) -> vec4<bool> {
  if (modDiagonal) { return kept & (vec4<i32>(j) <= vec4<i32>(i32(i) + i32(Lk) - i32(params.Lq))); }
  return vec4<bool>(kept.x && mask_mod(b, hq, i, j.x), kept.y && mask_mod(b, hq, i, j.y), kept.z && mask_mod(b, hq, i, j.z),
                    kept.w && mask_mod(b, hq, i, j.w));
}

// The flags of entry n of the workgroup's list (the tile the step visits), read once per tile: MOD_PARTIAL where it
// tests each score for mask_mod (the tiles the pre-pass marked, or every tile where it wrote no lists), MOD_DIAGONAL
// where that test is the causal diagonal's.
fn modTileFlags(n: u32, listStart: u32) -> u32 {
  if (!MOD_MASKS) { return 0u; }
  if (modParams.lists == 0u) { return MOD_PARTIAL; }
  return tileLists[listStart + n] & (MOD_PARTIAL | MOD_DIAGONAL);
}

// The pre-pass: one workgroup per (batch, query head, query tile) of the run. Each invocation classifies key tiles
// by the band, the caller's block mask and mask_mod over the tile's rows and keys; then invocation 0 packs the
// visible ones into the list and writes its start and count where the kernel reads them.
@compute @workgroup_size(64)
fn modTiles(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
            @builtin(local_invocation_index) t: u32) {
  let Lq = params.Lq;
  let Lk = params.Lk;
  let Tr = (Lq + BR - 1u) / BR;
  let slots = modParams.tileSlots;
  let w = wid.y * nwg.x + wid.x;
  let pair = w / Tr;
  let i = w % Tr;
  if (pair >= params.bh) { return; }
  let b = pair / params.Hq + params.batch0;
  let hq = pair % params.Hq;
  let entry = (b * params.Hq + hq) * Tr + i;
  let base = modParams.listBase + entry * slots;
  let rowFirst = i * BR;
  let rowLast = min(Lq, rowFirst + BR) - 1u;
  for (var j = t; j < slots; j += 64u) {
    var seen = false;
    var whole = true;
    var diagonal = true;   // every score visible exactly where it is on or below the causal diagonal
    let keyEnd = min(Lk, (j + 1u) * BC);
    for (var row = rowFirst; row <= rowLast; row++) {
      for (var key = j * BC; key < keyEnd; key++) {
        var kept = i32(key) >= bandFirst(row, Lk) && i32(key) <= bandLast(row, Lk);
        if (kept && modParams.userBlocks == 1u) { kept = blockKept(b, hq, row, key); }
        if (kept) { kept = mask_mod(b, hq, row, key); }
        seen = seen || kept;
        whole = whole && kept;
        diagonal = diagonal && kept == (i32(key) <= i32(row) + i32(Lk) - i32(Lq));
      }
    }
    tileLists[base + j] = select(MOD_SKIPPED, select(j | MOD_PARTIAL | select(0u, MOD_DIAGONAL, diagonal), j, whole), seen);
  }
  storageBarrier();
  if (t == 0u) {
    var n = 0u;
    for (var j = 0u; j < slots; j++) {
      let x = tileLists[base + j];
      if (x != MOD_SKIPPED) {
        tileLists[base + n] = x;
        n++;
      }
    }
    tileLists[2u * entry] = base;
    tileLists[2u * entry + 1u] = n;
  }
}
