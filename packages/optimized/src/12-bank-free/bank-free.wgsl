// Rung 12 — bank-free: workgroup-memory layouts in which the lanes of a warp never share a bank in one access.
//
// Changed from lm-registers (rung 11): only the layouts of the tiles on chip, and the index arithmetic that walks
// them. Workgroup memory is 32 banks of 4 bytes; a warp's access is served in one pass only when its lanes hit
// different banks (or the same word: a broadcast). A vec4 access takes 4 banks, so 8 lanes share a pass: they must
// hit 8 different 16-byte slots modulo 128 bytes. With one invocation per row (rung 11) neighbouring lanes read
// neighbouring rows, so the row stride decides:
// - Q_i and O_i: rows of d/4 vec4s. For d = 64 the stride is 16 vec4s = 256 bytes, a multiple of 128: all 8 lanes
//   of a pass hit the same 4 banks, 8 passes instead of 1. Rows are now QS = d/4 | 1 vec4s apart (an odd number:
//   17 for d = 64), so 8 neighbouring rows land on 8 different slots.
// - S: row r at r·Bc, a stride of Bc floats: 2-way to 32-way conflicts for even Bc (32-way when Bc is a multiple
//   of 32). S is now stored transposed, S[c·Br + r]: lane r reads word c·Br + r, neighbours neighbouring words.
// - K_jᵀ: read as a broadcast, but written by the load with lane tx at row tx, Bc vec4s apart: rows are now
//   KS = Bc | 1 vec4s apart.
// V_j is read as a broadcast and written row by row by neighbouring lanes: it was conflict-free already.
//
// Why it should be faster: in rung 11 the dot products and the O update, the loops that do all the work, read
// Q_i and O_i at up to 8 passes per access (d = 32, 64, 128) and S at up to 32; now every access is one pass. The
// padding costs a few percent of workgroup memory (one vec4 per row of Q_i, O_i and K_jᵀ), which the tiles pay.
// Faster than lm-registers, still slower than coalesced: rung 11's other cost, few invocations each running one
// dependent chain, remains (rung 13). Measured: docs/rungs/12-bank-free.md.
//
// Tile sizes are override constants: Br query rows, Bc key rows, D the head size (D4 = D/4 vec4s per row).

override D: u32;
override BR: u32;
override BC: u32;
override WG: u32 = 128u;
override D4: u32 = D / 4u;
override RS: u32 = WG / D4;    // rows a row-wise loop covers at a time (D/4 lanes each)
override QS: u32 = D4 | 1u;    // row stride of Q_i and O_i in vec4s: odd, so 8 neighbouring rows hit 8 bank slots
override KS: u32 = BC | 1u;    // row stride of K_jᵀ in vec4s: odd, likewise

struct Params {
  N: u32,
  batches: u32,
  scale: f32,  // 1/√d
}

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;       // per batch: Q, K, V, each N × d
@group(0) @binding(1) var<storage, read_write> O: array<vec4<f32>>;   // batches × N × d
@group(0) @binding(2) var<uniform> params: Params;

var<workgroup> KjT: array<vec4<f32>, D4 * KS>;   // K_jᵀ: vec4 x of key c at x·KS + c
var<workgroup> Vj: array<vec4<f32>, BC * D4>;
var<workgroup> Qi: array<vec4<f32>, BR * QS>;   // Q_i · scale, rows QS vec4s apart
var<workgroup> S: array<f32, BC * BR>;   // S_ij, then P̃_ij, transposed: S[c·Br + r]
var<workgroup> Oi: array<vec4<f32>, BR * QS>;   // O_i, on chip from start to end, rows QS vec4s apart

const LOWEST: f32 = -3.0e38;  // stands for −∞
const IDLE: u32 = 0xffffffffu;  // the first row of a lane left over by a grid: past every tile

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
  let qTile = q0 + i * BR * D4;                // Q_i in memory
  let oTile = (b * N + i * BR) * D4;           // O_i in memory
  let rows = min(BR, N - i * BR);              // rows of Q_i inside N

  // This invocation's place in the row-wise loops (loads, O write), computed once; its own row is r = t.
  let tx = t % D4;
  let ty = select(IDLE, t / D4, t < RS * D4);
  let qRow = t * QS;                           // its row of Q_i and O_i

  // Load Q_i · scale once; O_i = 0 on chip; ℓ = 0 and m = −∞ in registers.
  for (var r = ty; r < BR; r += RS) {
    var q = vec4<f32>(0.0);
    if (r < rows) { q = qkv[qTile + r * D4 + tx] * params.scale; }
    Qi[r * QS + tx] = q;
    Oi[r * QS + tx] = vec4<f32>(0.0);
  }
  var m = LOWEST;
  var l = 0.0;

  for (var j = 0u; j < Tc; j++) {
    workgroupBarrier();  // everyone is done with the previous K_j, V_j
    // Load K_j (stored transposed), V_j (rows past N read as 0; their scores are masked below).
    let cols = min(BC, N - j * BC);            // keys of K_j inside N
    let kTile = k0 + j * BC * D4;
    let vTile = v0 + j * BC * D4;
    for (var r = ty; r < BC; r += RS) {
      var k = vec4<f32>(0.0);
      var v = vec4<f32>(0.0);
      if (r < cols) {
        k = qkv[kTile + r * D4 + tx];
        v = qkv[vTile + r * D4 + tx];
      }
      KjT[tx * KS + r] = k;
      Vj[r * D4 + tx] = v;
    }
    workgroupBarrier();

    if (t < BR) {
      // Its row of S_ij = (Q_i · scale) K_jᵀ, keys inside N only, and its maximum m̃_ij as it goes.
      var mTilde = LOWEST;
      for (var c = 0u; c < cols; c++) {
        var dot4 = 0.0;
        var k = c;                             // K_jᵀ[x, c], stepping one (padded) row of K_jᵀ at a time
        for (var x = 0u; x < D4; x++) {
          dot4 += dot(Qi[qRow + x], KjT[k]);
          k += KS;
        }
        S[c * BR + t] = dot4;
        mTilde = max(mTilde, dot4);
      }
      // P̃_ij and ℓ̃_ij, then m_new and ℓ_new, in registers.
      var lTilde = 0.0;
      for (var c = 0u; c < cols; c++) {
        let p = exp(S[c * BR + t] - mTilde);
        S[c * BR + t] = p;
        lTilde += p;
      }
      let mNew = max(m, mTilde);
      let alpha = exp(m - mNew);
      let beta = exp(mTilde - mNew);
      let lNew = alpha * l + beta * lTilde;
      let oldWeight = l * alpha / lNew;
      let newWeight = beta / lNew;
      m = mNew;
      l = lNew;

      // Its row of O_i = diag(ℓ_new)⁻¹ (diag(ℓ_i) e^(m_i − m_new) O_i + e^(m̃_ij − m_new) P̃_ij V_j), on chip.
      for (var x = 0u; x < D4; x++) {
        var pv = vec4<f32>(0.0);
        var v = x;                             // V_j[c, x], stepping one row of V_j at a time
        var p = t;                             // P̃_ij[t, c] at c·Br + t, stepping one column at a time
        for (var c = 0u; c < cols; c++) {
          pv += S[p] * Vj[v];
          v += D4;
          p += BR;
        }
        Oi[qRow + x] = oldWeight * Oi[qRow + x] + newWeight * pv;
      }
    }
  }
  workgroupBarrier();

  // Write O_i once.
  for (var r = ty; r < rows; r += RS) { O[oTile + r * D4 + tx] = Oi[r * QS + tx]; }
}
