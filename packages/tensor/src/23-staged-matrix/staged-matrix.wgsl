// Rung 23 — staged-matrix: rung 17's compensated products, with K_j and V_j staged once per workgroup in padded
// workgroup memory and shared by several subgroups, and a softmax laid out so that each row belongs to two invocations.
//
// Changed from compensated-matrix: in rung 17 each workgroup is one subgroup, which loads every K and V fragment from
// the scratch buffer itself, and its softmax and O update walk the S and P̃ V_j tiles with 32 invocations on rows of 64
// f32 or f16, whose fragment rows start in the same banks. Here:
// 1. A workgroup is NSG subgroups (4 at d ≤ 64), each with its own 16 query rows. Per tile of BC = 32 keys the
//    workgroup copies the high and low parts of K_j and V_j into workgroup tiles with rows of D + 8 f16 (a fragment's
//    16 rows then start in different banks), once for all NSG · 16 rows.
// 2. The copy is plain vector loads of 8 f16 (the scratch buffer read as vec4<u32>), issued at the top of the previous
//    tile and written to workgroup memory after it. Copying with subgroupMatrixLoad from the storage buffer and
//    subgroupMatrixStore cost more than all the rest of the loop; the vector copy costs little.
// 3. Invocation `lane` of a subgroup owns row r = lane / 2 of its 16 rows and every other column (h = lane % 2) of S
//    and of O: the row's maximum and sum need one shuffle, its rescale factor is the invocation's own, and O's 16 · D
//    values live in registers, D / 2 per invocation. Columns rotate by one pair for rows 8-15 so that a read of the 32
//    invocations touches 32 banks of the padded rows (stride SO ≡ 4 mod 32 words).
// 4. The two key fragments of a tile have their chains of S multiply-accumulates interleaved: each chain is 3·D/16
//    dependent products, and one's latency hides behind the other's.
// The products are rung 17's, so the accuracy is fp32-grade as there.
// Why it should be faster: the subgroup-matrix microbenchmark measured fragment loads from padded workgroup rows far
// faster than from unpadded ones, and four subgroups per workgroup hiding much of the softmax round trip
// (docs/subgroup-matrix-bench.md).
// Faster than compensated-matrix at the same accuracy, and than PyTorch's fp32 SDPA at five of the six bench shapes.
// Measured: docs/rungs/23-staged-matrix.md.

enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;

alias L = subgroup_matrix_left<f16, 16, 16>;
alias R = subgroup_matrix_right<f16, 16, 16>;
alias A = subgroup_matrix_result<f32, 16, 16>;

override D: u32;       // head size, a multiple of 16, at most 128
override NSG: u32;     // subgroups (of 32 invocations) per workgroup, each with 16 query rows

const BC: u32 = 32u;       // keys per tile
const NC: u32 = 2u;        // BC / 16: key fragments per tile
const DK_MAX: u32 = 8u;    // most fragments across d
const PF_MAX: u32 = 16u;   // most vectors of the next tile one invocation holds in registers
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
override SO: u32 = max(BC, D) + 4u;  // row stride of a subgroup's S tile and P̃V_j tile (f32)
const PS: u32 = BC + 8u;             // row stride of the P̃ tiles (f16)
override WG: u32 = 32u * NSG;        // invocations per workgroup
override D8: u32 = D / 8u;           // vectors of 8 f16 per row
override TILE_VEC: u32 = 4u * BC * D8;           // vectors per staged tile (Kh, Kl, Vh, Vl)
override PF: u32 = min(PF_MAX, TILE_VEC / WG);   // of those, prefetched per invocation (TILE_VEC is a multiple of WG)

// Every workgroup variable is a multiple of 16 bytes: the matrix loads and stores need their arrays 16-byte aligned.
var<workgroup> KV: array<f16, 4u * KT>;       // Kh, Kl, Vh, Vl of tile j, BC rows of KS each
var<workgroup> Sf: array<f32, BR * SO>;       // per subgroup: its S tile, then its P̃ V_j tile (16 rows of SO)
var<workgroup> Ph: array<f16, BR * PS>;       // per subgroup: P̃, high part (16 rows of PS)
var<workgroup> Pl: array<f16, BR * PS>;       // per subgroup: P̃, low part

/** x rounded to 11 significant bits (f16's precision) on its bits: x − hi(x) is exact and cannot be folded to 0. */
fn hi(x: vec4<f32>) -> vec4<f32> {
  return bitcast<vec4<f32>>((bitcast<vec4<u32>>(x) + vec4<u32>(0x1000u)) & vec4<u32>(0xffffe000u));
}

fn hi1(x: f32) -> f32 {
  return bitcast<f32>((bitcast<u32>(x) + 0x1000u) & 0xffffe000u);
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

  // Q_i, high and low parts, through KV (its 4·BC rows hold the 2·BR of Q_i): each subgroup keeps the DK fragments of
  // each part of its 16 rows in registers for the whole key loop.
  for (var e = t; e < 2u * BR * D8; e += WG) {
    let part = e / (BR * D8);         // 0 Qh, 1 Ql
    let row = (e / D8) % BR;
    put8((part * BR + row) * KS + 8u * (e % D8), qkv16v[(q0 + (part * params.NP + i * BR + row) * D) / 8u + e % D8]);
  }
  workgroupBarrier();
  let row0 = i * BR + 16u * sg;
  var qh: array<L, DK_MAX>;
  var ql: array<L, DK_MAX>;
  for (var k = 0u; k < DK; k++) {
    qh[k] = subgroupMatrixLoad<L, row_major>(&KV, 16u * sg * KS + 16u * k, KS);
    ql[k] = subgroupMatrixLoad<L, row_major>(&KV, (BR + 16u * sg) * KS + 16u * k, KS);
  }
  workgroupBarrier();  // every subgroup has its Q fragments; KV takes the key tiles

  // This invocation's row r of the subgroup's 16 and its half h of the columns; `rot` turns rows 8-15 by one pair.
  let r = lane / 2u;
  let h = lane % 2u;
  let rot = r / 8u;
  let sBase = 16u * sg * SO + r * SO;   // row r of this subgroup's S (and P̃V_j) tile
  let pBase = 16u * sg * PS + r * PS;   // row r of this subgroup's P̃ tiles
  var m = LOWEST;                       // the row's running maximum (base 2)
  var l = 0.0;                          // this invocation's half of the row's running sum
  var o: array<f32, 64>;                // O of row r, columns 2·((k + rot) mod D/2) + h
  for (var k = 0u; k < D / 2u; k++) { o[k] = 0.0; }

  let Tc = (N + BC - 1u) / BC;
  for (var e = t; e < TILE_VEC; e += WG) { put8(tileSlot(e), tileVector(kv0, 0u, e)); }
  for (var j = 0u; j < Tc; j++) {
    workgroupBarrier();  // tile j is in KV; every subgroup has read its previous P̃V_j tile

    // The next tile's first PF vectors per invocation are read now and written to KV after this tile: their
    // latency hides behind this tile's work.
    // (Written out here: the same copy through tileVector, tileSlot and put8 measured 3.95 against 3.20 ms at
    // 100×2048×64.)
    let more = j + 1u < Tc;
    var next: array<vec4<u32>, PF_MAX>;
    if (more) {
      for (var u = 0u; u < PF; u++) {
        let e = t + WG * u;
        let part = e / (BC * D8);
        let row = (e / D8) % BC;
        next[u] = qkv16v[kv0 + (part * params.NP + (j + 1u) * BC + row) * D8 + e % D8];
      }
    }

    // S = Q_i K_jᵀ for this subgroup's 16 rows, the three products from the smallest up. The NC = 2 key fragments'
    // chains of multiply-accumulates are interleaved, so that each one's latency hides behind the other's.
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
    workgroupBarrier();

    // Online softmax of row r in f32: its maximum over both halves (one shuffle), P̃ = 2^(S − m) split into high and
    // low f16 parts, the invocation's half of the row sum. Keys past N do not count.
    var sv: array<f32, 16>;   // BC / 2
    var mx = LOWEST;
    for (var k = 0u; k < BC / 2u; k++) {
      let col = 2u * ((k + rot) % (BC / 2u)) + h;
      sv[k] = LOWEST;
      if (j * BC + col < N) { sv[k] = Sf[sBase + col]; }
      mx = max(mx, sv[k]);
    }
    let mNew = max(m, max(mx, subgroupShuffleXor(mx, 1u)));
    let alpha = exp2(m - mNew);
    m = mNew;
    var sum = 0.0;
    for (var k = 0u; k < BC / 2u; k++) {
      let col = 2u * ((k + rot) % (BC / 2u)) + h;
      let p = exp2(sv[k] - mNew);
      sum += p;
      let ph = hi1(p);
      Ph[pBase + col] = f16(ph);
      Pl[pBase + col] = f16(p - ph);
    }
    l = l * alpha + sum;
    workgroupBarrier();  // the P̃ tiles are written; S is read

    // This tile's P̃ V_j from zero, into the subgroup's Sf rows.
    var ot: array<A, DK_MAX>;
    for (var n = 0u; n < DK; n++) { ot[n] = A(); }
    for (var c = 0u; c < NC; c++) {
      let ph = subgroupMatrixLoad<L, row_major>(&Ph, 16u * sg * PS + 16u * c, PS);
      let pl = subgroupMatrixLoad<L, row_major>(&Pl, 16u * sg * PS + 16u * c, PS);
      for (var n = 0u; n < DK; n++) {
        let vh = subgroupMatrixLoad<R, row_major>(&KV, 2u * KT + 16u * c * KS + 16u * n, KS);
        let vl = subgroupMatrixLoad<R, row_major>(&KV, 3u * KT + 16u * c * KS + 16u * n, KS);
        ot[n] = subgroupMatrixMultiplyAccumulate(pl, vh, ot[n]);
        ot[n] = subgroupMatrixMultiplyAccumulate(ph, vl, ot[n]);
        ot[n] = subgroupMatrixMultiplyAccumulate(ph, vh, ot[n]);
      }
    }
    for (var n = 0u; n < DK; n++) { subgroupMatrixStore<row_major>(&Sf, 16u * sg * SO + 16u * n, ot[n], SO); }
    workgroupBarrier();  // P̃V_j is in Sf; every subgroup is done with tile j of KV

    // Tile j + 1 into KV (the vectors past PF · WG, at d > 64, are read here), then O = α · O + P̃ V_j in f32 registers.
    if (more) {
      for (var u = 0u; u < PF; u++) {
        let e = t + WG * u;
        let at = (e / (BC * D8)) * KT + ((e / D8) % BC) * KS + 8u * (e % D8);
        let w = next[u];
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
      for (var e = t + WG * PF; e < TILE_VEC; e += WG) { put8(tileSlot(e), tileVector(kv0, j + 1u, e)); }
    }
    for (var k = 0u; k < D / 2u; k++) {
      o[k] = o[k] * alpha + Sf[sBase + 2u * ((k + rot) % (D / 2u)) + h];
    }
  }

  // O_i = O / ℓ_i, rows past N not written.
  let inv = 1.0 / (l + subgroupShuffleXor(l, 1u));
  let row = row0 + r;
  if (row < N) {
    for (var k = 0u; k < D / 2u; k++) {
      O[(b * N + row) * D + 2u * ((k + rot) % (D / 2u)) + h] = o[k] * inv;
    }
  }
}
