// Rung 7 — fused-split-q: one workgroup per (batch, Q tile), loops swapped.
//
// Changed from fused: each workgroup owns one query tile Q_i of one batch, so a launch has B·Tr workgroups instead of B
// and fills the GPU. With Q_i fixed per workgroup the loops swap: the K/V loop is the only loop, and O_i, ℓ_i and m_i
// stay on chip (workgroup memory) for the whole computation: O is written once, at the end, and ℓ and m never reach GPU
// memory at all. Tiles are the largest that fit (as rung 6's).
//
// Why it should be faster: enough workgroups for every SM, and O, ℓ, m move once per row instead of once per (i, j).
// K_j and V_j are now read once per query tile instead of once per batch, which the parallelism more than pays for.
// Far faster than fused-maxsmem and faster than naive at N ≥ 2048; slower than fused at 13600×128×32, where N = 128
// leaves the swap little to save. Measured: docs/rungs/07-fused-split-q.md.
//
// Tile sizes are override constants: Br query rows, Bc key rows, D the head size.

override D: u32;
override BR: u32;
override BC: u32;
override WG: u32 = 128u;

struct Params {
  N: u32,
  batches: u32,
  scale: f32,  // 1/√d
}

@group(0) @binding(0) var<storage, read> qkv: array<f32>;       // per batch: Q, K, V, each N × d
@group(0) @binding(1) var<storage, read_write> O: array<f32>;   // batches × N × d
@group(0) @binding(2) var<uniform> params: Params;

var<workgroup> Kj: array<f32, BC * D>;
var<workgroup> Vj: array<f32, BC * D>;
var<workgroup> Qi: array<f32, BR * D>;
var<workgroup> S: array<f32, BR * BC>;   // S_ij, then P̃_ij
var<workgroup> Oi: array<f32, BR * D>;   // O_i, on chip from start to end
var<workgroup> mi: array<f32, BR>;       // m_i
var<workgroup> li: array<f32, BR>;       // ℓ_i
var<workgroup> oldWeight: array<f32, BR>;  // ℓ_i e^(m_i − m_new) / ℓ_new: weight of the old O_i
var<workgroup> newWeight: array<f32, BR>;  // e^(m̃_ij − m_new) / ℓ_new: weight of P̃_ij V_j

const LOWEST: f32 = -3.0e38;  // stands for −∞

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) t: u32) {
  let N = params.N;
  let Tc = (N + BC - 1u) / BC;
  let Tr = (N + BR - 1u) / BR;
  let w = wid.y * nwg.x + wid.x;               // one workgroup per (batch, query tile)
  let b = w / Tr;
  let i = w % Tr;
  if (b >= params.batches) { return; }
  let q0 = b * 3u * N * D;                     // Q of batch b
  let k0 = q0 + N * D;                         // K
  let v0 = k0 + N * D;                         // V

  // Load Q_i once; O_i = 0, ℓ_i = 0, m_i = −∞ on chip.
  for (var e = t; e < BR * D; e += WG) {
    let row = i * BR + e / D;
    var q = 0.0;
    if (row < N) { q = qkv[q0 + row * D + e % D]; }
    Qi[e] = q;
    Oi[e] = 0.0;
  }
  if (t < BR) {
    mi[t] = LOWEST;
    li[t] = 0.0;
  }

  for (var j = 0u; j < Tc; j++) {
    workgroupBarrier();  // everyone is done with the previous K_j, V_j
    // Load K_j, V_j (rows past N read as 0; their scores are masked below).
    for (var e = t; e < BC * D; e += WG) {
      let key = j * BC + e / D;
      var k = 0.0;
      var v = 0.0;
      if (key < N) {
        k = qkv[k0 + key * D + e % D];
        v = qkv[v0 + key * D + e % D];
      }
      Kj[e] = k;
      Vj[e] = v;
    }
    let cols = min(BC, N - j * BC);
    workgroupBarrier();

    // S_ij = Q_i K_jᵀ · scale
    for (var e = t; e < BR * BC; e += WG) {
      let r = e / BC;
      let c = e % BC;
      var s = LOWEST;
      if (c < cols) {
        var dot = 0.0;
        for (var x = 0u; x < D; x++) { dot += Qi[r * D + x] * Kj[c * D + x]; }
        s = dot * params.scale;
      }
      S[e] = s;
    }
    workgroupBarrier();

    // One thread per row: m̃_ij, P̃_ij, ℓ̃_ij, then m_new and ℓ_new, all on chip.
    if (t < BR) {
      var mTilde = LOWEST;
      for (var c = 0u; c < cols; c++) { mTilde = max(mTilde, S[t * BC + c]); }
      var lTilde = 0.0;
      for (var c = 0u; c < BC; c++) {
        let p = exp(S[t * BC + c] - mTilde);
        S[t * BC + c] = p;
        lTilde += p;
      }
      let mNew = max(mi[t], mTilde);
      let alpha = exp(mi[t] - mNew);
      let beta = exp(mTilde - mNew);
      let lNew = alpha * li[t] + beta * lTilde;
      oldWeight[t] = li[t] * alpha / lNew;
      newWeight[t] = beta / lNew;
      mi[t] = mNew;
      li[t] = lNew;
    }
    workgroupBarrier();

    // O_i = diag(ℓ_new)⁻¹ (diag(ℓ_i) e^(m_i − m_new) O_i + e^(m̃_ij − m_new) P̃_ij V_j), on chip.
    for (var e = t; e < BR * D; e += WG) {
      let r = e / D;
      let x = e % D;
      var pv = 0.0;
      for (var c = 0u; c < cols; c++) { pv += S[r * BC + c] * Vj[c * D + x]; }
      Oi[e] = oldWeight[r] * Oi[e] + newWeight[r] * pv;
    }
  }
  workgroupBarrier();

  // Write O_i once.
  for (var e = t; e < BR * D; e += WG) {
    let row = i * BR + e / D;
    if (row < N) { O[(b * N + row) * D + e % D] = Oi[e]; }
  }
}
