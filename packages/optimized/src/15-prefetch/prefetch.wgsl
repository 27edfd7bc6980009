// Rung 15 — prefetch: the next K_j, V_j are loaded into registers while the current tile computes.
//
// Changed from register-tiles: in rung 14 a workgroup loads K_j and V_j from GPU memory, waits at a barrier, then
// computes; the load's latency (hundreds of cycles from L2) is hidden only if other workgroups on the SM have work
// ready. Here each invocation issues the loads of tile j + 1 into registers right after tile j is in workgroup memory,
// and stores them there only after computing tile j: the loads are in flight during the S and P̃ V loops. Cost:
// 2·Bc·d/(4·WG) vec4 registers per invocation (8 at d = 64, Br = 64, Bc = 32).
// Why it should be faster: with few workgroups per SM (43 KiB of workgroup memory each at d = 64, at most five), a load
// that is not overlapped stalls a large share of the SM.
// Measured: docs/rungs/15-prefetch.md.

enable subgroups;

override D: u32;       // head size, a multiple of 4
override BR: u32;      // query rows per workgroup (a multiple of 4)
override BC: u32;      // keys per K/V tile (a multiple of G)
override G: u32;       // invocations per row group: a power of two, at most the subgroup size
override WG: u32;      // BR / 4 · G

const TC_MAX: u32 = 16u;   // most keys per invocation in a tile (Bc / G)
const OC_MAX: u32 = 8u;    // most vec4 columns of O per invocation (D / 4 / G, rounded up)
const LD_MAX: u32 = 16u;   // most vec4s of K_j (and of V_j) one invocation loads per tile

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
override LD: u32 = (BC * D / 4u + WG - 1u) / WG;  // vec4s of K_j (and of V_j) per invocation per tile

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
  // Tile 0 into registers: invocation t loads vec4s t, t + WG, ... of K_0 and V_0.
  var kNext: array<vec4<f32>, LD_MAX>;
  var vNext: array<vec4<f32>, LD_MAX>;
  for (var n = 0u; n < LD; n++) {
    let e = t + n * WG;
    let key = e / D4V;
    kNext[n] = vec4<f32>(0.0);
    vNext[n] = vec4<f32>(0.0);
    if (e < BC * D4V && key < N) {
      kNext[n] = qkv[k0 + e];
      vNext[n] = qkv[v0 + e];
    }
  }
  for (var j = 0u; j < Tc; j++) {
    workgroupBarrier();  // everyone is done with K_j, V_j and P̃ of the previous tile
    for (var n = 0u; n < LD; n++) {
      let e = t + n * WG;
      if (e < BC * D4V) {
        Kj[(e / D4V) * KS + e % D4V] = kNext[n];
        Vj[e] = vNext[n];
      }
    }
    workgroupBarrier();
    // Tile j + 1 into registers; the loads complete while tile j computes.
    if (j + 1u < Tc) {
      for (var n = 0u; n < LD; n++) {
        let e = t + n * WG;
        let key = (j + 1u) * BC + e / D4V;
        kNext[n] = vec4<f32>(0.0);
        vNext[n] = vec4<f32>(0.0);
        if (e < BC * D4V && key < N) {
          kNext[n] = qkv[k0 + (j + 1u) * BC * D4V + e];
          vNext[n] = qkv[v0 + (j + 1u) * BC * D4V + e];
        }
      }
    }

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
