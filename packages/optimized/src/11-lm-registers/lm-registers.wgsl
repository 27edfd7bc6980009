// Rung 11 — lm-registers: each invocation owns one query row, start to end; its m and ℓ live in registers.
//
// Changed from coalesced (rung 10): rungs 7-10 split each tile into four phases with a barrier after each: all
// invocations compute S_ij (one score each), then one invocation per row computes the row statistics while the
// rest wait, writes m, ℓ and the two weights of its row to workgroup memory, then all invocations update O_i (one
// vec4 each), reading those weights back. Now invocation r owns row r of the tile for the whole kernel: it computes
// its row of S_ij, its row maximum and sum as it goes, its m and ℓ (registers, never stored), and its row of O_i.
// The workgroup has max(Br, d/4) invocations (Br own rows; all of them load K_j and V_j), the arrays m_i, ℓ_i and
// the two weights are gone from workgroup memory, and a tile needs two barriers instead of four (before the load,
// to reuse K_j and V_j; after it) and no masked scores (a row walks only the keys inside N).
//
// Why it should be faster: no phase in which one invocation per row works and the others wait (the statistics
// phase read each score twice and wrote it once, from a single invocation per row); half the barriers per tile;
// m, ℓ and the weights cost no workgroup-memory traffic; the row maximum is kept while the scores are computed
// instead of being a second pass over S; masked keys are skipped, not exponentiated. Each invocation does more
// sequential work (Bc dot products, then d/4 sums of Bc terms), so there are fewer invocations to hide latency
// with, and neighbouring lanes read Q_i, S and O_i a row apart: the bank conflicts that rung 12 removes. K_j and V_j
// are read by all lanes at once, at one address: a broadcast.
// Slower than rung 10 at every shape: the costs outweigh the saved barriers. It stays for rung 13, which needs a row
// per invocation. Measured: docs/rungs/11-lm-registers.md.
//
// Tile sizes are override constants: Br query rows, Bc key rows, D the head size (D4 = D/4 vec4s per row).

override D: u32;
override BR: u32;
override BC: u32;
override WG: u32 = 128u;
override D4: u32 = D / 4u;
override RS: u32 = WG / D4;    // rows a row-wise loop covers at a time (D/4 lanes each)

struct Params {
  N: u32,
  batches: u32,
  scale: f32,  // 1/√d
}

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;       // per batch: Q, K, V, each N × d
@group(0) @binding(1) var<storage, read_write> O: array<vec4<f32>>;   // batches × N × d
@group(0) @binding(2) var<uniform> params: Params;

var<workgroup> KjT: array<vec4<f32>, D4 * BC>;   // K_jᵀ: vec4 x of key c at x·Bc + c
var<workgroup> Vj: array<vec4<f32>, BC * D4>;
var<workgroup> Qi: array<vec4<f32>, BR * D4>;   // Q_i · scale
var<workgroup> S: array<f32, BR * BC>;   // S_ij, then P̃_ij
var<workgroup> Oi: array<vec4<f32>, BR * D4>;   // O_i, on chip from start to end

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
  let qRow = t * D4;                           // its row of Q_i and O_i
  let sRow = t * BC;                           // its row of S

  // Load Q_i · scale once; O_i = 0 on chip; ℓ = 0 and m = −∞ in registers.
  for (var r = ty; r < BR; r += RS) {
    var q = vec4<f32>(0.0);
    if (r < rows) { q = qkv[qTile + r * D4 + tx] * params.scale; }
    Qi[r * D4 + tx] = q;
    Oi[r * D4 + tx] = vec4<f32>(0.0);
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
      KjT[tx * BC + r] = k;
      Vj[r * D4 + tx] = v;
    }
    workgroupBarrier();

    if (t < BR) {
      // Its row of S_ij = (Q_i · scale) K_jᵀ, keys inside N only, and its maximum m̃_ij as it goes.
      var mTilde = LOWEST;
      for (var c = 0u; c < cols; c++) {
        var dot4 = 0.0;
        var k = c;                             // K_jᵀ[x, c], stepping one row of K_jᵀ at a time
        for (var x = 0u; x < D4; x++) {
          dot4 += dot(Qi[qRow + x], KjT[k]);
          k += BC;
        }
        S[sRow + c] = dot4;
        mTilde = max(mTilde, dot4);
      }
      // P̃_ij and ℓ̃_ij, then m_new and ℓ_new, in registers.
      var lTilde = 0.0;
      for (var c = 0u; c < cols; c++) {
        let p = exp(S[sRow + c] - mTilde);
        S[sRow + c] = p;
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
        for (var c = 0u; c < cols; c++) {
          pv += S[sRow + c] * Vj[v];
          v += D4;
        }
        Oi[qRow + x] = oldWeight * Oi[qRow + x] + newWeight * pv;
      }
    }
  }
  workgroupBarrier();

  // Write O_i once.
  for (var r = ty; r < rows; r += RS) { O[oTile + r * D4 + tx] = Oi[r * D4 + tx]; }
}
