// Rung 13 — q-registers: each invocation keeps its query row, its scores and its O row in registers.
//
// Changed from bank-free (rung 12): since rung 11 each invocation owns one query row from start to end, so its row
// of Q_i (times 1/√d), its row of S_ij and its row of O_i need not be shared: they move from workgroup memory to
// registers (arrays of d/4 vec4s and of Bc floats; WGSL sizes function arrays with constants, so they are declared
// for d = 128 and Bc = 64 and used up to d/4 and Bc). Workgroup memory holds only K_jᵀ and V_j.
// The loops turn around to suit registers: the scores are Bc independent sums, each vec4 of q multiplied with the
// same vec4 of every key of the tile in turn; all loops run to the constants D/4 and Bc (keys past N are masked
// after the dot products), so the compiler can unroll them and keep every array in registers. The O update scales
// the row by its old weight once, then adds each key's (new weight · P̃[c]) · V_j[c] to all d/4 vec4s at once.
// Workgroup memory no longer limits Br: a workgroup is Br = 64 rows (64 invocations, two warps); Bc is 32 keys.
//
// Why it should be faster: per multiply-add of the S loop, one operand comes from workgroup memory (K_jᵀ, a
// broadcast) instead of two, and the O update reads only V_j (a broadcast), not P̃ d/4 times nor O_i every tile:
// workgroup loads per FMA halve, and they were the bound. Each invocation now has Bc (scores) and d/4 (O)
// independent chains of multiply-adds instead of one, so it keeps the FMA pipes busy with fewer warps. K_j and V_j,
// loaded once per tile, serve 64 rows instead of 40-odd (d = 64), 22 (d = 128). The cost is registers: 2·d + Bc
// floats per invocation for q, o and s (160 at d = 64; 288 at d = 128, more than the 255 an NVIDIA thread can
// have, so the compiler spills), which bounds the warps an SM keeps.
// The first rung past coalesced. Measured: docs/rungs/13-q-registers.md.
//
// Tile sizes are override constants: Br query rows, Bc key rows, D the head size (D4 = D/4 vec4s per row).

override D: u32;
override BR: u32;
override BC: u32;
override WG: u32 = 128u;
override D4: u32 = D / 4u;
override RS: u32 = WG / D4;    // rows a row-wise loop covers at a time (D/4 lanes each)
override KS: u32 = BC | 1u;    // row stride of K_jᵀ in vec4s: odd, so the load's 8 neighbouring lanes hit 8 bank slots

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

const LOWEST: f32 = -3.0e38;  // stands for −∞
const MAX_D4: u32 = 32u;       // register rows are declared for d = 128, the largest head size of the GPU rungs
const MAX_BC: u32 = 64u;       // and the register row of scores for Bc = 64, the most keys per tile
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

  // This invocation's place in the K_j, V_j loads, computed once; its own row is r = t.
  let tx = t % D4;
  let ty = select(IDLE, t / D4, t < RS * D4);
  let qRow = qTile + t * D4;                   // its row of Q in memory

  // Load its row of Q · scale once, and o = 0, ℓ = 0, m = −∞: all in registers.
  var q: array<vec4<f32>, MAX_D4>;
  var o: array<vec4<f32>, MAX_D4>;
  for (var x = 0u; x < D4; x++) {
    q[x] = vec4<f32>(0.0);
    if (t < rows) { q[x] = qkv[qRow + x] * params.scale; }
    o[x] = vec4<f32>(0.0);
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
      // Its row of S_ij = (q · scale) K_jᵀ in registers: Bc independent sums, one vec4 of the head at a time.
      var s: array<f32, MAX_BC>;
      for (var c = 0u; c < BC; c++) { s[c] = 0.0; }
      for (var x = 0u; x < D4; x++) {
        let qx = q[x];
        let k = x * KS;                        // row x of K_jᵀ
        for (var c = 0u; c < BC; c++) { s[c] += dot(qx, KjT[k + c]); }
      }
      var mTilde = LOWEST;
      for (var c = 0u; c < BC; c++) {
        if (c < cols) { mTilde = max(mTilde, s[c]); }
      }
      // P̃_ij and ℓ̃_ij (keys past N weigh 0), then m_new and ℓ_new, in registers.
      var lTilde = 0.0;
      for (var c = 0u; c < BC; c++) {
        s[c] = select(0.0, exp(s[c] - mTilde), c < cols);
        lTilde += s[c];
      }
      let mNew = max(m, mTilde);
      let alpha = exp(m - mNew);
      let beta = exp(mTilde - mNew);
      let lNew = alpha * l + beta * lTilde;
      let oldWeight = l * alpha / lNew;
      let newWeight = beta / lNew;
      m = mNew;
      l = lNew;

      // Its row o = diag(ℓ_new)⁻¹ (diag(ℓ_i) e^(m_i − m_new) o + e^(m̃_ij − m_new) P̃_ij V_j), in registers:
      // the old row scaled once, then each key's P̃ times its row of V_j added to every vec4 of o.
      for (var x = 0u; x < D4; x++) { o[x] *= oldWeight; }
      for (var c = 0u; c < BC; c++) {
        let weighted = newWeight * s[c];
        let v = c * D4;                        // row c of V_j
        for (var x = 0u; x < D4; x++) { o[x] += weighted * Vj[v + x]; }
      }
    }
  }

  // Write its row of O once.
  if (t < rows) {
    for (var x = 0u; x < D4; x++) { O[oTile + t * D4 + x] = o[x]; }
  }
}
