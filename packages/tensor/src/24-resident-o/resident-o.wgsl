// Rung 24 — resident-o: staged-matrix with O accumulated in the matrix units over 256 keys at a time, the softmax's
// rescale made lazy, and the K and V tiles copied at different points: no O update per tile, and three points per
// tile where the workgroup waits instead of four.
//
// Changed from staged-matrix: there each tile's P̃V_j was computed from zero, stored to workgroup memory and added to O
// in f32 registers by the two invocations that own the row (O = α·O + P̃V_j): per 32-key tile, DK stores of a 16×16
// f32 fragment, D/2 loads and multiply-adds per invocation, and a fourth barrier. Here:
// 1. The products of FLUSH tiles (256 keys) accumulate straight into DK result fragments, o += P̃h·Vh + P̃h·Vl + P̃l·Vh;
//    only then is o added to O in f32 registers (oRow). Never flushing costs accuracy (the matrix units' accumulation
//    is not round-to-nearest f32); 256 keys per flush do not.
// 2. The rescale is lazy, as in the fp32 rungs from row-split on: m_i moves only when a score passes it by more than
//    TAU = 8 (base 2), so P̃ ≤ 2^8. A move forces a flush, in which α multiplies oRow and the flushed fragments.
//    Whether any row moved is read with workgroupUniformLoad (a flush has barriers, which need uniform control flow).
// 3. The next K tile is written right after the S products and V_j at the top of the tile: no barrier waits for a copy
//    alone, and both are read into registers a tile ahead.
// Why it should be faster: no O update and one barrier fewer per tile. Everything else is staged-matrix's:
// docs/rungs/23-staged-matrix.md. Measured: docs/rungs/24-resident-o.md.
// Since it landed (not this rung's idea; each change and its measurements: docs/sdpa.md, "History: ideas measured
// on the rungs after they landed"), this file also holds:
// - where that fits more subgroups (d = 80-128), S tiles BC columns wide, o passing through them OW columns at a time
//   in a flush (rung 25's, 2026-11-25);
// - the softmax reading four neighbouring keys at a time (rung 25's, 2026-11-26);
// - where 32-key tiles fit fewer than four subgroups (d = 112, 128), tiles of 16 keys and four subgroups, Q_i's two
//   parts staged one after the other (2026-11-26).

enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;

alias L = subgroup_matrix_left<f16, 16, 16>;
alias R = subgroup_matrix_right<f16, 16, 16>;
alias A = subgroup_matrix_result<f32, 16, 16>;

override D: u32;       // head size, a multiple of 16, at most 128
override NSG: u32;     // subgroups (of 32 invocations) per workgroup, each with 16 query rows
override BC: u32 = 32u;    // keys per tile: 32, or 16 where 32-key tiles fit fewer subgroups (d = 112, 128); no other
override FLUSH: u32 = 256u / BC;  // tiles (256 keys) accumulated in the matrix units between additions to O in f32

const BC_MAX: u32 = 32u;   // most keys per tile
const DK_MAX: u32 = 8u;    // most fragments across d
const PH_MAX: u32 = 8u;    // most vectors of each half of a tile one invocation reads a step ahead
const TAU: f32 = 8.0;      // how far a score may pass m_i before O and ℓ are rescaled (P̃ ≤ 2^TAU)
const LOWEST: f32 = -3.0e38;

struct Params {
  N: u32,
  NP: u32,         // N rounded up to a multiple of 64: rows of each matrix in the scratch buffer
  batches: u32,
  scaleLog2: f32,  // log2(e)/√d
}

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;       // per batch: Q, K, V, each N × d
@group(0) @binding(1) var<storage, read_write> O: array<f32>;         // batches × N × d
@group(0) @binding(2) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read_write> qkv16: array<f16>;     // per batch: high and low parts of Q·scale, K, V, each NP × d
@group(0) @binding(4) var<storage, read> qkv16v: array<vec4<u32>>;    // the same buffer, 8 f16 per element (main reads it so)

override DK: u32 = D / 16u;          // fragments across d
override BR: u32 = 16u * NSG;        // query rows per workgroup
override KS: u32 = D + 8u;           // row stride of the K and V tiles (f16)
override KT: u32 = BC * KS;          // one K or V tile
override NC: u32 = BC / 16u;         // key fragments per tile
// Columns of o that pass through a subgroup's S tile at once (a flush takes D / OW rounds): min(BC, D) where that
// divides D, else 16, so that the S tiles are BC columns wide, not D. The plan sets OW = D (one round, rung 24's
// first form) unless the narrow tiles fit more subgroups: at d = 80-128 they fit twice as many.
override OW: u32 = 16u + (min(BC, D) - 16u) * (1u - min(D % min(BC, D), 1u));
override SO: u32 = max(BC, OW) + 4u; // row stride of a subgroup's S tile (f32)
override PS: u32 = BC + 8u;          // row stride of the P̃ tiles (f16)
override WG: u32 = 32u * NSG;        // invocations per workgroup
override D8: u32 = D / 8u;           // vectors of 8 f16 per row
override TILE_VEC: u32 = 4u * BC * D8;           // vectors per staged tile (Kh, Kl, Vh, Vl)
override KH: u32 = TILE_VEC / 2u;                // of those, Kh and Kl (Vh and Vl follow)
override PH: u32 = min(PH_MAX, KH / WG);         // of each half, read a step ahead per invocation (the rest in a loop)

// Every workgroup variable is a multiple of 16 bytes: the matrix loads and stores need their arrays 16-byte aligned.
var<workgroup> KV: array<f16, max(4u * KT, BR * KS)>;  // Kh, Kl, Vh, Vl of tile j, BC rows of KS each (first Q_i)
var<workgroup> Sf: array<f32, BR * SO>;       // per subgroup: its S tile, or OW columns of o in a flush (16 rows of SO)
var<workgroup> Ph: array<f16, BR * PS>;       // per subgroup: P̃, high part (16 rows of PS)
var<workgroup> Pl: array<f16, BR * PS>;       // per subgroup: P̃, low part
var<workgroup> movedAt: vec4<u32>;            // .x: the last tile at which some row's m_i moved (16 bytes, as above)

/** x rounded to 11 significant bits (f16's precision) on its bits: x − hi(x) is exact and cannot be folded to 0. */
fn hi(x: vec4<f32>) -> vec4<f32> {
  return bitcast<vec4<f32>>((bitcast<vec4<u32>>(x) + vec4<u32>(0x1000u)) & vec4<u32>(0xffffe000u));
}

// One invocation per 4 values of Q·scale, K, V: their high and low parts as f16, rows N..NP-1 zero.
@compute @workgroup_size(256)
fn convert(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
           @builtin(local_invocation_index) t: u32) {
  let e = (wid.y * nwg.x + wid.x) * 256u + t;
  let D4 = D / 4u;
  let perMatrix = params.NP * D4;
  if (e >= params.batches * 3u * perMatrix) { return; }
  let matrix = e / perMatrix;        // 3·b + (0: Q, 1: K, 2: V)
  let row = (e % perMatrix) / D4;
  let x = e % D4;
  var v = vec4<f32>(0.0);
  if (row < params.N) {
    v = qkv[(matrix * params.N + row) * D4 + x];
    if (matrix % 3u == 0u) { v *= params.scaleLog2; }
  }
  let h = hi(v);
  let lo = v - h;
  let at = (2u * matrix * params.NP + row) * D + 4u * x;   // high part; the low part follows NP rows later
  qkv16[at] = f16(h.x);
  qkv16[at + 1u] = f16(h.y);
  qkv16[at + 2u] = f16(h.z);
  qkv16[at + 3u] = f16(h.w);
  let atLo = at + params.NP * D;
  qkv16[atLo] = f16(lo.x);
  qkv16[atLo + 1u] = f16(lo.y);
  qkv16[atLo + 2u] = f16(lo.z);
  qkv16[atLo + 3u] = f16(lo.w);
}

// Vector e of tile jt of Kh, Kl, Vh, Vl in the scratch buffer (kv0: Kh of the batch, in vectors); e counts 8 f16 at a
// time along the rows of the four matrices, so neighbouring invocations read neighbouring 16 bytes.
fn tileVector(kv0: u32, jt: u32, e: u32) -> vec4<u32> {
  let part = e / (BC * D8);           // 0 Kh, 1 Kl, 2 Vh, 3 Vl: NP rows apart in the scratch buffer
  let row = (e / D8) % BC;
  return qkv16v[kv0 + (part * params.NP + jt * BC + row) * D8 + e % D8];
}

// Where vector e of a tile goes in KV.
fn tileSlot(e: u32) -> u32 {
  return (e / (BC * D8)) * KT + ((e / D8) % BC) * KS + 8u * (e % D8);
}

// Writes 8 f16 (one vector of the scratch buffer) to KV at `at`.
fn put8(at: u32, w: vec4<u32>) {
  let a = bitcast<vec2<f16>>(w.x);
  let b = bitcast<vec2<f16>>(w.y);
  let c = bitcast<vec2<f16>>(w.z);
  let d = bitcast<vec2<f16>>(w.w);
  KV[at] = a.x;
  KV[at + 1u] = a.y;
  KV[at + 2u] = b.x;
  KV[at + 3u] = b.y;
  KV[at + 4u] = c.x;
  KV[at + 5u] = c.y;
  KV[at + 6u] = d.x;
  KV[at + 7u] = d.y;
}

// BR rows of one part of Q_i (from vector `src` of the scratch buffer on) into KV from row `row0`, rows KS apart.
fn stageQ(src: u32, row0: u32, t: u32) {
  for (var e = t; e < BR * D8; e += WG) { put8((row0 + e / D8) * KS + 8u * (e % D8), qkv16v[src + e]); }
}

@compute @workgroup_size(32u * NSG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32,
        @builtin(subgroup_id) sg: u32, @builtin(subgroup_invocation_id) lane: u32) {
  let N = params.N;
  let Tr = (N + BR - 1u) / BR;
  let w = wid.y * nwg.x + wid.x;     // one workgroup per (batch, query tile)
  let b = w / Tr;
  let i = w % Tr;
  if (b >= params.batches) { return; }
  let q0 = 6u * b * params.NP * D;   // Qh of batch b in qkv16; Ql, Kh, Kl, Vh, Vl follow, NP rows apart
  let kv0 = (q0 + 2u * params.NP * D) / 8u;   // Kh, in vectors of 8 f16

  // Q_i's high and low parts through KV: each subgroup keeps the DK fragments of each part of its 16 rows in registers
  // for the whole key loop.
  let row0 = i * BR + 16u * sg;
  var qh: array<L, DK_MAX>;
  var ql: array<L, DK_MAX>;
  let qh0 = q0 / 8u + i * BR * D8;                 // Qh of Q_i, in vectors; Ql NP rows later
  let ql0 = qh0 + params.NP * D8;
  if (2u * BR <= 4u * BC) {                        // both parts at once (32-key tiles), in one loop (two: 4% slower)
    for (var e = t; e < 2u * BR * D8; e += WG) {
      let part = e / (BR * D8);         // 0 Qh, 1 Ql
      let row = (e / D8) % BR;
      put8((part * BR + row) * KS + 8u * (e % D8), qkv16v[(q0 + (part * params.NP + i * BR + row) * D) / 8u + e % D8]);
    }
    workgroupBarrier();
    for (var k = 0u; k < DK; k++) {
      qh[k] = subgroupMatrixLoad<L, row_major>(&KV, 16u * sg * KS + 16u * k, KS);
      ql[k] = subgroupMatrixLoad<L, row_major>(&KV, (BR + 16u * sg) * KS + 16u * k, KS);
    }
  } else {                                         // one after the other (16-key tiles)
    stageQ(qh0, 0u, t);
    workgroupBarrier();
    for (var k = 0u; k < DK; k++) { qh[k] = subgroupMatrixLoad<L, row_major>(&KV, 16u * sg * KS + 16u * k, KS); }
    workgroupBarrier();
    stageQ(ql0, 0u, t);
    workgroupBarrier();
    for (var k = 0u; k < DK; k++) { ql[k] = subgroupMatrixLoad<L, row_major>(&KV, 16u * sg * KS + 16u * k, KS); }
  }
  workgroupBarrier();  // every subgroup has its Q fragments; KV takes the key tiles

  // This invocation's row r of the subgroup's 16 and its half h of the columns; `rot` turns rows 8-15 by one pair of
  // columns in a flush and by one pair of vectors in the softmax.
  let r = lane / 2u;
  let h = lane % 2u;
  let rot = r / 8u;
  let sBase = 16u * sg * SO + r * SO;   // row r of this subgroup's S tile (and of O, when it passes through)
  let pBase = 16u * sg * PS + r * PS;   // row r of this subgroup's P̃ tiles
  var m = LOWEST;                       // the row's m_i (base 2): moves only past m_i + TAU
  var l = 0.0;                          // this invocation's half of the row's running sum
  var o: array<A, DK_MAX>;              // the subgroup's 16 rows of O since the last flush, DK fragments across d
  for (var n = 0u; n < DK; n++) { o[n] = A(); }
  var oRow: array<f32, 64>;             // row r of O up to the last flush: oRow[8·n0 + k] is column
                                        // 16·n0 + 2·((k + rot) mod OW/2) + h, n0 a multiple of OW/16
  for (var k = 0u; k < D / 2u; k++) { oRow[k] = 0.0; }

  // K_0 into KV now; V_0 and every later tile's vectors through registers, a step ahead (KH: the K half of a tile).
  let Tc = (N + BC - 1u) / BC;
  for (var e = t; e < KH; e += WG) { put8(tileSlot(e), tileVector(kv0, 0u, e)); }
  var nextK: array<vec4<u32>, PH_MAX>;
  var nextV: array<vec4<u32>, PH_MAX>;
  for (var u = 0u; u < PH; u++) {
    nextV[u] = tileVector(kv0, 0u, KH + t + WG * u);
  }
  for (var j = 0u; j < Tc; j++) {
    workgroupBarrier();  // K_j is in KV; every subgroup is done with V_(j−1)

    // V_j into KV (read during the previous tile), then the reads of K_(j+1) and V_(j+1) into registers. (Both copies
    // written out rather than through put8 and tileSlot, as in staged-matrix's loop, where the functions measured
    // slower.)
    for (var u = 0u; u < PH; u++) {
      let e = KH + t + WG * u;
      let at = (e / (BC * D8)) * KT + ((e / D8) % BC) * KS + 8u * (e % D8);
      let w = nextV[u];
      let a = bitcast<vec2<f16>>(w.x);
      let b = bitcast<vec2<f16>>(w.y);
      let c = bitcast<vec2<f16>>(w.z);
      let d = bitcast<vec2<f16>>(w.w);
      KV[at] = a.x;
      KV[at + 1u] = a.y;
      KV[at + 2u] = b.x;
      KV[at + 3u] = b.y;
      KV[at + 4u] = c.x;
      KV[at + 5u] = c.y;
      KV[at + 6u] = d.x;
      KV[at + 7u] = d.y;
    }
    for (var e = KH + t + WG * PH; e < TILE_VEC; e += WG) { put8(tileSlot(e), tileVector(kv0, j, e)); }
    let more = j + 1u < Tc;
    if (more) {
      for (var u = 0u; u < PH; u++) {
        let e = t + WG * u;
        nextK[u] = qkv16v[kv0 + ((e / (BC * D8)) * params.NP + (j + 1u) * BC + (e / D8) % BC) * D8 + e % D8];
        let f = KH + e;
        nextV[u] = qkv16v[kv0 + ((f / (BC * D8)) * params.NP + (j + 1u) * BC + (f / D8) % BC) * D8 + f % D8];
      }
    }

    // S = Q_i K_jᵀ for this subgroup's 16 rows, the three products from the smallest up. With two key fragments their
    // chains of multiply-accumulates are interleaved, so that each one's latency hides behind the other's. (Written as
    // loops over NC fragments, or with the one-fragment case under an `if` inside the loop, it ran 7-8% slower.)
    if (NC == 2u) {
      var s0 = A();
      var s1 = A();
      for (var k = 0u; k < DK; k++) {
        let kh0 = subgroupMatrixLoad<R, col_major>(&KV, 16u * k, KS);
        let kl0 = subgroupMatrixLoad<R, col_major>(&KV, KT + 16u * k, KS);
        let kh1 = subgroupMatrixLoad<R, col_major>(&KV, 16u * KS + 16u * k, KS);
        let kl1 = subgroupMatrixLoad<R, col_major>(&KV, KT + 16u * KS + 16u * k, KS);
        s0 = subgroupMatrixMultiplyAccumulate(ql[k], kh0, s0);
        s1 = subgroupMatrixMultiplyAccumulate(ql[k], kh1, s1);
        s0 = subgroupMatrixMultiplyAccumulate(qh[k], kl0, s0);
        s1 = subgroupMatrixMultiplyAccumulate(qh[k], kl1, s1);
        s0 = subgroupMatrixMultiplyAccumulate(qh[k], kh0, s0);
        s1 = subgroupMatrixMultiplyAccumulate(qh[k], kh1, s1);
      }
      subgroupMatrixStore<row_major>(&Sf, 16u * sg * SO, s0, SO);
      subgroupMatrixStore<row_major>(&Sf, 16u * sg * SO + 16u, s1, SO);
    } else {
      var s0 = A();
      for (var k = 0u; k < DK; k++) {
        let kh0 = subgroupMatrixLoad<R, col_major>(&KV, 16u * k, KS);
        let kl0 = subgroupMatrixLoad<R, col_major>(&KV, KT + 16u * k, KS);
        s0 = subgroupMatrixMultiplyAccumulate(ql[k], kh0, s0);
        s0 = subgroupMatrixMultiplyAccumulate(qh[k], kl0, s0);
        s0 = subgroupMatrixMultiplyAccumulate(qh[k], kh0, s0);
      }
      subgroupMatrixStore<row_major>(&Sf, 16u * sg * SO, s0, SO);
    }
    workgroupBarrier();  // S is in Sf; every subgroup is done with K_j

    // K_(j+1) into KV.
    if (more) {
      for (var u = 0u; u < PH; u++) {
        let e = t + WG * u;
        let at = (e / (BC * D8)) * KT + ((e / D8) % BC) * KS + 8u * (e % D8);
        let w = nextK[u];
        let a = bitcast<vec2<f16>>(w.x);
        let b = bitcast<vec2<f16>>(w.y);
        let c = bitcast<vec2<f16>>(w.z);
        let d = bitcast<vec2<f16>>(w.w);
        KV[at] = a.x;
        KV[at + 1u] = a.y;
        KV[at + 2u] = b.x;
        KV[at + 3u] = b.y;
        KV[at + 4u] = c.x;
        KV[at + 5u] = c.y;
        KV[at + 6u] = d.x;
        KV[at + 7u] = d.y;
      }
      for (var e = t + WG * PH; e < KH; e += WG) { put8(tileSlot(e), tileVector(kv0, j + 1u, e)); }
    }

    // Online softmax of row r in f32, lazily: its maximum over both halves (one shuffle); m_i moves only when the
    // row passes it by more than TAU, and then (past the first tile) O must be rescaled by α. P̃ = 2^(S − m_i) split
    // into high and low f16 parts, the invocation's half of the row sum. Keys past N do not count. The invocation's
    // BC/2 keys are BC/8 vectors of four neighbouring keys: vector k starts at key 4·(2·((k + rot) mod BC/8) + h).
    var sv: array<vec4<f32>, BC_MAX / 8u>;
    var mx = LOWEST;
    for (var k = 0u; k < BC / 8u; k++) {
      let col = 4u * (2u * ((k + rot) % (BC / 8u)) + h);
      let at = sBase + col;
      let key = vec4<u32>(j * BC + col) + vec4<u32>(0u, 1u, 2u, 3u);
      let v = select(vec4<f32>(LOWEST), vec4<f32>(Sf[at], Sf[at + 1u], Sf[at + 2u], Sf[at + 3u]), key < vec4<u32>(N));
      sv[k] = v;
      mx = max(mx, max(max(v.x, v.y), max(v.z, v.w)));
    }
    mx = max(mx, subgroupShuffleXor(mx, 1u));
    var alpha = 1.0;
    if (mx > m + TAU) {
      alpha = exp2(m - mx);
      m = mx;
      l *= alpha;
      if (j > 0u) { movedAt.x = j; }   // O holds earlier tiles: flush it, times α, before this one is added
    }
    var sum = 0.0;
    for (var k = 0u; k < BC / 8u; k++) {
      let col = 4u * (2u * ((k + rot) % (BC / 8u)) + h);
      let p = exp2(sv[k] - m);
      sum += (p.x + p.y) + (p.z + p.w);
      let ph = hi(p);
      let pl = p - ph;
      let at = pBase + col;
      Ph[at] = f16(ph.x); Ph[at + 1u] = f16(ph.y); Ph[at + 2u] = f16(ph.z); Ph[at + 3u] = f16(ph.w);
      Pl[at] = f16(pl.x); Pl[at + 1u] = f16(pl.y); Pl[at + 2u] = f16(pl.z); Pl[at + 3u] = f16(pl.w);
    }
    l += sum;
    // The P̃ tiles and V_j are in workgroup memory and every S tile is read (the barrier in the uniform load). Every
    // FLUSH tiles, and whenever some row's m_i moved, oRow = α · (oRow + o) and o starts again from zero.
    let moved = workgroupUniformLoad(&movedAt).x == j && j > 0u;
    if (moved || (j % FLUSH == 0u && j > 0u)) {
      for (var n0 = 0u; n0 < DK; n0 += OW / 16u) {
        if (n0 > 0u) { workgroupBarrier(); }  // the last round is read
        for (var n = 0u; n < OW / 16u; n++) {
          subgroupMatrixStore<row_major>(&Sf, 16u * sg * SO + 16u * n, o[n0 + n], SO);
        }
        workgroupBarrier();
        for (var k = 0u; k < OW / 2u; k++) {
          oRow[8u * n0 + k] = (oRow[8u * n0 + k] + Sf[sBase + 2u * ((k + rot) % (OW / 2u)) + h]) * alpha;
        }
      }
      for (var n = 0u; n < DK; n++) { o[n] = A(); }
    }

    // o += P̃ V_j, the three products from the smallest up.
    for (var c = 0u; c < NC; c++) {
      let ph = subgroupMatrixLoad<L, row_major>(&Ph, 16u * sg * PS + 16u * c, PS);
      let pl = subgroupMatrixLoad<L, row_major>(&Pl, 16u * sg * PS + 16u * c, PS);
      for (var n = 0u; n < DK; n++) {
        let vh = subgroupMatrixLoad<R, row_major>(&KV, 2u * KT + 16u * c * KS + 16u * n, KS);
        let vl = subgroupMatrixLoad<R, row_major>(&KV, 3u * KT + 16u * c * KS + 16u * n, KS);
        o[n] = subgroupMatrixMultiplyAccumulate(pl, vh, o[n]);
        o[n] = subgroupMatrixMultiplyAccumulate(ph, vl, o[n]);
        o[n] = subgroupMatrixMultiplyAccumulate(ph, vh, o[n]);
      }
    }
  }

  // O_i = (oRow + o) / ℓ_i, o through the subgroup's Sf rows; rows past N not written.
  let inv = 1.0 / (l + subgroupShuffleXor(l, 1u));
  let row = row0 + r;
  for (var n0 = 0u; n0 < DK; n0 += OW / 16u) {
    workgroupBarrier();  // every subgroup has read its last S tile, or the last round
    for (var n = 0u; n < OW / 16u; n++) {
      subgroupMatrixStore<row_major>(&Sf, 16u * sg * SO + 16u * n, o[n0 + n], SO);
    }
    workgroupBarrier();
    if (row < N) {
      for (var k = 0u; k < OW / 2u; k++) {
        let col = 2u * ((k + rot) % (OW / 2u)) + h;
        O[(b * N + row) * D + 16u * n0 + col] = (oRow[8u * n0 + k] + Sf[sBase + col]) * inv;
      }
    }
  }
}
