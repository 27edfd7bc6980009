// microtiles: an fp32 FlashAttention kernel built the way fp32 matrix kernels compute a product, each invocation
// accumulating an 8 × 8 block of scalars from operands read out of workgroup memory. An experiment, not a rung: on an
// H100 it ran 2.6× slower than split-softmax (rung 22), and docs/workgroup-reads-bench.md says why with numbers.
// Timed and checked by the microtiles-variants experiment (experiments/README.md).
//
// The idea, against split-softmax: there Q_i and O stay in registers and each vec4 read of K_j or V_j feeds 8
// multiply-adds (two rows × 4); a loop of nothing but such reads tops at about 37 TFLOP/s, and more rows per
// invocation do not fit the registers. Here Q_iᵀ (scaled by log2(e)/√d) lives in workgroup memory beside K_jᵀ, V_j and
// P̃ᵀ, and both products are register microtiles: per step of the shared dimension an invocation reads two vec4s of
// each operand and does 64 multiply-adds into its 8 × 8 block (16 per read; the same loop alone reaches 43 TFLOP/s).
// - `main` writes Kᵀ of every batch to a scratch buffer once (d rows of NP keys, zero past N), so that a tile of Kᵀ is
//   a straight copy; `attend` runs the tiles.
// - S: invocation (rg, cg, h) of the BR owns rows 8·rg … 8·rg + 7 and keys 4·cg … 4·cg + 3, 16 + 4·cg … 19 + 4·cg of
//   the 32-key tile, over the d-indices of parity h. One shuffle with the partner (h ^ 1) both adds the halves and
//   splits the rows (a reduce-scatter, as in rung 22): the invocation keeps rows 8·rg + 4·h … + 3 whole; two more
//   shuffle levels over cg give each row's maximum.
// - Softmax, lazily as in rungs 18-22 (m_i moves only past m_i + TAU, base 2): each invocation exponentiates its 4 rows
//   × 8 keys, keeps its share of ℓ_i, and stores P̃ᵀ (a vec4 of its 4 rows per key) and the rows' rescale factors α.
// - P̃ V: invocation (pr, pc) owns rows 8·pr … 8·pr + 7 and vec4 columns pc and pc + 8 of O (d = 64); per key it reads
//   two vec4s of P̃ᵀ (its 8 rows) and two of V_j (its 8 columns).
// - Two barriers per tile: K_j+1ᵀ, read into registers during S_ij, is written while P̃ V_j runs (Kᵀ_j was last read
//   before the first barrier), and V_j+1, read during P̃ V_j, after the second. Both loops read the next step's
//   operands before this step's multiply-adds.
// d = 32 or 64; BR = 64 query rows (and invocations) per workgroup, 32 where workgroup memory is short. Q_iᵀ, Kᵀ_j,
// V_j and P̃ᵀ take 45.8 KiB at d = 64 and BR = 64: at most four workgroups of two subgroups per SM of an H100, too few warps
// for the loops to run near their own speed.

enable subgroups;

override D: u32;                 // head size: 32 or 64
override BR: u32;                // query rows per workgroup, and invocations per workgroup: 32 or 64

const BC: u32 = 32u;             // keys per K/V tile
override KS4: u32;               // row stride of Kᵀ in vec4s: 12 (BC/4 = 8 plus 4: rows d and d + 1, the two halves, in
                                 // different banks) where workgroup memory allows, else 9
const LOWEST: f32 = -3.0e38;     // stands for −∞
const TAU: f32 = 8.0;            // how far a score may pass m_i before O and ℓ are rescaled (P̃ ≤ 2^TAU)

override WG: u32 = BR;           // invocations: BR/8 row groups × 4 key groups × 2 halves for S, × 8 columns for P̃ V
override QS4: u32 = (BR + 4u) / 4u;  // row stride of Qᵀ and P̃ᵀ in vec4s (padded)
override D4: u32 = D / 4u;       // vec4s per row of Q, K, V, O
override LD: u32 = D * BC / 4u / WG;  // vec4s of a K or V tile each invocation copies: 4-16
const LD_MAX: u32 = 16u;
override DH: u32 = D / 2u;       // d-indices per half in S
override CO: u32 = D / 32u;      // vec4 columns of O per invocation: 1 or 2

// Knock-outs for the experiment's variants: each one set otherwise removes one part of the loop and gives wrong
// results; it only shows what that part costs. (DH = 0 removes the S products.)
override STAGE: bool = true;     // false: the next tiles are never written to workgroup memory (tile 0 serves all)
override STORE_P: bool = true;   // false: P̃ᵀ and α are not written (P̃ V_j reads what is there)
override PV_KEYS: u32 = BC;      // keys of the P̃ V_j loop; 0: no P̃ V products

struct Params {
  N: u32,
  NP: u32,         // keys per row of Kᵀ: N rounded up to a whole tile
  batches: u32,
  scaleLog2: f32,  // log2(e)/√d
}

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;       // per batch: Q, K, V, each N × d
@group(0) @binding(1) var<storage, read_write> O: array<vec4<f32>>;   // batches × N × d
@group(0) @binding(2) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read_write> KT: array<vec4<f32>>;  // per batch Kᵀ: d rows of NP keys (zero past N)

var<workgroup> Qt: array<vec4<f32>, D * QS4>;    // Q_iᵀ · log2(e)/√d: row d holds the BR query rows' d-th values
var<workgroup> Kt: array<vec4<f32>, D * KS4>;    // K_jᵀ: row d holds the BC keys' d-th values
var<workgroup> Vj: array<vec4<f32>, BC * D4>;    // V_j as in memory
var<workgroup> Pt: array<vec4<f32>, BC * QS4>;   // P̃ᵀ: row c holds key c's P̃ for the BR rows
var<workgroup> rowScale: array<vec4<f32>, BR / 4u>;  // per row: this tile's α, at the end 1/ℓ_i

// m + a ⊗ b: column r of the block (row r's 4 values) gains a[r] · b. 16 multiply-adds.
fn rank1(m: mat4x4<f32>, a: vec4<f32>, b: vec4<f32>) -> mat4x4<f32> {
  return mat4x4<f32>(fma(vec4<f32>(a.x), b, m[0]), fma(vec4<f32>(a.y), b, m[1]),
                     fma(vec4<f32>(a.z), b, m[2]), fma(vec4<f32>(a.w), b, m[3]));
}

fn pick(first: mat4x4<f32>, second: mat4x4<f32>, takeFirst: bool) -> mat4x4<f32> {
  return mat4x4<f32>(select(second[0], first[0], takeFirst), select(second[1], first[1], takeFirst),
                     select(second[2], first[2], takeFirst), select(second[3], first[3], takeFirst));
}

fn shuffleXor(m: mat4x4<f32>, mask: u32) -> mat4x4<f32> {
  return mat4x4<f32>(subgroupShuffleXor(m[0], mask), subgroupShuffleXor(m[1], mask),
                     subgroupShuffleXor(m[2], mask), subgroupShuffleXor(m[3], mask));
}

fn scaleColumns(m: mat4x4<f32>, s: vec4<f32>) -> mat4x4<f32> {
  return mat4x4<f32>(m[0] * s.x, m[1] * s.y, m[2] * s.z, m[3] * s.w);
}

fn maxOfColumns(m: mat4x4<f32>) -> vec4<f32> {
  let t = transpose(m);
  return max(max(t[0], t[1]), max(t[2], t[3]));
}

fn sumOfColumns(m: mat4x4<f32>) -> vec4<f32> {
  let t = transpose(m);
  return (t[0] + t[1]) + (t[2] + t[3]);
}

// Masks the scores of keys at or past N (a column r holds row r's scores of keys first … first + 3).
fn maskKeys(m: mat4x4<f32>, first: u32, N: u32) -> mat4x4<f32> {
  let past = vec4<u32>(first) + vec4<u32>(0u, 1u, 2u, 3u) >= vec4<u32>(N);
  let low = vec4<f32>(LOWEST);
  return mat4x4<f32>(select(m[0], low, past), select(m[1], low, past), select(m[2], low, past), select(m[3], low, past));
}

// Kᵀ_j ← columns j·BC … j·BC + BC − 1 of the batch's Kᵀ (written by `main`): 8 vec4s per row, straight copies.
fn stageKeys(ktBase: u32, j: u32, t: u32) {
  for (var e = t; e < D * BC / 4u; e += WG) {
    let dd = e / (BC / 4u);
    let x = e % (BC / 4u);
    Kt[dd * KS4 + x] = KT[ktBase + dd * (params.NP / 4u) + j * (BC / 4u) + x];
  }
}

// V_j ← keys j·BC … of the batch (zero past N), row by row as in memory.
fn stageValues(vBase: u32, j: u32, N: u32, t: u32) {
  for (var e = t; e < BC * D4; e += WG) {
    var v = vec4<f32>(0.0);
    if (j * BC + e / D4 < N) { v = qkv[vBase + j * BC * D4 + e]; }
    Vj[e] = v;
  }
}

// O rows first … first + 3 (columns 0-3 of m), vec4 column x, of batch b; rows at or past N are not written.
fn storeRows(first: u32, m: mat4x4<f32>, b: u32, x: u32) {
  let N = params.N;
  if (first < N) { O[(b * N + first) * D4 + x] = m[0]; }
  if (first + 1u < N) { O[(b * N + first + 1u) * D4 + x] = m[1]; }
  if (first + 2u < N) { O[(b * N + first + 2u) * D4 + x] = m[2]; }
  if (first + 3u < N) { O[(b * N + first + 3u) * D4 + x] = m[3]; }
}

// Kᵀ of every batch, once per run (the first dispatch): invocation e writes key c of vec4 column x, so neighbouring
// invocations write neighbouring keys; keys N … NP − 1 are zero.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let N = params.N;
  let NP = params.NP;
  let e = gid.y * nwg.x * 256u + gid.x;
  let c = e % NP;
  let x = (e / NP) % D4;
  let b = e / (NP * D4);
  if (b >= params.batches) { return; }
  var k = vec4<f32>(0.0);
  if (c < N) { k = qkv[(b * 3u + 1u) * N * D4 + c * D4 + x]; }
  let row = b * D + 4u * x;           // Kᵀ rows of batch b, d = 4x … 4x + 3, as floats below
  let at = row * NP + c;
  KT[at / 4u][at % 4u] = k.x;
  KT[(at + NP) / 4u][at % 4u] = k.y;
  KT[(at + 2u * NP) / 4u][at % 4u] = k.z;
  KT[(at + 3u * NP) / 4u][at % 4u] = k.w;
}

@compute @workgroup_size(WG)
fn attend(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) t: u32) {
  let N = params.N;
  let Tr = (N + BR - 1u) / BR;
  let w = wid.y * nwg.x + wid.x;     // one workgroup per (batch, query tile)
  let b = w / Tr;
  let i = w % Tr;
  if (b >= params.batches) { return; }
  let qBase = b * 3u * N * D4;
  let vBase = qBase + 2u * N * D4;
  let ktBase = b * D * (params.NP / 4u);
  let Tc = (N + BC - 1u) / BC;

  // Q_iᵀ, scaled, once: invocation t writes consecutive rows of one vec4 column (rows past N are zero).
  for (var e = t; e < BR * D4; e += WG) {
    let r = e % BR;
    let x = e / BR;
    var q = vec4<f32>(0.0);
    if (i * BR + r < N) { q = qkv[qBase + (i * BR + r) * D4 + x] * params.scaleLog2; }
    let at = 4u * x * QS4 * 4u + r;
    Qt[at / 4u][at % 4u] = q.x;
    Qt[(at + 4u * QS4) / 4u][at % 4u] = q.y;
    Qt[(at + 8u * QS4) / 4u][at % 4u] = q.z;
    Qt[(at + 12u * QS4) / 4u][at % 4u] = q.w;
  }
  stageKeys(ktBase, 0u, t);
  stageValues(vBase, 0u, N, t);
  workgroupBarrier();

  // The S and softmax roles: rows 8·rg + 4·h … of the kept half, keys 4·cg … and 16 + 4·cg …, d-indices of parity h.
  let h = t & 1u;
  let cg = (t >> 1u) & 3u;
  let rg = t >> 3u;
  // The P̃ V role: rows 8·pr …, vec4 columns pc and pc + 8 of O.
  let pc = t & 7u;
  let pr = t >> 3u;

  var m = vec4<f32>(LOWEST);         // m_i of the 4 kept rows (base 2)
  var l = vec4<f32>(0.0);            // this invocation's share of ℓ_i (its 8 keys of each tile)
  var o00 = mat4x4<f32>();           // O, rows 0-3 of the 8, vec4 column pc (column r = row r)
  var o01 = mat4x4<f32>();           // rows 0-3, column pc + 8
  var o10 = mat4x4<f32>();           // rows 4-7, column pc
  var o11 = mat4x4<f32>();           // rows 4-7, column pc + 8

  var kNext: array<vec4<f32>, LD_MAX>;  // Kᵀ_j+1, read from memory while S_ij is computed
  var vNext: array<vec4<f32>, LD_MAX>;  // V_j+1, read while P̃ V_j is computed
  for (var j = 0u; j < Tc; j++) {
    let more = STAGE && j + 1u < Tc;
    if (more) {
      for (var u = 0u; u < LD; u++) {
        let e = t + WG * u;
        kNext[u] = KT[ktBase + (e / (BC / 4u)) * (params.NP / 4u) + (j + 1u) * (BC / 4u) + e % (BC / 4u)];
      }
    }
    // S_ij for 8 rows × 8 keys over half of d: 64 multiply-adds per 4 vec4 reads.
    var s00 = mat4x4<f32>();         // rows 0-3, keys 4·cg …
    var s01 = mat4x4<f32>();         // rows 0-3, keys 16 + 4·cg …
    var s10 = mat4x4<f32>();         // rows 4-7, keys 4·cg …
    var s11 = mat4x4<f32>();         // rows 4-7, keys 16 + 4·cg …
    // The operands of step y + 1 are read before step y's multiply-adds (the last step re-reads its own).
    var a0 = Qt[h * QS4 + 2u * rg];
    var a1 = Qt[h * QS4 + 2u * rg + 1u];
    var b0 = Kt[h * KS4 + cg];
    var b1 = Kt[h * KS4 + cg + 4u];
    for (var y = 0u; y < DH; y++) {
      let dn = min(2u * y + 2u, D - 2u) + h;
      let na0 = Qt[dn * QS4 + 2u * rg];
      let na1 = Qt[dn * QS4 + 2u * rg + 1u];
      let nb0 = Kt[dn * KS4 + cg];
      let nb1 = Kt[dn * KS4 + cg + 4u];
      s00 = rank1(s00, a0, b0);
      s01 = rank1(s01, a0, b1);
      s10 = rank1(s10, a1, b0);
      s11 = rank1(s11, a1, b1);
      a0 = na0; a1 = na1; b0 = nb0; b1 = nb1;
    }
    // Reduce-scatter with the partner: keep rows 4·h … whole, send the other four rows' half-sums.
    let keepFirst = h == 0u;
    var sa = pick(s00, s10, keepFirst) + shuffleXor(pick(s10, s00, keepFirst), 1u);  // kept rows, keys 4·cg …
    var sb = pick(s01, s11, keepFirst) + shuffleXor(pick(s11, s01, keepFirst), 1u);  // kept rows, keys 16 + 4·cg …
    if ((j + 1u) * BC > N) {
      sa = maskKeys(sa, j * BC + 4u * cg, N);
      sb = maskKeys(sb, j * BC + 16u + 4u * cg, N);
    }
    // Online softmax of the 4 kept rows, lazily.
    var mx = max(maxOfColumns(sa), maxOfColumns(sb));
    mx = max(mx, subgroupShuffleXor(mx, 2u));
    mx = max(mx, subgroupShuffleXor(mx, 4u));
    let moved = mx > m + vec4<f32>(TAU);
    let mNew = select(m, mx, moved);
    let alpha = exp2(m - mNew);      // 1 where m_i stays; 0 on the first tile
    m = mNew;
    let pa = mat4x4<f32>(exp2(sa[0] - m.x), exp2(sa[1] - m.y), exp2(sa[2] - m.z), exp2(sa[3] - m.w));
    let pb = mat4x4<f32>(exp2(sb[0] - m.x), exp2(sb[1] - m.y), exp2(sb[2] - m.z), exp2(sb[3] - m.w));
    l = l * alpha + sumOfColumns(pa) + sumOfColumns(pb);
    // P̃ᵀ: per key, a vec4 of the 4 kept rows.
    let ta = transpose(pa);
    let tb = transpose(pb);
    let rowVec = 2u * rg + h;
    let pa0 = (4u * cg) * QS4 + rowVec;         // keys 4·cg … 4·cg + 3, then 16 + 4·cg …
    let pb0 = (16u + 4u * cg) * QS4 + rowVec;
    if (STORE_P) {
      Pt[pa0] = ta[0]; Pt[pa0 + QS4] = ta[1]; Pt[pa0 + 2u * QS4] = ta[2]; Pt[pa0 + 3u * QS4] = ta[3];
      Pt[pb0] = tb[0]; Pt[pb0 + QS4] = tb[1]; Pt[pb0 + 2u * QS4] = tb[2]; Pt[pb0 + 3u * QS4] = tb[3];
      if (cg == 0u) { rowScale[rowVec] = alpha; }
    }
    workgroupBarrier();

    if (more) {  // Kᵀ_j was last read before the barrier
      for (var u = 0u; u < LD; u++) {
        let e = t + WG * u;
        Kt[(e / (BC / 4u)) * KS4 + e % (BC / 4u)] = kNext[u];
      }
      for (var u = 0u; u < LD; u++) {
        let e = t + WG * u;
        var v = vec4<f32>(0.0);
        if ((j + 1u) * BC + e / D4 < N) { v = qkv[vBase + (j + 1u) * BC * D4 + e]; }
        vNext[u] = v;
      }
    }
    // O = diag(α) O + P̃ V_j for 8 rows × 8 columns: 64 multiply-adds per 4 vec4 reads.
    let alpha0 = rowScale[2u * pr];
    let alpha1 = rowScale[2u * pr + 1u];
    o00 = scaleColumns(o00, alpha0);
    o10 = scaleColumns(o10, alpha1);
    if (CO > 1u) {
      o01 = scaleColumns(o01, alpha0);
      o11 = scaleColumns(o11, alpha1);
    }
    var p0 = Pt[2u * pr];
    var p1 = Pt[2u * pr + 1u];
    var v0 = Vj[pc];
    var v1 = Vj[min(pc + 8u, D4 - 1u)];
    for (var c = 0u; c < PV_KEYS; c++) {
      let cn = min(c + 1u, BC - 1u);
      let np0 = Pt[cn * QS4 + 2u * pr];
      let np1 = Pt[cn * QS4 + 2u * pr + 1u];
      let nv0 = Vj[cn * D4 + pc];
      let nv1 = Vj[cn * D4 + min(pc + 8u, D4 - 1u)];
      o00 = rank1(o00, p0, v0);
      o10 = rank1(o10, p1, v0);
      if (CO > 1u) {
        o01 = rank1(o01, p0, v1);
        o11 = rank1(o11, p1, v1);
      }
      p0 = np0; p1 = np1; v0 = nv0; v1 = nv1;
    }
    workgroupBarrier();
    if (more) {  // V_j was last read before the barrier
      for (var u = 0u; u < LD; u++) { Vj[t + WG * u] = vNext[u]; }
    }
  }

  // ℓ_i: the four shares of each row (invocations cg = 0 … 3), then 1/ℓ_i to the P̃ V role through workgroup memory.
  l += subgroupShuffleXor(l, 2u);
  l += subgroupShuffleXor(l, 4u);
  if (cg == 0u) { rowScale[2u * rg + h] = 1.0 / l; }
  workgroupBarrier();
  let row0 = i * BR + 8u * pr;
  storeRows(row0, scaleColumns(o00, rowScale[2u * pr]), b, pc);
  storeRows(row0 + 4u, scaleColumns(o10, rowScale[2u * pr + 1u]), b, pc);
  if (CO > 1u) {
    storeRows(row0, scaleColumns(o01, rowScale[2u * pr]), b, pc + 8u);
    storeRows(row0 + 4u, scaleColumns(o11, rowScale[2u * pr + 1u]), b, pc + 8u);
  }
}
