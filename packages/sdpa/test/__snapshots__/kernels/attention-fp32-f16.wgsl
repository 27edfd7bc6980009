// H = 2, 2 rows per group, Bc = 32, 128 invocations; override constants:
//   D = 64
//   H = 2
//   BC = 32
//   KEYS = 8
//   WG = 128
//   PREFETCH = 0
//   CW = 64
//   ROWS = 2
//   GENERAL = 1
// H = 8, 4 rows per group, Bc = 16, 128 invocations; override constants:
//   D = 128
//   H = 8
//   BC = 16
//   KEYS = 8
//   WG = 128
//   PREFETCH = 1
//   CW = 64
//   ROWS = 4
//   GENERAL = 1

// attention-fp32: lean-loop's kernel (rung 20) for attention as models call it: heads and grouped KV heads in either
// layout, Lq ≠ Lk, causal and windowed bands, cache lengths, element and block masks, and each row's log-sum-exp.
//
// Promoted from rung 20 lean-loop (packages/optimized/src/20-lean-loop, a lesson that stays as it landed): its row
// groups of H invocations on two rows with Q, S, P̃ and O in registers, its steps of multiply-add chains, each step's
// P̃·V summed apart for the error bound, and rung 19's key ranges merged by `combine`; from rung 21 four-rows, four
// rows per group where C ≤ 4 (ROWS = 4, the host's choice at d = 128), so that each vec4 read from workgroup memory
// feeds twice the multiply-adds. This file is the product's and is improved in place; docs/sdpa.md records what it
// took from which rung and what changed since, and has its measurements.
//
// Changed from lean-loop, what a model's attention needs and nothing else (docs/sdpa.md):
// - Q, K, V and O are separate tensors, [B, H, L, d] or [B, L, H, d]: each row is found through per-tensor strides
//   (batch, head, row) in the uniform (with where K and V start, and O's own strides, for hw4's file read in place),
//   and query head h reads KV head ⌊h / GROUP⌋, so grouped heads need no copy.
// - A workgroup owns BR query rows of one (batch, head). Its rows see keys in the band [i + Lk − Lq − left,
//   i + Lk − Lq + right] only, so the tile loop runs from the first tile any of its rows sees to the last: a causal
//   prefill skips the tiles above the diagonal and costs about half.
// - With a block mask (`blocks` = 1) the host lists, for each (batch, head, query tile), the key tiles in its band that
//   some kept block touches; the workgroup runs through its list (its length read once with workgroupUniformLoad, so
//   the barriers stay in uniform control flow); the prefetch reads the next tile of the list.
// - Inside a tile that a band edge crosses, or with an element mask (`mask` = 1, additive, in base 2 from the host,
//   EXCLUDED for −∞ and for false), or a block mask whose blocks are not whole tiles, each score gets its exact test
//   (applyMask); other tiles run lean-loop's step unchanged. A finite mask value, however large, stays a finite score
//   above LOWEST (tiled-interface.wgsl), so only −∞ and false exclude.
// - A row that sees no key keeps m_i = LOWEST and gets O = 0 and log-sum-exp −∞.
// - Where B·Hq·⌈Lq/BR⌉ workgroups are too few for the GPU, each row block's tiles are split into `splits` ranges, one
//   workgroup each, merged by `combine` (lean-loop's key ranges, with ranges of the row block's own tiles).
// - With cache lengths (`cached` = 1) each workgroup reads its batch's length once and runs its band over those keys.
// - Q, K, V and O are read and written as `Packed`: f32, or in the host's f16 variant f16 pairs (see below).
// - Softcap and ALiBi (`softcap`, `alibi` = 1) change every score after the group's sum and before the mask, in
//   FlashAttention-2's order (scoreTerms): c·tanh(s/c) in natural units, then − slope_h·|i + Lk − Lq − j|; with sinks
//   (`sinks` = 1) each row's ℓ counts its head's sink logit once, where O is normalized (finish, or `combine`).
// - A problem with none of the above (GENERAL = 0: no band, mask, cache lengths, softcap, ALiBi or sinks) compiles
//   without their tests, so it keeps lean-loop's registers and prologue.
// - V and O may have their own head size DV (DeepSeek's MLA: D = 192, DV = 128): V_j's rows and O's columns are DV
//   wide, Q's and K_j's D. DV defaults to D, where every DV expression below is the D one it replaced.

enable subgroups;

// The element type of Q, K, V and O in memory: f32, or f16 in the variant the host makes by replacing this line (and
// enabling f16). Everything is computed in f32; values are converted as they are loaded and stored.
// How Q, K, V and O are held in memory: four elements at a time as `Packed`, unpacked to float32 on load. The host's
// f16 variant replaces these three lines (kernel-support.ts): two u32s of f16 pairs, unpacked with unpack2x16float,
// so f16 tensors need no shader-f16, and each load is one 8-byte read.
alias Packed = vec2<u32>;
fn unpack(x: Packed) -> vec4<f32> { return vec4<f32>(unpack2x16float(x.x), unpack2x16float(x.y)); }
fn pack(x: vec4<f32>) -> Packed { let c = clamp(x, vec4<f32>(-65504.0), vec4<f32>(65504.0)); return vec2<u32>(pack2x16float(c.xy), pack2x16float(c.zw)); }

override D: u32;          // head size of Q and K, a multiple of 4
override DV: u32 = D;     // head size of V and O, a multiple of 4
override H: u32;          // invocations per row group: a power of two, at most the subgroup size
override BC: u32;         // keys per K/V tile, a multiple of KEYS
override KEYS: u32;       // keys per step of the inner loop: 8, or 16 when H = 1
override WG: u32;         // invocations per workgroup, a multiple of H
override PREFETCH: u32;   // 1: load the next tile into registers while this one computes
override CW: u32;         // invocations per workgroup of `combine`
override ROWS: u32;       // query rows per row group: 2, or 4 (four-rows', rung 21) where C ≤ 4 and KEYS = 8
override GENERAL: u32;    // 0: the plain problem (no band, element or block mask, cache lengths, softcap, ALiBi or
                          // sinks; rows of K and V D/4 vec4s apart): their tests fold away, K/V tiles read as one run
override RANGE_MAJOR: u32 = 0u;  // 1: workgroups go range by range, every row block's range 0 first (key-ranges.ts)

const C_MAX: u32 = 8u;    // most vec4 columns of a row per invocation: D/4 (and DV/4) over H, rounded up
const LD_MAX: u32 = 8u;   // most vec4s of K_j (and of V_j) one invocation loads per tile

// Params, the bindings (q, k, v, O, params, mask, blockFlags, lse, tileLists, Opart, ML), LOWEST, EXCLUDED, bandFirst,
// bandLast, blockKept, headTerms, softcapped, scoreTerms, sinkTotal, sinkLse and naturalLse are tiled-interface.wgsl's,
// shared with the other tiled kernel and appended by tiledKernel (tiled-host.ts), as is `combine` (combine.wgsl).

override D4K: u32 = D / 4u;                       // vec4s per row of Q and K
override D4V: u32 = DV / 4u;                      // vec4s per row of V and O (combine's name)
override C: u32 = (D / 4u + H - 1u) / H;          // vec4 columns of Q per invocation
override CV: u32 = (DV / 4u + H - 1u) / H;        // vec4 columns of O per invocation
override KS: u32 = H * C;                         // row stride of K_j: D/4 rounded up to H·C, padded with 0
override VS: u32 = H * CV;                        // row stride of V_j: DV/4 rounded up to H·CV, padded with 0
override PAD: u32 = KS - D4K;                     // padding vec4s per row of K_j (0 when H divides D/4)
override PADV: u32 = VS - D4V;                    // padding vec4s per row of V_j
override BR: u32 = WG / H * ROWS;                 // query rows per workgroup: ROWS per row group
override LD: u32 = (BC * D / 4u + WG - 1u) / WG;  // vec4s of K_j per invocation per tile
override LDV: u32 = (BC * DV / 4u + WG - 1u) / WG;  // vec4s of V_j per invocation per tile
override LDA: u32 = max(LD, LDV);                 // loads of both per invocation per tile

var<workgroup> Kj: array<vec4<f32>, BC * KS>;
var<workgroup> Vj: array<vec4<f32>, BC * VS>;
var<workgroup> listShared: vec2<u32>;
var<workgroup> lengthShared: u32;

fn max4(v4: vec4<f32>) -> f32 { return max(max(v4.x, v4.y), max(v4.z, v4.w)); }

fn inRow(col: u32) -> bool { return PAD == 0u || col < D4K; }
fn inRowV(col: u32) -> bool { return PADV == 0u || col < D4V; }

// Vec4 e of a K tile (row e / D4K, column e % D4K) in workgroup memory, whose rows are KS vec4s long.
fn onChip(e: u32) -> u32 {
  if (PAD == 0u) { return e; }
  return (e / D4K) * KS + e % D4K;
}

// Vec4 e of a V tile (row e / D4V, column e % D4V) in workgroup memory, whose rows are VS vec4s long.
fn onChipV(e: u32) -> u32 {
  if (PADV == 0u) { return e; }
  return (e / D4V) * VS + e % D4V;
}

// A stride of V from K's (batch, head or row, in vec4s): in either layout every stride of K is a whole number of its
// rows' D/4 vec4s, and V's is the same number of DV/4 (the uniform holds K's only; DV = D reads K's as before).
fn vStride(kStride: u32) -> u32 {
  if (DV == D) { return kStride; }
  return kStride / D4K * D4V;
}

// s + q · (k0, k1, k2, k3) for four keys at once, as 4 chained multiply-adds.
fn qk4(s: vec4<f32>, qv: vec4<f32>, k0: vec4<f32>, k1: vec4<f32>, k2: vec4<f32>, k3: vec4<f32>) -> vec4<f32> {
  var r = fma(vec4<f32>(qv.x), vec4<f32>(k0.x, k1.x, k2.x, k3.x), s);
  r = fma(vec4<f32>(qv.y), vec4<f32>(k0.y, k1.y, k2.y, k3.y), r);
  r = fma(vec4<f32>(qv.z), vec4<f32>(k0.z, k1.z, k2.z, k3.z), r);
  return fma(vec4<f32>(qv.w), vec4<f32>(k0.w, k1.w, k2.w, k3.w), r);
}

// o + P̃ for four keys times their rows of V_j (one vec4 column), as 4 chained multiply-adds.
fn addPV(o: vec4<f32>, p: vec4<f32>, v0: vec4<f32>, v1: vec4<f32>, v2: vec4<f32>, v3: vec4<f32>) -> vec4<f32> {
  return fma(vec4<f32>(p.w), v3, fma(vec4<f32>(p.z), v2, fma(vec4<f32>(p.y), v1, fma(vec4<f32>(p.x), v0, o))));
}

const TAU: f32 = 8.0;          // how far a score may pass m_i before O and ℓ are rescaled (P̃ ≤ 2^TAU)

// One shuffle level of a row group's sum: each of two rows' scores of keys c .. c + 7 plus its partner's at distance `lane`.
fn sumShares(a0: ptr<function, vec4<f32>>, b0: ptr<function, vec4<f32>>, a1: ptr<function, vec4<f32>>, b1: ptr<function, vec4<f32>>, lane: u32) {
  *a0 += subgroupShuffleXor(*a0, lane);
  *b0 += subgroupShuffleXor(*b0, lane);
  *a1 += subgroupShuffleXor(*a1, lane);
  *b1 += subgroupShuffleXor(*b1, lane);
}

// Where vec4 e of the K tile that starts at key key0 lies, from its head's start: one run of the tile's vec4s in
// the plain problem (whose rows are dense), each row found through its stride otherwise.
fn kvAt(key0: u32, e: u32) -> u32 {
  if (GENERAL == 0u) { return key0 * D4K + e; }
  return (key0 + e / D4K) * params.kvRow + e % D4K;
}

// The same for vec4 e of the V tile, from its head's start (vBase).
fn vAt(key0: u32, e: u32) -> u32 {
  if (DV == D) { return kvAt(key0, e); }
  if (GENERAL == 0u) { return key0 * D4V + e; }
  return (key0 + e / D4V) * vStride(params.kvRow) + e % D4V;
}

// Scores of tile keys c .. c + 3, LOWEST for those at or past `keys` (the keys of the tile that exist).
fn pastKeys(s: vec4<f32>, c: u32, keys: u32) -> vec4<f32> {
  return select(s, vec4<f32>(LOWEST), vec4<u32>(c, c + 1u, c + 2u, c + 3u) >= vec4<u32>(keys));
}

// Tile `step` of a workgroup's tiles: jFirst + step in its band, or entry `step` of its list under a block mask.
fn tileAt(step: u32, jFirst: u32, listStart: u32) -> u32 {
  if (GENERAL == 1u && params.blocks == 1u) { return tileLists[listStart + step]; }
  return jFirst + step;
}

// Scores s of row i with keys j0 .. j0 + 3: the additive mask added (the host's base-2 values, so that a finite mask
// value, however large, stays a finite score: tiled-interface.wgsl), LOWEST where the key is excluded. The band's test
// is one vector test for the four keys; the masks are read key by key, only for keys still kept (a key past Lk has no
// entry in them).
fn applyMask(s: vec4<f32>, b: u32, hq: u32, i: u32, j0: u32, Lk: u32) -> vec4<f32> {
  let j = vec4<u32>(j0) + vec4<u32>(0u, 1u, 2u, 3u);
  var kept = j < vec4<u32>(Lk);
  if (GENERAL == 1u) {
    kept = kept & (vec4<i32>(j) >= vec4<i32>(bandFirst(i, Lk))) & (vec4<i32>(j) <= vec4<i32>(bandLast(i, Lk)));
  }
  var r = s;
  // Rows past Lq (padding of the last row block) read neither mask: their flags and values are not in the buffers.
  if (GENERAL == 1u && i < params.Lq && params.blocks == 1u && params.blockTiles == 0u) {
    kept = vec4<bool>(kept.x && blockKept(b, hq, i, j.x), kept.y && blockKept(b, hq, i, j.y),
                      kept.z && blockKept(b, hq, i, j.z), kept.w && blockKept(b, hq, i, j.w));
  }
  if (GENERAL == 1u && i < params.Lq && params.mask == 1u) {
    for (var x = 0u; x < 4u; x++) {
      if (kept[x]) {
        let add = mask[b * params.maskB + hq * params.maskH + i * params.maskI + j[x] * params.maskJ];
        kept[x] = add > EXCLUDED;
        r[x] += select(0.0, add, kept[x]);
      }
    }
  }
  return select(vec4<f32>(LOWEST), r, kept);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) t: u32) {
  let Lq = params.Lq;
  let Tr = (Lq + BR - 1u) / BR;
  let w = wid.y * nwg.x + wid.x;     // one workgroup per (batch, query head, query tile, range of its tiles)
  // A row block's ranges side by side, or (RANGE_MAJOR) every row block's range 0 first, then range 1, …: a short last
  // range then fills the grid's last wave (key-ranges.ts). A constant, not a uniform: as a uniform the choice slowed
  // the kernel in the order side by side too (docs/sdpa.md, "The last wave").
  let rowBlocks = params.bh * Tr;
  let split = select(w % params.splits, w / rowBlocks, RANGE_MAJOR == 1u);
  let pair = select(w / params.splits / Tr, (w % rowBlocks) / Tr, RANGE_MAJOR == 1u);
  let i = select((w / params.splits) % Tr, w % Tr, RANGE_MAJOR == 1u);
  if (pair >= params.bh || (RANGE_MAJOR == 1u && split >= params.splits)) { return; }
  let b = pair / params.Hq;
  let hq = pair % params.Hq;
  let qBase = b * params.qBatch + hq * params.qHead;   // Q of (b, hq), in vec4s
  let oBase = b * params.oBatch + hq * params.oHead;   // O of (b, hq)
  let kvBase = b * params.kvBatch + (hq / params.GROUP) * params.kvHead;
  let vBase = b * vStride(params.kvBatch) + (hq / params.GROUP) * vStride(params.kvHead);
  let bm = b + params.batch0;        // the batch in the masks
  var Lk = params.Lk;                // this batch's valid keys
  if (GENERAL == 1u) {
    if (params.cached == 1u && t == 0u) { lengthShared = min(tileLists[bm], params.Lk); }
    Lk = select(params.Lk, workgroupUniformLoad(&lengthShared), params.cached == 1u);
  }
  var terms = vec2<f32>(0.0);        // this query head's ALiBi slope and sink logit (base 2)
  if (GENERAL == 1u && (params.alibi == 1u || params.sinks == 1u)) { terms = headTerms(hq); }
  let g = t / H;                     // row group: rows i·BR + ROWS·g … i·BR + ROWS·g + ROWS − 1
  let h = t % H;                     // place in the group: vec4 columns h + H·x

  // Rows 2 and 3 of a group exist only with ROWS = 4 (every line about them folds away with ROWS = 2), so that
  // each vec4 read from K_j or V_j feeds 16 multiply-adds instead of 8 (four-rows, rung 21).
  let row0 = i * BR + ROWS * g;
  let row1 = row0 + 1u;
  let row2 = row0 + 2u;
  let row3 = row0 + 3u;
  var q0: array<vec4<f32>, C_MAX>;   // q0[x]: row 0, vec4 column h + H·x
  var q1: array<vec4<f32>, C_MAX>;
  var q2: array<vec4<f32>, C_MAX>;
  var q3: array<vec4<f32>, C_MAX>;
  var o0: array<vec4<f32>, C_MAX>;   // o0[x]: row 0, vec4 column h + H·x of O (CV of them)
  var o1: array<vec4<f32>, C_MAX>;
  var o2: array<vec4<f32>, C_MAX>;
  var o3: array<vec4<f32>, C_MAX>;
  for (var x = 0u; x < C; x++) {
    q0[x] = vec4<f32>(0.0);
    q1[x] = vec4<f32>(0.0);
    let col = h + H * x;
    if (row0 < Lq && inRow(col)) { q0[x] = unpack(q[qBase + row0 * params.qRow + col]) * params.scaleLog2; }
    if (row1 < Lq && inRow(col)) { q1[x] = unpack(q[qBase + row1 * params.qRow + col]) * params.scaleLog2; }
    if (ROWS == 4u) {
      q2[x] = vec4<f32>(0.0);
      q3[x] = vec4<f32>(0.0);
      if (row2 < Lq && inRow(col)) { q2[x] = unpack(q[qBase + row2 * params.qRow + col]) * params.scaleLog2; }
      if (row3 < Lq && inRow(col)) { q3[x] = unpack(q[qBase + row3 * params.qRow + col]) * params.scaleLog2; }
    }
  }
  for (var x = 0u; x < CV; x++) {
    o0[x] = vec4<f32>(0.0);
    o1[x] = vec4<f32>(0.0);
    o2[x] = vec4<f32>(0.0);
    o3[x] = vec4<f32>(0.0);
  }
  var m0 = LOWEST;                   // m_i (base 2) of the rows
  var m1 = LOWEST;
  var m2 = LOWEST;
  var m3 = LOWEST;
  var l0 = 0.0;                      // ℓ_i of the rows
  var l1 = 0.0;
  var l2 = 0.0;
  var l3 = 0.0;

  for (var e = t; e < BC * PAD; e += WG) { Kj[(e / max(PAD, 1u)) * KS + D4K + e % max(PAD, 1u)] = vec4<f32>(0.0); }
  for (var e = t; e < BC * PADV; e += WG) { Vj[(e / max(PADV, 1u)) * VS + D4V + e % max(PADV, 1u)] = vec4<f32>(0.0); }

  // The tiles any row of this workgroup sees: from the first key of its first row's band to the last of its last's,
  // or the host's list of them under a block mask; this workgroup takes range `split` of them.
  let rowFirst = i * BR;
  let rowLast = min(Lq, rowFirst + BR) - 1u;
  let keyFirst = select(0, max(bandFirst(rowFirst, Lk), 0), GENERAL == 1u);
  let keyLast = select(i32(Lk) - 1, min(bandLast(rowLast, Lk), i32(Lk) - 1), GENERAL == 1u);
  var jFirst = 0u;                   // without a list: tiles jFirst … jFirst + count − 1
  var count = 0u;
  var listStart = 0u;                // with one: tiles tileLists[listStart … listStart + count − 1]
  if (GENERAL == 1u && params.blocks == 1u) {
    let entry = 2u * ((bm * params.Hq + hq) * Tr + i);
    if (t == 0u) { listShared = vec2<u32>(tileLists[entry], tileLists[entry + 1u]); }
    let list = workgroupUniformLoad(&listShared);
    listStart = list.x;
    count = list.y;
  } else if (keyFirst <= keyLast) {
    jFirst = u32(keyFirst) / BC;
    count = u32(keyLast) / BC + 1u - jFirst;
  }
  // Range `split` of the count tiles: an even share, or (under a band, where row blocks see different counts) the
  // same number of tiles in every range, so that the longest row block gets the most workgroups.
  var nBegin = split * count / params.splits;
  var nEnd = (split + 1u) * count / params.splits;
  if (params.perSplit > 0u) {
    nBegin = min(split * params.perSplit, count);
    nEnd = min(nBegin + params.perSplit, count);
  }
  // Keys every row of the workgroup sees (a tile inside them needs no band test).
  let allFirst = bandFirst(rowLast, Lk);
  let allLast = bandLast(rowFirst, Lk);
  let reversed = GENERAL == 1u && params.alibi == 1u;   // ALiBi visits the range from its last tile (visited)
  var kNext: array<vec4<f32>, LD_MAX>;
  var vNext: array<vec4<f32>, LD_MAX>;
  if (PREFETCH == 1u) {
    for (var n = 0u; n < LDA; n++) {
      let e = t + n * WG;
      kNext[n] = vec4<f32>(0.0);
      vNext[n] = vec4<f32>(0.0);
      let key0 = tileAt(visited(nBegin, nBegin, nEnd, reversed), jFirst, listStart) * BC;
      if (e < BC * D4K && nBegin < nEnd && key0 + e / D4K < Lk) {
        kNext[n] = unpack(k[params.kStart + kvBase + kvAt(key0, e)]);
      }
      if (e < BC * D4V && nBegin < nEnd && key0 + e / D4V < Lk) {
        vNext[n] = unpack(v[params.vStart + vBase + vAt(key0, e)]);
      }
    }
  }
  for (var step = nBegin; step < nEnd; step++) {
    let n = visited(step, nBegin, nEnd, reversed);   // the range's n-th tile: this step's
    let j = tileAt(n, jFirst, listStart);
    let key0 = j * BC;
    workgroupBarrier();  // everyone is done with K_j, V_j of the previous tile
    for (var n = 0u; n < LDA; n++) {
      let e = t + n * WG;
      if (e < BC * D4K) {
        if (PREFETCH == 1u) {
          Kj[onChip(e)] = kNext[n];
        } else {
          var kv = vec4<f32>(0.0);
          if (key0 + e / D4K < Lk) { kv = unpack(k[params.kStart + kvBase + kvAt(key0, e)]); }
          Kj[onChip(e)] = kv;
        }
      }
      if (e < BC * D4V) {
        if (PREFETCH == 1u) {
          Vj[onChipV(e)] = vNext[n];
        } else {
          var vv = vec4<f32>(0.0);
          if (key0 + e / D4V < Lk) { vv = unpack(v[params.vStart + vBase + vAt(key0, e)]); }
          Vj[onChipV(e)] = vv;
        }
      }
    }
    workgroupBarrier();
    if (PREFETCH == 1u && step + 1u < nEnd) {
      let next0 = tileAt(visited(step + 1u, nBegin, nEnd, reversed), jFirst, listStart) * BC;   // the next tile's first key
      for (var n = 0u; n < LDA; n++) {
        let e = t + n * WG;
        kNext[n] = vec4<f32>(0.0);
        vNext[n] = vec4<f32>(0.0);
        if (e < BC * D4K && next0 + e / D4K < Lk) { kNext[n] = unpack(k[params.kStart + kvBase + kvAt(next0, e)]); }
        if (e < BC * D4V && next0 + e / D4V < Lk) { vNext[n] = unpack(v[params.vStart + vBase + vAt(next0, e)]); }
      }
    }

    // The exact test per score where the band's edge crosses the tile, a key is past Lk, or a mask needs it.
    let checked = key0 + BC > Lk || (GENERAL == 1u && (params.mask == 1u || (params.blocks == 1u && params.blockTiles == 0u) ||
                  i32(key0) < allFirst || i32(key0 + BC - 1u) > allLast));
    let keys = min(BC, Lk - key0);  // keys of this tile that exist
    for (var c = 0u; c < BC; c += KEYS) {
      // S for keys c .. c + KEYS − 1 of the tile: this invocation's share of each dot product, as chains of
      // multiply-adds, then the group's sum. Quads c and d (keys c + 8 .. c + 15) exist only when KEYS = 16.
      var s0a = vec4<f32>(0.0);      // row 0, keys c .. c + 3
      var s0b = vec4<f32>(0.0);      // row 0, keys c + 4 .. c + 7
      var s0c = vec4<f32>(0.0);      // row 0, keys c + 8 .. c + 11
      var s0d = vec4<f32>(0.0);      // row 0, keys c + 12 .. c + 15
      var s1a = vec4<f32>(0.0);
      var s1b = vec4<f32>(0.0);
      var s1c = vec4<f32>(0.0);
      var s1d = vec4<f32>(0.0);
      var s2a = vec4<f32>(0.0);      // rows 2 and 3 (ROWS = 4, where KEYS = 8): keys c .. c + 7
      var s2b = vec4<f32>(0.0);
      var s3a = vec4<f32>(0.0);
      var s3b = vec4<f32>(0.0);
      for (var x = 0u; x < C; x++) {
        let col = h + H * x;
        let k0 = Kj[c * KS + col];
        let k1 = Kj[(c + 1u) * KS + col];
        let k2 = Kj[(c + 2u) * KS + col];
        let k3 = Kj[(c + 3u) * KS + col];
        let k4 = Kj[(c + 4u) * KS + col];
        let k5 = Kj[(c + 5u) * KS + col];
        let k6 = Kj[(c + 6u) * KS + col];
        let k7 = Kj[(c + 7u) * KS + col];
        s0a = qk4(s0a, q0[x], k0, k1, k2, k3);
        s0b = qk4(s0b, q0[x], k4, k5, k6, k7);
        s1a = qk4(s1a, q1[x], k0, k1, k2, k3);
        s1b = qk4(s1b, q1[x], k4, k5, k6, k7);
        if (ROWS == 4u) {
          s2a = qk4(s2a, q2[x], k0, k1, k2, k3);
          s2b = qk4(s2b, q2[x], k4, k5, k6, k7);
          s3a = qk4(s3a, q3[x], k0, k1, k2, k3);
          s3b = qk4(s3b, q3[x], k4, k5, k6, k7);
        }
        if (KEYS == 16u) {
          let k8 = Kj[(c + 8u) * KS + col];
          let k9 = Kj[(c + 9u) * KS + col];
          let k10 = Kj[(c + 10u) * KS + col];
          let k11 = Kj[(c + 11u) * KS + col];
          let k12 = Kj[(c + 12u) * KS + col];
          let k13 = Kj[(c + 13u) * KS + col];
          let k14 = Kj[(c + 14u) * KS + col];
          let k15 = Kj[(c + 15u) * KS + col];
          s0c = qk4(s0c, q0[x], k8, k9, k10, k11);
          s0d = qk4(s0d, q0[x], k12, k13, k14, k15);
          s1c = qk4(s1c, q1[x], k8, k9, k10, k11);
          s1d = qk4(s1d, q1[x], k12, k13, k14, k15);
        }
      }
      // The group's sum, one shuffle level per halving of H, written out rather than looped (see the header). The
      // host keeps H ≤ 8 (H = 8 with ROWS = 4 at d = 128, and for head sizes above 128) and KEYS = 8 when H > 1.
      if (H > 1u) { sumShares(&s0a, &s0b, &s1a, &s1b, 1u); }
      if (H > 2u) { sumShares(&s0a, &s0b, &s1a, &s1b, 2u); }
      if (H > 4u) { sumShares(&s0a, &s0b, &s1a, &s1b, 4u); }
      if (ROWS == 4u) {
        if (H > 1u) { sumShares(&s2a, &s2b, &s3a, &s3b, 1u); }
        if (H > 2u) { sumShares(&s2a, &s2b, &s3a, &s3b, 2u); }
        if (H > 4u) { sumShares(&s2a, &s2b, &s3a, &s3b, 4u); }
      }
      // Softcap and ALiBi on every score, before the mask (FlashAttention-2's order).
      if (GENERAL == 1u && (params.softcap == 1u || params.alibi == 1u)) {
        s0a = scoreTerms(s0a, row0, key0 + c, Lk, terms.x);
        s0b = scoreTerms(s0b, row0, key0 + c + 4u, Lk, terms.x);
        s1a = scoreTerms(s1a, row1, key0 + c, Lk, terms.x);
        s1b = scoreTerms(s1b, row1, key0 + c + 4u, Lk, terms.x);
        if (ROWS == 4u) {
          s2a = scoreTerms(s2a, row2, key0 + c, Lk, terms.x);
          s2b = scoreTerms(s2b, row2, key0 + c + 4u, Lk, terms.x);
          s3a = scoreTerms(s3a, row3, key0 + c, Lk, terms.x);
          s3b = scoreTerms(s3b, row3, key0 + c + 4u, Lk, terms.x);
        }
        if (KEYS == 16u) {
          s0c = scoreTerms(s0c, row0, key0 + c + 8u, Lk, terms.x);
          s0d = scoreTerms(s0d, row0, key0 + c + 12u, Lk, terms.x);
          s1c = scoreTerms(s1c, row1, key0 + c + 8u, Lk, terms.x);
          s1d = scoreTerms(s1d, row1, key0 + c + 12u, Lk, terms.x);
        }
      }
      // The plain problem's only test, keys past Lk, as lean-loop makes it where a row group is several invocations
      // (KEYS = 8); with one invocation per row group (KEYS = 16) the exact test below ran faster on the H100
      // (docs/sdpa.md, "The plain problem").
      if (GENERAL == 0u && KEYS == 8u) {
        if (c + KEYS > keys) {
          s0a = pastKeys(s0a, c, keys);
          s0b = pastKeys(s0b, c + 4u, keys);
          s1a = pastKeys(s1a, c, keys);
          s1b = pastKeys(s1b, c + 4u, keys);
          if (ROWS == 4u) {
            s2a = pastKeys(s2a, c, keys);
            s2b = pastKeys(s2b, c + 4u, keys);
            s3a = pastKeys(s3a, c, keys);
            s3b = pastKeys(s3b, c + 4u, keys);
          }
        }
      } else if (checked) {  // band edges, element masks, block masks (unaligned), keys past Lk: the exact test per score
        s0a = applyMask(s0a, bm, hq, row0, key0 + c, Lk);
        s0b = applyMask(s0b, bm, hq, row0, key0 + c + 4u, Lk);
        s1a = applyMask(s1a, bm, hq, row1, key0 + c, Lk);
        s1b = applyMask(s1b, bm, hq, row1, key0 + c + 4u, Lk);
        if (ROWS == 4u) {
          s2a = applyMask(s2a, bm, hq, row2, key0 + c, Lk);
          s2b = applyMask(s2b, bm, hq, row2, key0 + c + 4u, Lk);
          s3a = applyMask(s3a, bm, hq, row3, key0 + c, Lk);
          s3b = applyMask(s3b, bm, hq, row3, key0 + c + 4u, Lk);
        }
        if (KEYS == 16u) {
          s0c = applyMask(s0c, bm, hq, row0, key0 + c + 8u, Lk);
          s0d = applyMask(s0d, bm, hq, row0, key0 + c + 12u, Lk);
          s1c = applyMask(s1c, bm, hq, row1, key0 + c + 8u, Lk);
          s1d = applyMask(s1d, bm, hq, row1, key0 + c + 12u, Lk);
        }
      }
      var mx0 = max4(max(s0a, s0b));
      var mx1 = max4(max(s1a, s1b));
      if (KEYS == 16u) {
        mx0 = max(mx0, max4(max(s0c, s0d)));
        mx1 = max(mx1, max4(max(s1c, s1d)));
      }
      if (mx0 > m0 + TAU) {
        let alpha = exp2(m0 - mx0);
        m0 = mx0;
        l0 *= alpha;
        for (var x = 0u; x < CV; x++) { o0[x] *= alpha; }
      }
      if (mx1 > m1 + TAU) {
        let alpha = exp2(m1 - mx1);
        m1 = mx1;
        l1 *= alpha;
        for (var x = 0u; x < CV; x++) { o1[x] *= alpha; }
      }
      var p2a = vec4<f32>(0.0);
      var p2b = vec4<f32>(0.0);
      var p3a = vec4<f32>(0.0);
      var p3b = vec4<f32>(0.0);
      if (ROWS == 4u) {
        let mx2 = max4(max(s2a, s2b));
        let mx3 = max4(max(s3a, s3b));
        if (mx2 > m2 + TAU) {
          let alpha = exp2(m2 - mx2);
          m2 = mx2;
          l2 *= alpha;
          for (var x = 0u; x < CV; x++) { o2[x] *= alpha; }
        }
        if (mx3 > m3 + TAU) {
          let alpha = exp2(m3 - mx3);
          m3 = mx3;
          l3 *= alpha;
          for (var x = 0u; x < CV; x++) { o3[x] *= alpha; }
        }
        p2a = exp2(s2a - m2);
        p2b = exp2(s2b - m2);
        p3a = exp2(s3a - m3);
        p3b = exp2(s3b - m3);
        l2 += dot(p2a + p2b, vec4<f32>(1.0));
        l3 += dot(p3a + p3b, vec4<f32>(1.0));
      }
      let p0a = exp2(s0a - m0);      // P̃ of row 0, keys c .. c + 3
      let p0b = exp2(s0b - m0);
      let p1a = exp2(s1a - m1);
      let p1b = exp2(s1b - m1);
      l0 += dot(p0a + p0b, vec4<f32>(1.0));
      l1 += dot(p1a + p1b, vec4<f32>(1.0));
      var p0c = vec4<f32>(0.0);
      var p0d = vec4<f32>(0.0);
      var p1c = vec4<f32>(0.0);
      var p1d = vec4<f32>(0.0);
      if (KEYS == 16u) {
        p0c = exp2(s0c - m0);
        p0d = exp2(s0d - m0);
        p1c = exp2(s1c - m1);
        p1d = exp2(s1d - m1);
        l0 += dot(p0c + p0d, vec4<f32>(1.0));
        l1 += dot(p1c + p1d, vec4<f32>(1.0));
      }
      // O += P̃ V_j for keys c .. c + KEYS − 1, on this invocation's columns. The step's products are summed apart
      // first, so a running O sees one rounding per step, not one per key: the error bound's sum path is KEYS + N/KEYS
      // roundings instead of N (docs/error-bound.md). Rung 21 adds each product straight into O, one addition fewer
      // per vec4 and step (a little faster at d = 128), but its sequential bound misses hw4's 5e-3 on uniform data at
      // N = 8192, d = 128, where hw4-cli then computes in float64 on the CPU (docs/sdpa.md has both measurements).
      for (var x = 0u; x < CV; x++) {
        let col = h + H * x;
        let v0 = Vj[c * VS + col];
        let v1 = Vj[(c + 1u) * VS + col];
        let v2 = Vj[(c + 2u) * VS + col];
        let v3 = Vj[(c + 3u) * VS + col];
        let v4 = Vj[(c + 4u) * VS + col];
        let v5 = Vj[(c + 5u) * VS + col];
        let v6 = Vj[(c + 6u) * VS + col];
        let v7 = Vj[(c + 7u) * VS + col];
        var o0x = addPV(addPV(vec4<f32>(0.0), p0a, v0, v1, v2, v3), p0b, v4, v5, v6, v7);
        var o1x = addPV(addPV(vec4<f32>(0.0), p1a, v0, v1, v2, v3), p1b, v4, v5, v6, v7);
        if (ROWS == 4u) {
          o2[x] += addPV(addPV(vec4<f32>(0.0), p2a, v0, v1, v2, v3), p2b, v4, v5, v6, v7);
          o3[x] += addPV(addPV(vec4<f32>(0.0), p3a, v0, v1, v2, v3), p3b, v4, v5, v6, v7);
        }
        if (KEYS == 16u) {
          let v8 = Vj[(c + 8u) * VS + col];
          let v9 = Vj[(c + 9u) * VS + col];
          let v10 = Vj[(c + 10u) * VS + col];
          let v11 = Vj[(c + 11u) * VS + col];
          let v12 = Vj[(c + 12u) * VS + col];
          let v13 = Vj[(c + 13u) * VS + col];
          let v14 = Vj[(c + 14u) * VS + col];
          let v15 = Vj[(c + 15u) * VS + col];
          o0x = addPV(addPV(o0x, p0c, v8, v9, v10, v11), p0d, v12, v13, v14, v15);
          o1x = addPV(addPV(o1x, p1c, v8, v9, v10, v11), p1d, v12, v13, v14, v15);
        }
        o0[x] += o0x;
        o1[x] += o1x;
      }
    }
  }
  if (params.splits == 1u) {  // O_i = O / ℓ_i, or 0 for a row that saw no key; its log-sum-exp, or −∞
    if (row0 < Lq) { finish(oBase + row0 * params.oRow, pair * Lq + row0, h, m0, l0, o0, terms.y); }
    if (row1 < Lq) { finish(oBase + row1 * params.oRow, pair * Lq + row1, h, m1, l1, o1, terms.y); }
    if (ROWS == 4u && row2 < Lq) { finish(oBase + row2 * params.oRow, pair * Lq + row2, h, m2, l2, o2, terms.y); }
    if (ROWS == 4u && row3 < Lq) { finish(oBase + row3 * params.oRow, pair * Lq + row3, h, m3, l3, o3, terms.y); }
    return;
  }
  // This range's unnormalized O, m and ℓ of the rows, for `combine`.
  let part0 = (pair * params.splits + split) * Lq + row0;
  if (row0 < Lq) {
    if (h == 0u) { ML[part0] = vec2<f32>(m0, l0); }
    for (var x = 0u; x < CV; x++) {
      if (inRowV(h + H * x)) { Opart[part0 * D4V + h + H * x] = o0[x]; }
    }
  }
  if (row1 < Lq) {
    if (h == 0u) { ML[part0 + 1u] = vec2<f32>(m1, l1); }
    for (var x = 0u; x < CV; x++) {
      if (inRowV(h + H * x)) { Opart[(part0 + 1u) * D4V + h + H * x] = o1[x]; }
    }
  }
  if (ROWS == 4u && row2 < Lq) { storePart(part0 + 2u, h, m2, l2, o2); }
  if (ROWS == 4u && row3 < Lq) { storePart(part0 + 3u, h, m3, l3, o3); }
}

// Writes a row's unnormalized O (this invocation's columns), m and ℓ for `combine`.
fn storePart(part: u32, h: u32, m: f32, l: f32, o: array<vec4<f32>, C_MAX>) {
  if (h == 0u) { ML[part] = vec2<f32>(m, l); }
  for (var x = 0u; x < CV; x++) {
    if (inRowV(h + H * x)) { Opart[part * D4V + h + H * x] = o[x]; }
  }
}

// Writes a row of O (this invocation's columns) and its log-sum-exp: O / ℓ and (m + log2 ℓ)·ln 2 (naturalLse, which
// also undoes the host's compression of huge mask values), or 0 and −∞ when the row saw no key (m still LOWEST).
// With sinks, ℓ counts the head's sink logit once, 2^(sink − m) (held at 2^126: past it O is below 2^-118 of max|v|
// either way), and the log-sum-exp is taken from the larger of m and the sink; a row that saw no key gets O = 0 and
// log-sum-exp log e^sink = sink.
fn finish(at: u32, row: u32, h: u32, m: f32, l: f32, o: array<vec4<f32>, C_MAX>, sink: f32) {
  let seen = m > LOWEST;
  let sinks = GENERAL == 1u && params.sinks == 1u;
  var total = l;
  if (sinks) { total = sinkTotal(l, m, sink); }
  for (var x = 0u; x < CV; x++) {
    if (inRowV(h + H * x)) { O[at + h + H * x] = pack(select(vec4<f32>(0.0), o[x] / total, seen)); }
  }
  if (params.writeLse == 1u && h == 0u) {
    var x = m + log2(l);
    if (sinks) { x = sinkLse(l, m, sink); }
    lse[row] = select(bitcast<f32>(params.minusInfinity), naturalLse(x), seen || sinks);
  }
}


// The interface of the tiled attention kernels (attention-fp32 and attention-matrix), appended to each by tiledKernel
// (tiled-host.ts), whose host fills it: the uniform, the bindings, and the band and block tests both kernels make.
// Each kernel declares `Packed` (how q, k, v and O are held in memory).

struct Params {
  Lq: u32,
  Lk: u32,
  Hq: u32,
  GROUP: u32,              // query heads per KV head
  bh: u32,                 // B·Hq: (batch, head) pairs in this run
  batch0: u32,             // the run's first batch, for the masks (which cover every batch)
  qBatch: u32,             // strides of Q and O in vec4s: batch, head, row
  qHead: u32,
  qRow: u32,
  kvBatch: u32,            // strides of K and V in vec4s
  kvHead: u32,
  kvRow: u32,
  kStart: u32,             // where K and V begin in their bindings, in vec4s: 0, unless Q, K and V share one buffer
  vStart: u32,             // (hw4's file layout, each batch Q then K then V: hw4-adapter.ts)
  oBatch: u32,             // strides of O in vec4s: Q's, unless Q lies packed with K and V
  oHead: u32,
  oRow: u32,
  scaleLog2: f32,          // scale·log2(e)
  left: i32,               // keys before the diagonal a row sees (a large number when unbounded)
  right: i32,              // keys after it (0 when causal)
  maskB: u32,              // element mask strides in f32s (0 along broadcast dimensions)
  maskH: u32,
  maskI: u32,
  maskJ: u32,
  blockRows: u32,          // rows and keys of a block of the block mask
  blockKeys: u32,
  blocksB: u32,            // block mask strides in flags
  blocksH: u32,
  blocksI: u32,
  blocksJ: u32,
  minusInfinity: u32,      // 0xff800000, the bits of −∞ (WGSL has no constant for it), the lse of a row with no key
  splits: u32,             // workgroups per row block, each a range of its tiles; 1: O is written directly
  perSplit: u32,           // tiles per range (0: count / splits each)
  mask: u32,               // 1: an element mask is bound
  blocks: u32,             // 1: a block mask is bound
  blockTiles: u32,         // 1: every kernel tile lies inside one block (blocks are whole tiles): no per-score test
  writeLse: u32,           // 1: write each row's log-sum-exp
  cached: u32,             // 1: batch b holds only its first tileLists[b] keys (no block mask then)
  softcap: u32,            // 1: each score s becomes c·tanh(s/c), in natural units (softcapped)
  alibi: u32,              // 1: each score of query head h loses slope_h·|i + Lk − Lq − j| (headTerms)
  sinks: u32,              // 1: each row's ℓ counts its query head's sink logit, 2^(sink − m) (headTerms)
  capIn: f32,              // ln(2)/c, at most 2^26: a score in base 2 times capIn is s/c in natural units
  capOut: f32,             // c·log2(e): c·tanh(·) back in base 2
  headTerms: u32,          // where `mask` holds each query head's (slope, sink) pair, base 2, after the mask's values
}

@group(0) @binding(0) var<storage, read> q: array<Packed>;
@group(0) @binding(1) var<storage, read> k: array<Packed>;
@group(0) @binding(2) var<storage, read> v: array<Packed>;
@group(0) @binding(3) var<storage, read_write> O: array<Packed>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(5) var<storage, read> mask: array<f32>;          // additive in base 2 (maskBase2), ≤ EXCLUDED where excluded;
                                                                    // then, with ALiBi or sinks, 2·Hq floats from headTerms
@group(0) @binding(6) var<storage, read> blockFlags: array<u32>;   // 1: the block is computed
@group(0) @binding(7) var<storage, read_write> lse: array<f32>;     // B·Hq·Lq: log-sum-exp of each row
@group(0) @binding(8) var<storage, read> tileLists: array<u32>;     // per (batch, head, query tile): start, count; then tiles.
                                                                    // Without a block mask: each batch's cache length
                                                                    // when `cached` is 1
@group(0) @binding(9) var<storage, read_write> Opart: array<vec4<f32>>;  // per (pair, split, row): unnormalized O
@group(0) @binding(10) var<storage, read_write> ML: array<vec2<f32>>;    // per (pair, split, row): m, ℓ

// Scores in base 2 (s = scale·log2(e)·q·k, |s| < 2^101 by the host's overflow check, float32-range.ts) plus the mask's
// values, which the host writes in base 2 within ±MASK_TOP (maskBase2 in tiled-host.ts: x·log2(e) up to ±MASK_KNEE,
// past it brought linearly within ±MASK_TOP, so that the most negative float32, −3.4e38, stays a finite value, not an
// exclusion, and +3e38 does not overflow to +∞). So every finite score t has |t| < 2^127 − 2^109.
// LOWEST stands for −∞ in m_i (no key yet) and in excluded scores: below every finite t, and any difference of two of
// t, m_i and LOWEST stays below 2^128 − 2^109, within float32's range: exp2 never sees ∞ − ∞, and a row sees a key
// exactly when its m_i > LOWEST.
const LOWEST: f32 = -1.7014118346046923e+38;    // −2^127
const EXCLUDED: f32 = -3.0e38;                  // mask values at or below it exclude the key (the host writes −3.4e38)
const MASK_KNEE: f32 = 8.507059173023462e+37;   // 2^126
const MASK_TOP: f32 = 1.701398853862546e+38;    // 2^127 − 2^110: where the host puts ±3.4028235e38·log2(e)
const MASK_SPAN_INV: f32 = 1.1755122874426309e-38;  // 1 / (MASK_TOP − MASK_KNEE)
const KNEE_LN2: f32 = 5.896644096840839e+37;    // MASK_KNEE·ln 2, rounded
const TAIL_SPAN: f32 = 2.8131590567012047e+38;  // float32's largest value − KNEE_LN2, rounded down

// A row's log-sum-exp in natural units from x = m_i + log2 ℓ_i (base 2): x·ln 2, except past ±MASK_KNEE, where the
// row's maximum is a mask value the host compressed; there the compression is undone (MASK_TOP gives float32's largest
// value, and the result is at most KNEE_LN2 + TAIL_SPAN, which does not round past it). Scores alone stay below 2^101.
fn naturalLse(x: f32) -> f32 {
  let a = abs(x);
  if (a <= MASK_KNEE) { return x * 0.6931471805599453; }
  return sign(x) * (KNEE_LN2 + min((a - MASK_KNEE) * MASK_SPAN_INV, 1.0) * TAIL_SPAN);
}

// Query head hq's ALiBi slope and sink logit in base 2 (×log2 e), which the host writes after the mask's values, so
// that they take no binding of their own (the tiled kernels bind 10 storage buffers already).
fn headTerms(hq: u32) -> vec2<f32> { return vec2<f32>(mask[params.headTerms + 2u * hq], mask[params.headTerms + 2u * hq + 1u]); }

// The step of a key range that visits its n-th tile (n from nBegin, before nEnd): n, or with `reversed` (ALiBi) the
// range run backwards. ALiBi's scores fall away from each row's diagonal, so that visited from the diagonal back a
// causal row meets its largest scores first and m_i rarely moves: each move rescales O (in attention-matrix, a round
// trip through workgroup memory). The sum is the same in any order. An empty range (n = nEnd) gives n.
fn visited(n: u32, nBegin: u32, nEnd: u32, reversed: bool) -> u32 { return select(n, nBegin + nEnd - 1u - n, reversed && n < nEnd); }

// The softcap on scores s in base 2, in natural units: s·ln 2 / c (one multiply by capIn), tanh, times c·log2(e)
// (capOut). tanh's argument is clamped to ±10, where tanh rounds to ±1 in float32 anyway, so that no implementation's
// tanh meets an argument whose exponentials overflow; capIn ≤ 2^26 keeps s·capIn finite (|s| < 2^101).
fn softcapped(s: vec4<f32>) -> vec4<f32> {
  return params.capOut * tanh(clamp(s * params.capIn, vec4<f32>(-10.0), vec4<f32>(10.0)));
}

// Scores s of row i with keys j0 .. j0 + 3 (base 2), softcapped, then less the ALiBi slope times each key's distance
// from the row's bottom-right diagonal, i + Lk − Lq (Lk: the batch's valid keys); the mask comes after (applyMask).
fn scoreTerms(s: vec4<f32>, i: u32, j0: u32, Lk: u32, slope: f32) -> vec4<f32> {
  var r = s;
  if (params.softcap == 1u) { r = softcapped(r); }
  if (params.alibi == 1u) {
    let diagonal = i32(i) + i32(Lk) - i32(params.Lq) - i32(j0);
    r -= slope * vec4<f32>(abs(vec4<i32>(diagonal) - vec4<i32>(0, 1, 2, 3)));
  }
  return r;
}

// A row's ℓ with its head's sink logit counted once, 2^(sink − m), held at 2^126 (past it O is below 2^-118 of max|v|
// either way): the denominator of O where it is normalized (attention-fp32's finish, attention-matrix's last write with
// one key range, or `combine`).
fn sinkTotal(l: f32, m: f32, sink: f32) -> f32 { return l + exp2(min(sink - m, 126.0)); }

// The same row's log-sum-exp in base 2, taken from the larger of m and the sink: a row that saw no key (m = LOWEST,
// ℓ = 0) gets log e^sink = sink.
fn sinkLse(l: f32, m: f32, sink: f32) -> f32 {
  let top = max(m, sink);
  return top + log2(l * exp2(m - top) + exp2(sink - top));
}

// The band of keys row i sees in a batch of Lk valid keys: [i + Lk − Lq − left, i + Lk − Lq + right], signed.
fn bandFirst(i: u32, Lk: u32) -> i32 { return i32(i) + i32(Lk) - i32(params.Lq) - params.left; }
fn bandLast(i: u32, Lk: u32) -> i32 { return i32(i) + i32(Lk) - i32(params.Lq) + params.right; }

// The flag of the block that holds (row i, key j) of (batch b, head hq).
fn blockKept(b: u32, hq: u32, i: u32, j: u32) -> bool {
  return blockFlags[b * params.blocksB + hq * params.blocksH + (i / params.blockRows) * params.blocksI + (j / params.blockKeys) * params.blocksJ] != 0u;
}

// The `combine` entry point of the tiled attention kernels (attention-fp32 and attention-matrix), appended to each by
// tiledKernel (tiled-host.ts): it uses tiled-interface.wgsl's Params, bindings (O, params, mask, lse, Opart, ML),
// LOWEST, headTerms and naturalLse, and each kernel's D4V, CW and pack.

// One invocation per vec4 of O: the ranges of its row merged, O = Σ 2^(m_s − M) O_s / Σ 2^(m_s − M) ℓ_s; with sinks,
// the row's sink enters the denominator once, here: + 2^(sink − M).
const MERGE_BATCH: u32 = 8u;  // ranges `combine` reads at once

@compute @workgroup_size(CW)
fn combine(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
           @builtin(local_invocation_index) t: u32) {
  let Lq = params.Lq;
  let e = (wid.y * nwg.x + wid.x) * CW + t;   // vec4 e of O: pair, row, column col
  if (e >= params.bh * Lq * D4V) { return; }
  let col = e % D4V;
  let row = (e / D4V) % Lq;
  let pair = e / D4V / Lq;
  // The ranges MERGE_BATCH at a time, their loads independent of each other, so that their latencies overlap (as
  // attention-decode's `combine`); past the last range, the batch's loads repeat it and count for nothing.
  let last = params.splits - 1u;
  var M = LOWEST;
  for (var s0 = 0u; s0 < params.splits; s0 += MERGE_BATCH) {
    for (var u = 0u; u < MERGE_BATCH; u++) { M = max(M, ML[(pair * params.splits + min(s0 + u, last)) * Lq + row].x); }
  }
  var l = 0.0;
  var o = vec4<f32>(0.0);
  for (var s0 = 0u; s0 < params.splits; s0 += MERGE_BATCH) {
    for (var u = 0u; u < MERGE_BATCH; u++) {
      let part = (pair * params.splits + min(s0 + u, last)) * Lq + row;
      let scale = select(0.0, exp2(ML[part].x - M), s0 + u <= last);
      l += scale * ML[part].y;
      o += scale * Opart[part * D4V + col];
    }
  }
  let seen = M > LOWEST;
  let b = pair / params.Hq;
  let hq = pair % params.Hq;
  var total = l;                     // ℓ, with the sink's weight where there is one
  var x = M + log2(l);               // the log-sum-exp in base 2
  if (params.sinks == 1u) {
    // 2^(sink − M) held at 2^126 (past it O is below 2^-118 of max|v| either way); the log-sum-exp from the larger of
    // M and the sink, which a row that saw no key gets: log e^sink = sink.
    let sink = headTerms(hq).y;
    total = sinkTotal(l, M, sink);
    x = sinkLse(l, M, sink);
  }
  O[b * params.oBatch + hq * params.oHead + row * params.oRow + col] = pack(select(vec4<f32>(0.0), o / total, seen));
  if (params.writeLse == 1u && col == 0u) { lse[pair * Lq + row] = select(bitcast<f32>(params.minusInfinity), naturalLse(x), seen || params.sinks == 1u); }
}
