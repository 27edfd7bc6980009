// Rung 8 — vec4: Q, K, V and O move and multiply as vec4<f32>, four floats per load and per dot().
//
// Changed from fused-split-q: the storage buffers and the workgroup tiles K_j, V_j, Q_i, O_i are arrays of vec4<f32>
// instead of f32 (d is a multiple of 4 on every GPU rung), so every global load, every workgroup-memory load and store,
// and the O update move 16 bytes at once, and the S_ij dot product is D/4 dot()s of vec4s instead of D scalar
// multiply-adds. S stays scalar: it is one number per (row, key).
//
// Why it should be faster: a quarter of the load and store instructions for the same bytes (each 128-bit access is one
// instruction and, on most GPUs, one transaction per 8 lanes), a quarter of the address arithmetic and loop iterations
// in the inner loops, and four independent multiply-adds per dot() for the scheduler to overlap.
// Faster than fused-split-q at every shape: rung 7 was bound by issuing loads, not by moving bytes. Measured:
// docs/rungs/08-vec4.md.
//
// Tile sizes are override constants: Br query rows, Bc key rows, D the head size (D4 = D/4 vec4s per row).

override D: u32;
override BR: u32;
override BC: u32;
override WG: u32 = 128u;
override D4: u32 = D / 4u;

struct Params {
  N: u32,
  batches: u32,
  scale: f32,  // 1/√d
}

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;       // per batch: Q, K, V, each N × d
@group(0) @binding(1) var<storage, read_write> O: array<vec4<f32>>;   // batches × N × d
@group(0) @binding(2) var<uniform> params: Params;

var<workgroup> Kj: array<vec4<f32>, BC * D4>;
var<workgroup> Vj: array<vec4<f32>, BC * D4>;
var<workgroup> Qi: array<vec4<f32>, BR * D4>;
var<workgroup> S: array<f32, BR * BC>;   // S_ij, then P̃_ij
var<workgroup> Oi: array<vec4<f32>, BR * D4>;   // O_i, on chip from start to end
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
  let q0 = b * 3u * N * D4;                    // Q of batch b, in vec4s
  let k0 = q0 + N * D4;                        // K
  let v0 = k0 + N * D4;                        // V

  // Load Q_i once; O_i = 0, ℓ_i = 0, m_i = −∞ on chip.
  for (var e = t; e < BR * D4; e += WG) {
    let row = i * BR + e / D4;
    var q = vec4<f32>(0.0);
    if (row < N) { q = qkv[q0 + row * D4 + e % D4]; }
    Qi[e] = q;
    Oi[e] = vec4<f32>(0.0);
  }
  if (t < BR) {
    mi[t] = LOWEST;
    li[t] = 0.0;
  }

  for (var j = 0u; j < Tc; j++) {
    workgroupBarrier();  // everyone is done with the previous K_j, V_j
    // Load K_j, V_j (rows past N read as 0; their scores are masked below).
    for (var e = t; e < BC * D4; e += WG) {
      let key = j * BC + e / D4;
      var k = vec4<f32>(0.0);
      var v = vec4<f32>(0.0);
      if (key < N) {
        k = qkv[k0 + key * D4 + e % D4];
        v = qkv[v0 + key * D4 + e % D4];
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
        var dot4 = 0.0;
        for (var x = 0u; x < D4; x++) { dot4 += dot(Qi[r * D4 + x], Kj[c * D4 + x]); }
        s = dot4 * params.scale;
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
    for (var e = t; e < BR * D4; e += WG) {
      let r = e / D4;
      let x = e % D4;
      var pv = vec4<f32>(0.0);
      for (var c = 0u; c < cols; c++) { pv += S[r * BC + c] * Vj[c * D4 + x]; }
      Oi[e] = oldWeight[r] * Oi[e] + newWeight[r] * pv;
    }
  }
  workgroupBarrier();

  // Write O_i once.
  for (var e = t; e < BR * D4; e += WG) {
    let row = i * BR + e / D4;
    if (row < N) { O[(b * N + row) * D4 + e % D4] = Oi[e]; }
  }
}
