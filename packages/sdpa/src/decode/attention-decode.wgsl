// attention-decode: a few query rows against a long key/value cache (decode, speculative decode), flash-decoding's way.
//
// Promoted from no rung: written for the product from attention-fp32 (itself promoted from rung 20 lean-loop). This
// file is the product's and is improved in place; docs/decode.md tells each change and its measurements, and
// docs/sdpa.md what the product took from which rung.
//
// Changed from attention-fp32 (the prefill kernel): there a workgroup owns BR = 64-128 rows of one query head, so with
// one query row per head its row tiles are almost empty, the grid is B·Hq workgroups (a few dozen), and the query
// heads of a group each read the same K and V. Here:
// - A workgroup owns all R = GROUP·Lq query rows that read one KV head (the group's query heads, every row of each),
//   so K and V are read once per group, not once per query head.
// - The keys of a head are split into `splits` ranges, one workgroup each (B·Hkv·splits workgroups, enough to fill
//   the GPU), and `combine` merges their partial m, ℓ and O as attention-fp32's does.
// - Per tile of BK keys the workgroup copies K_j and V_j once into workgroup memory (read into registers during the
//   previous tile, every load in flight at once), computes the R × BK scores (one or a few per invocation, the query
//   rows read from workgroup memory), one invocation per row turns its scores into weights and its running m_i, ℓ_i,
//   and each invocation updates the vec4 slots of O it owns (slot = a row and four columns) with the tile's weights:
//   decode is bound by reading K and V, and this reads each element once, in order.
// - Bands (causal, window) and each batch's cache length are tested per score; there are no element or block masks
//   here (the host sends those problems to attention-fp32).
// - Softcap and ALiBi (`softcap`, `alibi` = 1) change each score before the band's test, in FlashAttention-2's order:
//   c·tanh(s/c) in natural units, then − slope_h·|i + Lk − Lq − j|; with sinks (`sinks` = 1) `combine` counts each
//   row's sink logit once in ℓ. The slopes and sinks (base 2) are the first Hq entries of ML (`headTerms` of them),
//   written by the host, so that they take no binding of their own: this kernel binds WebGPU's default 8 storage
//   buffers per stage already.
// - V and O may have their own head size DV (DeepSeek's MLA: D = 192, DV = 128): V_j's rows, the O slots and O's rows
//   are DV wide, with their own strides; DV defaults to D.
// A second key loop, `lanes` (attention-decode-lanes.wgsl, appended by the host with subgroups enabled), takes the same
// problems where it holds the rows (the plan's choice for f32 and f16 tensors): a cluster of lanes per key, no
// workgroup memory or barrier in the loop. This file's `main` is the tile loop, for what the lane loop declines.

// How Q, K, V and O are held in memory: four elements at a time as `Packed`, unpacked to float32 on load. The host's
// f16 variant replaces these three lines (kernel-support.ts): two u32s of f16 pairs, unpacked with unpack2x16float,
// so f16 tensors need no shader-f16, and each load is one 8-byte read.
alias Packed = vec4<f32>;
fn unpack(x: Packed) -> vec4<f32> { return x; }
fn pack(x: vec4<f32>) -> Packed { return x; }

override D: u32;          // head size of Q and K, a multiple of 4
override DV: u32 = D;     // head size of V and O, a multiple of 4
override R: u32;          // query rows per workgroup: GROUP · Lq
override BK: u32;         // keys per tile
override WG: u32;         // invocations per workgroup
override LSE: u32;        // 1: write each row's log-sum-exp
override CW: u32;         // invocations per workgroup of `combine`

const SLOT_MAX: u32 = 8u; // most vec4 slots of O per invocation
const LD_MAX: u32 = 16u;  // most vec4s of K_j (and of V_j) one invocation loads per tile
const MERGE_BATCH: u32 = 16u; // ranges `combine` reads at once

struct Params {
  Lq: u32,
  Lk: u32,
  Hq: u32,
  Hkv: u32,
  GROUP: u32,
  pairs: u32,              // B·Hkv: (batch, KV head) pairs in this run
  qBatch: u32,             // strides of Q and O in vec4s: batch, head, row
  qHead: u32,
  qRow: u32,
  kvBatch: u32,            // strides of K and V in vec4s
  kvHead: u32,
  kvRow: u32,
  scaleLog2: f32,          // scale·log2(e)
  left: i32,               // keys before the diagonal a row sees (a large number when unbounded)
  right: i32,              // keys after it (0 when causal)
  minusInfinity: u32,      // 0xff800000, the bits of −∞, the lse of a row with no key
  splits: u32,             // workgroups per (batch, KV head), each a range of its tiles
  batch0: u32,             // the run's first batch, for the cache lengths (which cover every batch)
  cached: u32,             // 1: batch b holds only its first lengths[b] keys
  softcap: u32,            // 1: each score s becomes c·tanh(s/c), in natural units
  alibi: u32,              // 1: each score of query head h loses slope_h·|i + Lk − Lq − j| (ML[h].x)
  sinks: u32,              // 1: each row's ℓ counts its query head's sink logit, 2^(sink − m) (ML[h].y)
  capIn: f32,              // ln(2)/c, at most 2^26: a score in base 2 times capIn is s/c in natural units
  capOut: f32,             // c·log2(e): c·tanh(·) back in base 2
  headTerms: u32,          // entries of ML before the partial results: Hq (each query head's slope, sink), or 0
  vBatch: u32,             // strides of V in vec4s (K's, unless V has its own head size)
  vHead: u32,
  vRow: u32,
  oBatch: u32,             // strides of O in vec4s (Q's, unless V has its own head size)
  oHead: u32,
  oRow: u32,
}

@group(0) @binding(0) var<storage, read> q: array<Packed>;
@group(0) @binding(1) var<storage, read> k: array<Packed>;
@group(0) @binding(2) var<storage, read> v: array<Packed>;
@group(0) @binding(3) var<storage, read_write> O: array<Packed>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(5) var<storage, read_write> lse: array<f32>;           // B·Hq·Lq
@group(0) @binding(6) var<storage, read_write> Opart: array<vec4<f32>>;   // per (pair, split, row of the group)
@group(0) @binding(7) var<storage, read_write> ML: array<vec2<f32>>;      // headTerms pairs (slope, sink), then per
                                                                          // (pair, split, row of the group): m, ℓ
@group(0) @binding(8) var<storage, read> lengths: array<u32>;             // each batch's valid keys, when `cached`

override D4: u32 = D / 4u;
override DV4: u32 = DV / 4u;
override KS: u32 = D4 + 1u;                          // row stride of K_j: one vec4 of padding, so that the BK
                                                     // invocations scoring one row read BK different banks
override SLOTS: u32 = (R * DV / 4u + WG - 1u) / WG;  // vec4 slots of O per invocation
override SCORES: u32 = (R * BK + WG - 1u) / WG;      // scores per invocation per tile
override LD: u32 = (BK * D4 + WG - 1u) / WG;         // vec4s of K_j per invocation per tile
override LDV: u32 = (BK * DV4 + WG - 1u) / WG;       // vec4s of V_j per invocation per tile
override LDA: u32 = max(LD, LDV);                    // loads of both per invocation per tile

var<workgroup> Qs: array<vec4<f32>, R * D4>;          // the group's query rows, scaled by scale·log2(e)
var<workgroup> Kt: array<Packed, BK * KS>;           // K_j and V_j as the tensors hold them (f16 tensors: half the
var<workgroup> Vt: array<Packed, BK * DV4>;          // bytes of float32), unpacked where they are used
var<workgroup> S: array<f32, R * BK>;                 // the tile's scores (base 2), LOWEST where excluded; then P̃
var<workgroup> rowM: array<f32, R>;                   // m_i of each row (base 2)
var<workgroup> rowL: array<f32, R>;                   // ℓ_i of each row
var<workgroup> rowAlpha: array<f32, R>;               // this tile's rescale factor of each row
var<workgroup> lengthShared: u32;

// Stands for −∞ in m_i (no key yet) and in excluded scores. The host's overflow check (float32-range.ts) keeps every
// score (softcapped, with ALiBi's terms; there is no mask here) and every sink below 2^101 in magnitude, so a score is
// never taken for LOWEST and s − LOWEST stays within float32's range: exp2 never sees ∞ − ∞.
const LOWEST: f32 = -3.0e38;

// Row r of the group: query head kvh·GROUP + r / Lq, row r % Lq.
fn queryHead(kvh: u32, r: u32) -> u32 { return kvh * params.GROUP + r / params.Lq; }

// Row r's score s of key `key` as the softmax takes it: the softcap in natural units (s·ln 2 / c, tanh, times c·log2 e;
// the argument clamped where tanh rounds to ±1), then ALiBi (the head's slope times the key's distance from the row's
// bottom-right diagonal), or LOWEST outside the row's band or past the batch's Lk keys.
fn scored(s: f32, r: u32, key: u32, kvh: u32, Lk: u32) -> f32 {
  let i = i32(r % params.Lq) + i32(Lk) - i32(params.Lq);   // the row's diagonal key
  let j = i32(key);
  var x = s;
  if (params.softcap == 1u) { x = params.capOut * tanh(clamp(x * params.capIn, -10.0, 10.0)); }
  if (params.alibi == 1u) { x -= ML[queryHead(kvh, r)].x * f32(abs(i - j)); }
  let seen = key < Lk && j >= i - params.left && j <= i + params.right;
  return select(LOWEST, x, seen);
}

// A workgroup's share of the problem: its (batch, KV head) pair and range of keys, where that head's K and V begin, and
// the batch's valid keys (its cache length). `stageQuery` then stages the group's query rows in Qs, scaled; the lane
// loop issues its first loads of K and V between the two, so that their latencies overlap.
struct Range {
  pair: u32,
  split: u32,
  kvh: u32,
  kvBase: u32,
  vBase: u32,
  Lk: u32,
}

fn workgroupRange(w: u32, t: u32) -> Range {
  let split = w % params.splits;
  let pair = w / params.splits;
  let b = pair / params.Hkv;
  let kvh = pair % params.Hkv;
  if (t == 0u) { lengthShared = select(params.Lk, min(lengths[b + params.batch0], params.Lk), params.cached == 1u); }
  let Lk = workgroupUniformLoad(&lengthShared);
  return Range(pair, split, kvh, b * params.kvBatch + kvh * params.kvHead, b * params.vBatch + kvh * params.vHead, Lk);
}

// The group's query rows into Qs, scaled by scale·log2(e) (read by every invocation after the next barrier).
fn stageQuery(g: Range, t: u32) {
  let b = g.pair / params.Hkv;
  for (var e = t; e < R * D4; e += WG) {
    let r = e / D4;
    Qs[e] = unpack(q[b * params.qBatch + queryHead(g.kvh, r) * params.qHead + (r % params.Lq) * params.qRow + e % D4]) * params.scaleLog2;
  }
}

// This invocation's share of the K and V rows of the tile from key0, into registers as stored (zeros past the batch's
// Lk keys): every load is issued before any is used, so a tile's reads are all in flight at once; they go into
// workgroup memory as they are, and are unpacked to float32 where the scores and O read them.
fn loadTile(kReg: ptr<function, array<Packed, LD_MAX>>, vReg: ptr<function, array<Packed, LD_MAX>>,
            kvBase: u32, vBase: u32, key0: u32, Lk: u32, t: u32) {
  for (var n = 0u; n < LDA; n++) {
    let e = t + n * WG;
    var kv = Packed();
    var vv = Packed();
    if (e < BK * D4 && key0 + e / D4 < Lk) { kv = k[kvBase + (key0 + e / D4) * params.kvRow + e % D4]; }
    if (e < BK * DV4 && key0 + e / DV4 < Lk) { vv = v[vBase + (key0 + e / DV4) * params.vRow + e % DV4]; }
    (*kReg)[n] = kv;
    (*vReg)[n] = vv;
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) t: u32) {
  let w = wid.y * nwg.x + wid.x;     // one workgroup per (batch, KV head, range of keys)
  if (w / params.splits >= params.pairs) { return; }
  let g = workgroupRange(w, t);
  stageQuery(g, t);
  let split = g.split;
  let pair = g.pair;
  let kvh = g.kvh;
  let kvBase = g.kvBase;
  let vBase = g.vBase;
  let Lk = g.Lk;
  for (var r = t; r < R; r += WG) {
    rowM[r] = LOWEST;
    rowL[r] = 0.0;
  }
  // The O slots this invocation owns: slot e = row e / DV4, columns 4·(e % DV4) … + 3.
  var o: array<vec4<f32>, SLOT_MAX>;
  for (var n = 0u; n < SLOTS; n++) { o[n] = vec4<f32>(0.0); }
  let tiles = (Lk + BK - 1u) / BK;
  let jBegin = split * tiles / params.splits;
  let jEnd = (split + 1u) * tiles / params.splits;
  var kReg: array<Packed, LD_MAX>;      // the next tile's K and V, on their way from memory
  var vReg: array<Packed, LD_MAX>;
  if (jBegin < jEnd) { loadTile(&kReg, &vReg, kvBase, vBase, jBegin * BK, Lk, t); }
  for (var j = jBegin; j < jEnd; j++) {
    workgroupBarrier();  // everyone is done with the previous tile
    let key0 = j * BK;
    for (var n = 0u; n < LDA; n++) {
      let e = t + n * WG;
      if (e < BK * D4) { Kt[(e / D4) * KS + e % D4] = kReg[n]; }
      if (e < BK * DV4) { Vt[e] = vReg[n]; }
    }
    workgroupBarrier();
    // Tile j + 1 is read from memory while tile j computes.
    if (j + 1u < jEnd) { loadTile(&kReg, &vReg, kvBase, vBase, key0 + BK, Lk, t); }
    // Scores: score e = row e / BK with key e % BK, excluded outside the row's band or past Lk.
    for (var n = 0u; n < SCORES; n++) {
      let e = t + n * WG;
      if (e < R * BK) {
        let r = e / BK;
        let c = e % BK;
        var s = 0.0;
        for (var x = 0u; x < D4; x++) { s += dot(Qs[r * D4 + x], unpack(Kt[c * KS + x])); }
        S[e] = scored(s, r, key0 + c, kvh, Lk);
      }
    }
    workgroupBarrier();
    // Each row once: the tile's maximum, the rescale factor, the weights P̃ = 2^(s − m) (in place of the scores), ℓ.
    for (var r = t; r < R; r += WG) {
      var mx = LOWEST;
      for (var c = 0u; c < BK; c++) { mx = max(mx, S[r * BK + c]); }
      let mNew = max(rowM[r], mx);
      var sum = 0.0;
      for (var c = 0u; c < BK; c++) {
        let p = select(0.0, exp2(S[r * BK + c] - mNew), S[r * BK + c] > LOWEST);
        S[r * BK + c] = p;
        sum += p;
      }
      let alpha = exp2(rowM[r] - mNew);
      rowAlpha[r] = alpha;
      rowL[r] = rowL[r] * alpha + sum;
      rowM[r] = mNew;
    }
    workgroupBarrier();
    // Each slot: O = α·O + P̃·V_j on its four columns, the tile's products summed apart first.
    for (var n = 0u; n < SLOTS; n++) {
      let e = t + n * WG;
      if (e < R * DV4) {
        let r = e / DV4;
        let col = e % DV4;
        var acc = vec4<f32>(0.0);
        for (var c = 0u; c < BK; c++) { acc = fma(vec4<f32>(S[r * BK + c]), unpack(Vt[c * DV4 + col]), acc); }
        o[n] = o[n] * rowAlpha[r] + acc;
      }
    }
  }
  // This range's unnormalized O, m and ℓ of each slot's row, for `combine`.
  for (var n = 0u; n < SLOTS; n++) {
    let e = t + n * WG;
    if (e < R * DV4) {
      let r = e / DV4;
      let part = (pair * params.splits + split) * R + r;
      if (e % DV4 == 0u) { ML[params.headTerms + part] = vec2<f32>(rowM[r], rowL[r]); }
      Opart[part * DV4 + e % DV4] = o[n];
    }
  }
}

// One invocation per vec4 of O: the ranges of its row merged, O = Σ 2^(m_s − M) O_s / Σ 2^(m_s − M) ℓ_s, or 0 and
// log-sum-exp −∞ for a row that saw no key. With sinks the row's sink enters the denominator once, here:
// + 2^(sink − M), held at 2^126 (past it O is below 2^-118 of max|v| either way), and the log-sum-exp is taken from the
// larger of M and the sink: a row that saw no key gets O = 0 and log e^sink = sink.
@compute @workgroup_size(CW)
fn combine(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
           @builtin(local_invocation_index) t: u32) {
  let e = (wid.y * nwg.x + wid.x) * CW + t;   // vec4 e: pair, row of the group, column col
  if (e >= params.pairs * R * DV4) { return; }
  let col = e % DV4;
  let r = (e / DV4) % R;
  let pair = e / DV4 / R;
  // One pass over the ranges, MERGE_BATCH at a time: a batch's m, ℓ and O are loaded together, with no dependence
  // between them, so that their latencies overlap (one wait per batch, not one per range, and not a pass for the
  // maxima before a pass for O: docs/decode.md has what each saved); then the running sums move to the batch's
  // maximum. Past the last range, the batch's loads repeat it and count for nothing.
  let last = params.splits - 1u;
  var sums = Sums(LOWEST, 0.0, vec4<f32>(0.0));
  for (var s0 = 0u; s0 < params.splits; s0 += MERGE_BATCH) {
    var ml: array<vec2<f32>, MERGE_BATCH>;
    var op: array<vec4<f32>, MERGE_BATCH>;
    for (var u = 0u; u < MERGE_BATCH; u++) {
      let part = (pair * params.splits + min(s0 + u, last)) * R + r;
      ml[u] = ML[params.headTerms + part];
      op[u] = Opart[part * DV4 + col];
    }
    var Mb = sums.M;
    for (var u = 0u; u < MERGE_BATCH; u++) { Mb = max(Mb, ml[u].x); }
    sums = movedTo(sums, Mb);
    for (var u = 0u; u < MERGE_BATCH; u++) { sums = withRange(sums, ml[u], op[u], s0 + u <= last); }
  }
  finishRow(pair, r, col, sums);
}

// A row's sums over the ranges merged so far, relative to their maximum M: ℓ = Σ 2^(m_s − M) ℓ_s and O = Σ 2^(m_s − M) O_s.
struct Sums {
  M: f32,
  total: f32,
  acc: vec4<f32>,
}

// The sums relative to a maximum Mb ≥ their M: times 2^(M − Mb), 0 from LOWEST, 1 while no range has seen a key.
fn movedTo(sums: Sums, Mb: f32) -> Sums {
  let moved = exp2(sums.M - Mb);
  return Sums(Mb, sums.total * moved, sums.acc * moved);
}

// The sums with one range's m, ℓ (ml) and O (op) added, where `counts` (a range repeated past the last adds nothing);
// its m is at most the sums' M.
fn withRange(sums: Sums, ml: vec2<f32>, op: vec4<f32>, counts: bool) -> Sums {
  let scale = select(0.0, exp2(ml.x - sums.M), counts);
  return Sums(sums.M, sums.total + scale * ml.y, sums.acc + scale * op);
}

// Row r of pair `pair`, vec4 `col` of O from the sums over all its ranges, and the row's log-sum-exp from its first
// vec4's invocation: for `combine` and the lane loop's `combineLanes`.
fn finishRow(pair: u32, r: u32, col: u32, sums: Sums) {
  let M = sums.M;
  let total = sums.total;
  let acc = sums.acc;
  let seen = M > LOWEST;
  let b = pair / params.Hkv;
  let h = queryHead(pair % params.Hkv, r);
  let i = r % params.Lq;
  var denominator = total;
  var x = M + log2(total);           // the log-sum-exp in base 2
  if (params.sinks == 1u) {
    let sink = ML[h].y;
    denominator = total + exp2(min(sink - M, 126.0));
    let top = max(M, sink);
    x = top + log2(total * exp2(M - top) + exp2(sink - top));
  }
  O[b * params.oBatch + h * params.oHead + i * params.oRow + col] = pack(select(vec4<f32>(0.0), acc / denominator, seen));
  if (LSE == 1u && col == 0u) {
    lse[(b * params.Hq + h) * params.Lq + i] = select(bitcast<f32>(params.minusInfinity), x * 0.6931471805599453, seen || params.sinks == 1u);
  }
}
