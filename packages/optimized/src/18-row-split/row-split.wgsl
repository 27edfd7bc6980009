// Rung 18 — row-split: each pair of query rows is owned by H invocations; Q_i, S, P̃ and O stay in registers.
//
// Changed from prefetch (rung 15, the fastest fp32 rung before this one): there an invocation owned 4 rows × Bc/G keys
// of S but 4 rows × d/G columns of O, so P̃ went through workgroup memory (a store, a barrier and a load per tile), and
// Q_iᵀ sat in workgroup memory too: 43 KiB per workgroup at d = 64, five workgroups per SM. Here the H invocations of a
// row group share two rows and split d between them: invocation h keeps vec4 columns h, h + H, h + 2H, … of Q and O of
// both rows, computes its share of the dot products with 8 keys at a time, and adds the H shares with subgroup
// shuffles, after which every invocation of the group holds the whole scores, their P̃ and the row statistics. H = 1
// when a row's d/4 vec4s fit the registers (d ≤ 32): no shuffles at all. When H does not divide d/4 (d = 36, 100, …)
// the rows of K_j and V_j are padded with zero columns to H·C vec4s and the missing columns of Q read as 0. The rescale
// of O is lazy (as in rung 16): m_i only moves when a score passes it by more than TAU (base 2), so P̃ ≤ 2^TAU and O is
// rescaled a few times per row instead of once per tile; O and ℓ share the scale, so the result is the same. The two
// rows are named (q0, q1, o0, …) rather than indexed: the compiler does not unroll a loop that holds a subgroup
// shuffle, and register arrays indexed in a loop that is not unrolled live in memory (several times slower, measured).
// Why it should be faster: P̃ never leaves registers, Q_i is read from memory once, and workgroup memory holds only K_j
// and V_j (4-16 KiB): several times the warps per SM. The groups read the same vec4s of K_j and V_j (broadcast, no bank
// conflicts); each vector read feeds 8 multiply-adds.
// Faster than prefetch at five of the six bench shapes, slower at 10×2048×64 (a small grid: rung 19's subject), and
// faster than PyTorch's fp32 at d = 32. Measured: docs/rungs/18-row-split.md.

enable subgroups;

override D: u32;          // head size, a multiple of 4
override H: u32;          // invocations per row group: a power of two, at most the subgroup size
override BC: u32;         // keys per K/V tile, a multiple of 8
override WG: u32;         // invocations per workgroup, a multiple of H
override PREFETCH: u32;   // 1: load tile j + 1 into registers while tile j computes

const C_MAX: u32 = 8u;    // most vec4 columns of a row per invocation: D/4 over H, rounded up
const LD_MAX: u32 = 8u;   // most vec4s of K_j (and of V_j) one invocation loads per tile

struct Params {
  N: u32,
  batches: u32,
  scaleLog2: f32,  // log2(e)/√d
}

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;       // per batch: Q, K, V, each N × d
@group(0) @binding(1) var<storage, read_write> O: array<vec4<f32>>;   // batches × N × d
@group(0) @binding(2) var<uniform> params: Params;

override D4V: u32 = D / 4u;                       // vec4s per row
override C: u32 = (D / 4u + H - 1u) / H;          // vec4 columns per invocation
override KS: u32 = H * C;                         // row stride of K_j, V_j: D/4 rounded up to H·C, padded with 0
override PAD: u32 = KS - D4V;                     // padding vec4s per row (0 when H divides D/4)
override BR: u32 = WG / H * 2u;                   // query rows per workgroup: two per row group
override LD: u32 = (BC * D / 4u + WG - 1u) / WG;  // vec4s of K_j (and V_j) per invocation per tile

var<workgroup> Kj: array<vec4<f32>, BC * KS>;
var<workgroup> Vj: array<vec4<f32>, BC * KS>;

fn max4(v: vec4<f32>) -> f32 { return max(max(v.x, v.y), max(v.z, v.w)); }

// Whether vec4 column `col` of a row exists (always, when H divides D/4: PAD is 0 and the test folds away).
fn inRow(col: u32) -> bool { return PAD == 0u || col < D4V; }

// Where vec4 e of a K or V tile (as laid out in memory, D/4 per row) goes in K_j or V_j (KS per row).
fn onChip(e: u32) -> u32 {
  if (PAD == 0u) { return e; }
  return (e / D4V) * KS + e % D4V;
}

const LOWEST: f32 = -3.0e38;  // stands for −∞
const TAU: f32 = 8.0;         // how far a score may pass m_i before O and ℓ are rescaled (P̃ ≤ 2^TAU)

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) t: u32) {
  let N = params.N;
  let Tr = (N + BR - 1u) / BR;
  let w = wid.y * nwg.x + wid.x;     // one workgroup per (batch, query tile)
  let b = w / Tr;
  let i = w % Tr;
  if (b >= params.batches) { return; }
  let qBase = b * 3u * N * D4V;      // Q of batch b, in vec4s
  let kBase = qBase + N * D4V;
  let vBase = kBase + N * D4V;
  let g = t / H;                     // row group: rows i·BR + 2g and i·BR + 2g + 1
  let h = t % H;                     // place in the group: vec4 columns h + H·x

  // Q_i in registers, scaled by log2(e)/√d; rows past N read as 0 (their O is never written). The two rows are named,
  // not indexed (see the header).
  let row0 = i * BR + 2u * g;
  let row1 = row0 + 1u;
  var q0: array<vec4<f32>, C_MAX>;   // q0[x]: row 0, vec4 column h + H·x
  var q1: array<vec4<f32>, C_MAX>;
  var o0: array<vec4<f32>, C_MAX>;
  var o1: array<vec4<f32>, C_MAX>;
  for (var x = 0u; x < C; x++) {
    q0[x] = vec4<f32>(0.0);
    q1[x] = vec4<f32>(0.0);
    let col = h + H * x;             // past D/4 (when H does not divide it): 0, and never written
    if (row0 < N && inRow(col)) { q0[x] = qkv[qBase + row0 * D4V + col] * params.scaleLog2; }
    if (row1 < N && inRow(col)) { q1[x] = qkv[qBase + row1 * D4V + col] * params.scaleLog2; }
    o0[x] = vec4<f32>(0.0);
    o1[x] = vec4<f32>(0.0);
  }
  var m0 = LOWEST;                   // m_i (base 2) of the two rows
  var m1 = LOWEST;
  var l0 = 0.0;                      // ℓ_i of the two rows
  var l1 = 0.0;

  // The padding columns of K_j and V_j (when H does not divide D/4) stay 0: tiles only ever store columns < D/4.
  // (With PAD = 0 the loop does not run; max(PAD, 1u) only keeps the index expression free of a division by 0.)
  for (var e = t; e < BC * PAD; e += WG) {
    Kj[(e / max(PAD, 1u)) * KS + D4V + e % max(PAD, 1u)] = vec4<f32>(0.0);
    Vj[(e / max(PAD, 1u)) * KS + D4V + e % max(PAD, 1u)] = vec4<f32>(0.0);
  }

  let Tc = (N + BC - 1u) / BC;
  var kNext: array<vec4<f32>, LD_MAX>;
  var vNext: array<vec4<f32>, LD_MAX>;
  if (PREFETCH == 1u) {
    for (var n = 0u; n < LD; n++) {
      let e = t + n * WG;
      kNext[n] = vec4<f32>(0.0);
      vNext[n] = vec4<f32>(0.0);
      if (e < BC * D4V && e / D4V < N) {
        kNext[n] = qkv[kBase + e];
        vNext[n] = qkv[vBase + e];
      }
    }
  }
  for (var j = 0u; j < Tc; j++) {
    workgroupBarrier();  // everyone is done with K_j, V_j of the previous tile
    for (var n = 0u; n < LD; n++) {
      let e = t + n * WG;
      if (e < BC * D4V) {
        if (PREFETCH == 1u) {
          Kj[onChip(e)] = kNext[n];
          Vj[onChip(e)] = vNext[n];
        } else {
          var kv = vec4<f32>(0.0);
          var vv = vec4<f32>(0.0);
          if (j * BC + e / D4V < N) {
            kv = qkv[kBase + j * BC * D4V + e];
            vv = qkv[vBase + j * BC * D4V + e];
          }
          Kj[onChip(e)] = kv;
          Vj[onChip(e)] = vv;
        }
      }
    }
    workgroupBarrier();
    if (PREFETCH == 1u && j + 1u < Tc) {
      for (var n = 0u; n < LD; n++) {
        let e = t + n * WG;
        kNext[n] = vec4<f32>(0.0);
        vNext[n] = vec4<f32>(0.0);
        if (e < BC * D4V && (j + 1u) * BC + e / D4V < N) {
          kNext[n] = qkv[kBase + (j + 1u) * BC * D4V + e];
          vNext[n] = qkv[vBase + (j + 1u) * BC * D4V + e];
        }
      }
    }

    let keys = min(BC, N - j * BC);  // keys of this tile that exist
    for (var c = 0u; c < BC; c += 8u) {
      // S for keys c .. c + 7 of the tile: this invocation's share of each dot product, then the group's sum.
      var s0a = vec4<f32>(0.0);      // row 0, keys c .. c + 3
      var s0b = vec4<f32>(0.0);      // row 0, keys c + 4 .. c + 7
      var s1a = vec4<f32>(0.0);
      var s1b = vec4<f32>(0.0);
      for (var x = 0u; x < C; x++) {
        let col = h + H * x;
        let k0 = Kj[c * KS + col];
        let k1 = Kj[(c + 1u) * KS + col];
        let k2 = Kj[(c + 2u) * KS + col];
        let k3 = Kj[(c + 3u) * KS + col];
        let k4 = Kj[(c + 4u) * KS + col];
        let k5 = Kj[(c + 5u) * KS + col];
        let k6 = Kj[(c + 6u) * KS + col];
        let k7 = Kj[(c + 7u) * KS + col];
        s0a += vec4<f32>(dot(q0[x], k0), dot(q0[x], k1), dot(q0[x], k2), dot(q0[x], k3));
        s0b += vec4<f32>(dot(q0[x], k4), dot(q0[x], k5), dot(q0[x], k6), dot(q0[x], k7));
        s1a += vec4<f32>(dot(q1[x], k0), dot(q1[x], k1), dot(q1[x], k2), dot(q1[x], k3));
        s1b += vec4<f32>(dot(q1[x], k4), dot(q1[x], k5), dot(q1[x], k6), dot(q1[x], k7));
      }
      for (var lane = 1u; lane < H; lane <<= 1u) {
        s0a += subgroupShuffleXor(s0a, lane);
        s0b += subgroupShuffleXor(s0b, lane);
        s1a += subgroupShuffleXor(s1a, lane);
        s1b += subgroupShuffleXor(s1b, lane);
      }
      if (c + 8u > keys) {  // keys past N do not count
        let pastA = vec4<u32>(c, c + 1u, c + 2u, c + 3u) >= vec4<u32>(keys);
        let pastB = vec4<u32>(c + 4u, c + 5u, c + 6u, c + 7u) >= vec4<u32>(keys);
        s0a = select(s0a, vec4<f32>(LOWEST), pastA);
        s0b = select(s0b, vec4<f32>(LOWEST), pastB);
        s1a = select(s1a, vec4<f32>(LOWEST), pastA);
        s1b = select(s1b, vec4<f32>(LOWEST), pastB);
      }
      // Online softmax, lazily: P̃ = 2^(S − m_i); m_i moves (and O, ℓ are rescaled) only past m_i + TAU.
      let mx0 = max4(max(s0a, s0b));
      let mx1 = max4(max(s1a, s1b));
      if (mx0 > m0 + TAU) {
        let alpha = exp2(m0 - mx0);
        m0 = mx0;
        l0 *= alpha;
        for (var x = 0u; x < C; x++) { o0[x] *= alpha; }
      }
      if (mx1 > m1 + TAU) {
        let alpha = exp2(m1 - mx1);
        m1 = mx1;
        l1 *= alpha;
        for (var x = 0u; x < C; x++) { o1[x] *= alpha; }
      }
      let p0a = exp2(s0a - m0);      // P̃ of row 0, keys c .. c + 3
      let p0b = exp2(s0b - m0);
      let p1a = exp2(s1a - m1);
      let p1b = exp2(s1b - m1);
      l0 += dot(p0a + p0b, vec4<f32>(1.0));
      l1 += dot(p1a + p1b, vec4<f32>(1.0));
      // O += P̃ V_j for keys c .. c + 7, on this invocation's columns.
      for (var x = 0u; x < C; x++) {
        let col = h + H * x;
        let v0 = Vj[c * KS + col];
        let v1 = Vj[(c + 1u) * KS + col];
        let v2 = Vj[(c + 2u) * KS + col];
        let v3 = Vj[(c + 3u) * KS + col];
        let v4 = Vj[(c + 4u) * KS + col];
        let v5 = Vj[(c + 5u) * KS + col];
        let v6 = Vj[(c + 6u) * KS + col];
        let v7 = Vj[(c + 7u) * KS + col];
        var o0x = fma(vec4<f32>(p0a.x), v0, o0[x]);
        o0x = fma(vec4<f32>(p0a.y), v1, o0x);
        o0x = fma(vec4<f32>(p0a.z), v2, o0x);
        o0x = fma(vec4<f32>(p0a.w), v3, o0x);
        o0x = fma(vec4<f32>(p0b.x), v4, o0x);
        o0x = fma(vec4<f32>(p0b.y), v5, o0x);
        o0x = fma(vec4<f32>(p0b.z), v6, o0x);
        o0[x] = fma(vec4<f32>(p0b.w), v7, o0x);
        var o1x = fma(vec4<f32>(p1a.x), v0, o1[x]);
        o1x = fma(vec4<f32>(p1a.y), v1, o1x);
        o1x = fma(vec4<f32>(p1a.z), v2, o1x);
        o1x = fma(vec4<f32>(p1a.w), v3, o1x);
        o1x = fma(vec4<f32>(p1b.x), v4, o1x);
        o1x = fma(vec4<f32>(p1b.y), v5, o1x);
        o1x = fma(vec4<f32>(p1b.z), v6, o1x);
        o1[x] = fma(vec4<f32>(p1b.w), v7, o1x);
      }
    }
  }

  // O_i = O / ℓ_i, written once; every invocation of a group holds the whole ℓ_i.
  if (row0 < N) {
    for (var x = 0u; x < C; x++) {
      if (inRow(h + H * x)) { O[(b * N + row0) * D4V + h + H * x] = o0[x] / l0; }
    }
  }
  if (row1 < N) {
    for (var x = 0u; x < C; x++) {
      if (inRow(h + H * x)) { O[(b * N + row1) * D4V + h + H * x] = o1[x] / l1; }
    }
  }
}
