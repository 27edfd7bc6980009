// Rung 14 — register-tiles: FlashAttention-2's register tiling; each invocation owns a 4-row block of S and of O.
//
// Changed from q-registers: an invocation no longer owns one query row and walks every key of the tile. The G
// invocations of a "row group" share TR = 4 query rows; each computes the scores of its 4 rows with Bc/G keys (a 4 ×
// Bc/G block of S) and accumulates its 4 rows of O over D/G of the columns (a 4 × D/G block). The row statistics are
// combined across the G invocations of a row group with subgroup shuffles (a row group is G consecutive invocations of
// one subgroup), never through workgroup memory or a barrier; each invocation keeps a partial ℓ for its own keys and
// the partials are summed once, at the end (FlashAttention-2's deferred ℓ). The online softmax runs in base 2: Q_i is
// scaled by log2(e)/√d once, when it is loaded, so e^(s/√d − m) becomes one exp2. Q_i is stored transposed (a vec4
// holds one column of the row group's 4 rows), so S accumulates with vec4 multiply-adds and no horizontal sums.
// Workgroup layouts are padded by one vec4 per row where invocations of a quarter-warp read different rows (K_j, P̃ᵀ),
// so their reads fall in different banks.
// Why it should be faster: every vec4 read from workgroup memory now feeds 16 multiply-adds instead of 4, so the kernel
// stops being bound by workgroup-memory loads:
//   S:   per vec4 step of d, 4 loads of Q_iᵀ and Bc/G loads of K_j feed 16·Bc/G multiply-adds;
//   P V: per key, 1 load of P̃ (4 rows) and D/4G loads of V_j feed 4·D/G multiply-adds.
// Measured: docs/rungs/14-register-tiles.md.

enable subgroups;

override D: u32;       // head size, a multiple of 4
override BR: u32;      // query rows per workgroup (a multiple of 4)
override BC: u32;      // keys per K/V tile (a multiple of G)
override G: u32;       // invocations per row group: a power of two, at most the subgroup size
override WG: u32;      // BR / 4 · G

const TC_MAX: u32 = 16u;   // most keys per invocation in a tile (Bc / G)
const OC_MAX: u32 = 8u;    // most vec4 columns of O per invocation (D / 4 / G, rounded up)

struct Params {
  N: u32,
  batches: u32,
  scaleLog2: f32,  // log2(e)/√d
}

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;       // per batch: Q, K, V, each N × d
@group(0) @binding(1) var<storage, read_write> O: array<vec4<f32>>;   // batches × N × d
@group(0) @binding(2) var<uniform> params: Params;

override D4V: u32 = D / 4u;          // vec4s per row
override KS: u32 = D / 4u + 1u;      // row stride of K_j (vec4s), padded
override PS: u32 = BR / 4u + 1u;     // key stride of P̃ᵀ (vec4s of 4 rows), padded
override TC: u32 = BC / G;           // keys per invocation
override OC: u32 = (D / 4u + G - 1u) / G;  // vec4 columns of O per invocation

var<workgroup> Qt: array<vec4<f32>, D * PS>;   // Q_iᵀ · log2(e)/√d: column e of row group r at Qt[e·PS + r]
var<workgroup> Kj: array<vec4<f32>, BC * KS>;
var<workgroup> Vj: array<vec4<f32>, BC * D4V>;
var<workgroup> Pt: array<vec4<f32>, BC * PS>;   // P̃ᵀ: for key c, the 4 rows of row group r at Pt[c·PS + r]

const LOWEST: f32 = -3.0e38;  // stands for −∞

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) t: u32) {
  let N = params.N;
  let Tr = (N + BR - 1u) / BR;
  let w = wid.y * nwg.x + wid.x;     // one workgroup per (batch, query tile)
  let b = w / Tr;
  let i = w % Tr;
  if (b >= params.batches) { return; }
  let q0 = b * 3u * N * D4V;         // Q of batch b, in vec4s
  let k0 = q0 + N * D4V;
  let v0 = k0 + N * D4V;
  let rg = t / G;                    // row group: rows 4·rg .. 4·rg + 3 of the tile
  let cg = t % G;                    // place in the row group: keys cg + G·c, columns cg + G·x

  // Q_i, scaled once and transposed; rows past N read as 0 (their O is never written).
  for (var e = t; e < BR * D4V; e += WG) {
    let row = e / D4V;
    let x = e % D4V;
    var q = vec4<f32>(0.0);
    if (i * BR + row < N) { q = qkv[q0 + (i * BR + row) * D4V + x] * params.scaleLog2; }
    let at = 4u * x * PS + row / 4u;
    Qt[at][row % 4u] = q.x;
    Qt[at + PS][row % 4u] = q.y;
    Qt[at + 2u * PS][row % 4u] = q.z;
    Qt[at + 3u * PS][row % 4u] = q.w;
  }

  var m = vec4<f32>(LOWEST);         // m_i of the 4 rows (base 2)
  var l = vec4<f32>(0.0);            // this invocation's part of ℓ_i
  var o: array<vec4<f32>, 4u * OC_MAX>;  // o[r·OC_MAX + x]: row r, columns 4(cg + G·x) .. +3
  for (var x = 0u; x < 4u * OC_MAX; x++) { o[x] = vec4<f32>(0.0); }

  let Tc = (N + BC - 1u) / BC;
  for (var j = 0u; j < Tc; j++) {
    workgroupBarrier();  // everyone is done with K_j, V_j and P̃ of the previous tile
    for (var e = t; e < BC * D4V; e += WG) {
      let key = j * BC + e / D4V;
      let x = e % D4V;
      var k = vec4<f32>(0.0);
      var v = vec4<f32>(0.0);
      if (key < N) {
        k = qkv[k0 + key * D4V + x];
        v = qkv[v0 + key * D4V + x];
      }
      Kj[(e / D4V) * KS + x] = k;
      Vj[e] = v;
    }
    workgroupBarrier();

    // S block: s[c] holds the scores of the 4 rows with key cg + G·c.
    var s: array<vec4<f32>, TC_MAX>;
    for (var c = 0u; c < TC; c++) { s[c] = vec4<f32>(0.0); }
    for (var x = 0u; x < D4V; x++) {
      let qa = Qt[(4u * x) * PS + rg];        // column 4x of the 4 rows
      let qb = Qt[(4u * x + 1u) * PS + rg];
      let qc = Qt[(4u * x + 2u) * PS + rg];
      let qd = Qt[(4u * x + 3u) * PS + rg];
      for (var c = 0u; c < TC; c++) {
        let k = Kj[(cg + G * c) * KS + x];
        s[c] = fma(qd, vec4<f32>(k.w), fma(qc, vec4<f32>(k.z), fma(qb, vec4<f32>(k.y), fma(qa, vec4<f32>(k.x), s[c]))));
      }
    }
    if (j * BC + BC > N) {  // the last tile: keys past N do not count
      for (var c = 0u; c < TC; c++) {
        if (j * BC + cg + G * c >= N) { s[c] = vec4<f32>(LOWEST); }
      }
    }

    // m_new = max(m_i, rowmax S), across the row group; P̃ = 2^(S − m_new); ℓ and O rescaled by 2^(m_i − m_new).
    var mx = s[0];
    for (var c = 1u; c < TC; c++) { mx = max(mx, s[c]); }
    for (var lane = 1u; lane < G; lane <<= 1u) { mx = max(mx, subgroupShuffleXor(mx, lane)); }
    let mNew = max(m, mx);
    let alpha = exp2(m - mNew);
    m = mNew;
    var rowSum = vec4<f32>(0.0);
    for (var c = 0u; c < TC; c++) {
      let p = exp2(s[c] - mNew);
      rowSum += p;
      Pt[(cg + G * c) * PS + rg] = p;
    }
    l = l * alpha + rowSum;
    for (var x = 0u; x < OC; x++) {
      o[x] *= alpha.x;
      o[OC_MAX + x] *= alpha.y;
      o[2u * OC_MAX + x] *= alpha.z;
      o[3u * OC_MAX + x] *= alpha.w;
    }
    workgroupBarrier();  // P̃ of every row group is in Pt

    // O block += P̃ V_j
    for (var c = 0u; c < BC; c++) {
      let p = Pt[c * PS + rg];
      for (var x = 0u; x < OC; x++) {
        let col = cg + G * x;
        if (col < D4V) {
          let v = Vj[c * D4V + col];
          o[x] += p.x * v;
          o[OC_MAX + x] += p.y * v;
          o[2u * OC_MAX + x] += p.z * v;
          o[3u * OC_MAX + x] += p.w * v;
        }
      }
    }
  }

  // ℓ_i: the sum of the row group's partial sums; O_i = O / ℓ_i, written once.
  for (var lane = 1u; lane < G; lane <<= 1u) { l += subgroupShuffleXor(l, lane); }
  let inv = 1.0 / l;
  for (var r = 0u; r < 4u; r++) {
    let row = i * BR + 4u * rg + r;
    if (row < N) {
      for (var x = 0u; x < OC; x++) {
        let col = cg + G * x;
        if (col < D4V) { O[(b * N + row) * D4V + col] = o[r * OC_MAX + x] * inv[r]; }
      }
    }
  }
}
