// Rung 10 — coalesced: K_j is kept transposed on chip, so neighbouring invocations read neighbouring addresses.
//
// Changed from restructure (rung 9): in the S loop, neighbouring invocations own neighbouring keys c of one row of
// S_ij, and each walks the D/4 vec4s of its key. With K_j stored by rows (rung 9), invocation c read K_j[c·D/4 + x]:
// neighbours D/4 vec4s (d floats) apart, so a warp's 32 reads of one step spread over 32 separate 16-byte slots that
// share banks. Now the load stores K_j transposed, K_jᵀ[x·Bc + c], and the S loop reads K_jᵀ[x·Bc + c]: neighbours
// read neighbouring vec4s, one contiguous run per warp per step, as the global loads already do (every load of Q,
// K, V and every store of O has lane tx read vec4 tx of a row: consecutive lanes, consecutive 16-byte words). The
// other workgroup-memory walks already had this shape: the O update reads V_j[c·D/4 + tx] (consecutive in tx) and
// S[r·Bc + c] (one address for all lanes of a row, a broadcast), and Q_i[r·D/4 + x] is a broadcast too.
//
// Why it should be faster: the S loop is Br·Bc·d/4 vec4 reads of K_j per tile, the most of any loop; read as one
// contiguous run per warp each is served at full workgroup-memory bandwidth instead of being split into several
// passes. The price is the store of K_j: now neighbours write Bc vec4s apart, but each element is stored once per
// tile and read Br times.
// Faster than restructure at every shape, and at 13600×128×32 faster than every GPU rung below it. Measured:
// docs/rungs/10-coalesced.md.
//
// Tile sizes are override constants: Br query rows, Bc key rows, D the head size (D4 = D/4 vec4s per row).

override D: u32;
override BR: u32;
override BC: u32;
override WG: u32 = 128u;
override D4: u32 = D / 4u;
override RS: u32 = WG / D4;    // rows a row-wise loop covers at a time (D/4 lanes each)
override SRS: u32 = WG / BC;   // rows the S loop covers at a time (Bc lanes each)

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
var<workgroup> mi: array<f32, BR>;       // m_i
var<workgroup> li: array<f32, BR>;       // ℓ_i
var<workgroup> oldWeight: array<f32, BR>;  // ℓ_i e^(m_i − m_new) / ℓ_new: weight of the old O_i
var<workgroup> newWeight: array<f32, BR>;  // e^(m̃_ij − m_new) / ℓ_new: weight of P̃_ij V_j

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

  // This invocation's place in the row-wise loops and in the S loop, computed once.
  let tx = t % D4;
  let ty = select(IDLE, t / D4, t < RS * D4);
  let sc = t % BC;
  let sr = select(IDLE, t / BC, t < SRS * BC);

  // Load Q_i · scale once; O_i = 0, ℓ_i = 0, m_i = −∞ on chip.
  for (var r = ty; r < BR; r += RS) {
    var q = vec4<f32>(0.0);
    if (r < rows) { q = qkv[qTile + r * D4 + tx] * params.scale; }
    Qi[r * D4 + tx] = q;
    Oi[r * D4 + tx] = vec4<f32>(0.0);
  }
  if (t < BR) {
    mi[t] = LOWEST;
    li[t] = 0.0;
  }

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

    // S_ij = (Q_i · scale) K_jᵀ
    for (var r = sr; r < BR; r += SRS) {
      var s = LOWEST;
      if (sc < cols) {
        let qRow = r * D4;
        var dot4 = 0.0;
        var k = sc;                            // K_jᵀ[x, sc], stepping one row of K_jᵀ at a time
        for (var x = 0u; x < D4; x++) {
          dot4 += dot(Qi[qRow + x], KjT[k]);
          k += BC;
        }
        s = dot4;
      }
      S[r * BC + sc] = s;
    }
    workgroupBarrier();

    // One thread per row: m̃_ij, P̃_ij, ℓ̃_ij, then m_new and ℓ_new, all on chip.
    if (t < BR) {
      let sRow = t * BC;
      var mTilde = LOWEST;
      for (var c = 0u; c < cols; c++) { mTilde = max(mTilde, S[sRow + c]); }
      var lTilde = 0.0;
      for (var c = 0u; c < BC; c++) {
        let p = exp(S[sRow + c] - mTilde);
        S[sRow + c] = p;
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
    for (var r = ty; r < BR; r += RS) {
      let sRow = r * BC;
      var pv = vec4<f32>(0.0);
      var v = tx;                              // V_j[c, tx], stepping one row of V_j at a time
      for (var c = 0u; c < cols; c++) {
        pv += S[sRow + c] * Vj[v];
        v += D4;
      }
      let e = r * D4 + tx;
      Oi[e] = oldWeight[r] * Oi[e] + newWeight[r] * pv;
    }
  }
  workgroupBarrier();

  // Write O_i once.
  for (var r = ty; r < rows; r += RS) { O[oTile + r * D4 + tx] = Oi[r * D4 + tx]; }
}
