// Rung 5 — fused: Algorithm 1 in one kernel.  (Rung 6, fused-maxsmem, runs this same kernel with larger tiles.)
//
// Changed from naive: the six steps of each (i, j) tile pair run inside one kernel, and S_ij, P̃_ij, m̃_ij, ℓ̃_ij never
// leave the chip: K_j, V_j, Q_i and S_ij live in workgroup memory. As the paper writes it, the K/V loop is outer and
// the Q loop inner, and O, ℓ and m stay in GPU memory ("HBM"), read and written once per (i, j). One workgroup computes
// one batch, so a launch has only B workgroups: the next rungs fix that.
//
// Why it should be faster: no round trip of S through GPU memory and no dispatch boundary between the steps.
// With many batches it is the fastest GPU rung so far; with few (4×32768×32: 4 workgroups) far slower than naive.
// Rung 6's larger tiles pay where workgroups are few and cost occupancy where they are many (13600×128×32).
// Measured: docs/rungs/05-fused.md, docs/rungs/06-fused-maxsmem.md.
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
@group(0) @binding(2) var<storage, read_write> l: array<f32>;   // batches × N: running sum ℓ
@group(0) @binding(3) var<storage, read_write> m: array<f32>;   // batches × N: running max m
@group(0) @binding(4) var<uniform> params: Params;

var<workgroup> Kj: array<f32, BC * D>;
var<workgroup> Vj: array<f32, BC * D>;
var<workgroup> Qi: array<f32, BR * D>;
var<workgroup> S: array<f32, BR * BC>;   // S_ij, then P̃_ij
var<workgroup> oldWeight: array<f32, BR>;  // ℓ_i e^(m_i − m_new) / ℓ_new: weight of the old O_i
var<workgroup> newWeight: array<f32, BR>;  // e^(m̃_ij − m_new) / ℓ_new: weight of P̃_ij V_j

const LOWEST: f32 = -3.0e38;  // stands for −∞

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) t: u32) {
  let N = params.N;
  let b = wid.y * nwg.x + wid.x;               // one workgroup per batch
  if (b >= params.batches) { return; }
  let q0 = b * 3u * N * D;                     // Q of batch b
  let k0 = q0 + N * D;                         // K
  let v0 = k0 + N * D;                         // V
  let row0 = b * N;                            // batch b's rows of O, ℓ, m
  let Tc = (N + BC - 1u) / BC;
  let Tr = (N + BR - 1u) / BR;

  for (var j = 0u; j < Tc; j++) {
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

    for (var i = 0u; i < Tr; i++) {
      // Load Q_i.
      for (var e = t; e < BR * D; e += WG) {
        let row = i * BR + e / D;
        var q = 0.0;
        if (row < N) { q = qkv[q0 + row * D + e % D]; }
        Qi[e] = q;
      }
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

      // One thread per row: m̃_ij, P̃_ij, ℓ̃_ij, then m_new and ℓ_new; m_i and ℓ_i read from and written to memory.
      if (t < BR && i * BR + t < N) {
        var mTilde = LOWEST;
        for (var c = 0u; c < cols; c++) { mTilde = max(mTilde, S[t * BC + c]); }
        var lTilde = 0.0;
        for (var c = 0u; c < BC; c++) {
          let p = exp(S[t * BC + c] - mTilde);
          S[t * BC + c] = p;
          lTilde += p;
        }
        let row = row0 + i * BR + t;
        let mi = select(m[row], LOWEST, j == 0u);
        let li = select(l[row], 0.0, j == 0u);
        let mNew = max(mi, mTilde);
        let alpha = exp(mi - mNew);
        let beta = exp(mTilde - mNew);
        let lNew = alpha * li + beta * lTilde;
        oldWeight[t] = li * alpha / lNew;
        newWeight[t] = beta / lNew;
        m[row] = mNew;
        l[row] = lNew;
      }
      workgroupBarrier();

      // O_i = diag(ℓ_new)⁻¹ (diag(ℓ_i) e^(m_i − m_new) O_i + e^(m̃_ij − m_new) P̃_ij V_j), read from and written to memory.
      for (var e = t; e < BR * D; e += WG) {
        let r = e / D;
        let x = e % D;
        if (i * BR + r < N) {
          var pv = 0.0;
          for (var c = 0u; c < cols; c++) { pv += S[r * BC + c] * Vj[c * D + x]; }
          let o = (row0 + i * BR + r) * D + x;
          let previous = select(O[o], 0.0, j == 0u);
          O[o] = oldWeight[r] * previous + newWeight[r] * pv;
        }
      }
      workgroupBarrier();
    }
  }
}
