// Rung 19 — split-keys: row-split's kernel with the keys of each row block split over SPLITS workgroups.
//
// Changed from row-split: a workgroup there owned a block of rows and every key, so a shape with few rows (10×2048×64:
// 20480 rows) made a grid of 160 workgroups, under five warps per SM on an H100, too few to hide latency. Here the grid
// is SPLITS times larger: workgroup (b, i, s) runs row-split's loop over the s-th of SPLITS ranges of K/V tiles
// (⌊Tc/SPLITS⌋ or ⌈Tc/SPLITS⌉ tiles each, never empty: the host keeps SPLITS ≤ Tc) and writes its unnormalized O, m and
// ℓ for its rows to a scratch buffer; a second entry point, `combine`, then merges the partial results of each row as
// FlashAttention-2 merges tiles:
//   M = max_s m_s,  ℓ = Σ_s 2^(m_s − M) ℓ_s,  O = Σ_s 2^(m_s − M) O_s / ℓ.
// With SPLITS = 1 (grids large enough already) the kernel is row-split's: O is written directly, no second pass. SPLITS
// is a uniform (params.splits), not an override: it only picks each workgroup's key range and where its partial results
// go, so one compiled pipeline serves every number of ranges. Everything else (row groups of H invocations on two rows,
// lazy rescale, padding) is row-split's: its header and docs/rungs/18-row-split.md.
// Why it should be faster: SPLITS times the workgroups where the grid is small; the cost is the scratch traffic (SPLITS
// partial rows of O per row, written once and read once) and one more dispatch.
// Faster than row-split and prefetch at 10×2048×64, the small grid; where SPLITS = 1 it runs as row-split. Measured:
// docs/rungs/19-split-keys.md.

enable subgroups;

override D: u32;          // head size, a multiple of 4
override H: u32;          // invocations per row group: a power of two, at most the subgroup size
override BC: u32;         // keys per K/V tile, a multiple of 8
override WG: u32;         // invocations per workgroup, a multiple of H
override PREFETCH: u32;   // 1: load tile j + 1 into registers while tile j computes
override CW: u32;         // invocations per workgroup of `combine`

const C_MAX: u32 = 8u;    // most vec4 columns of a row per invocation: D/4 over H, rounded up
const LD_MAX: u32 = 8u;   // most vec4s of K_j (and of V_j) one invocation loads per tile

struct Params {
  N: u32,
  batches: u32,
  scaleLog2: f32,  // log2(e)/√d
  splits: u32,     // SPLITS: workgroups that share a row block's keys, each one range of K/V tiles
}

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;       // per batch: Q, K, V, each N × d
@group(0) @binding(1) var<storage, read_write> O: array<vec4<f32>>;   // batches × N × d
@group(0) @binding(2) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read_write> Opart: array<vec4<f32>>;  // per batch, split, row: unnormalized O
@group(0) @binding(4) var<storage, read_write> ML: array<vec2<f32>>;     // per batch, split, row: m, ℓ

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
  let SPLITS = params.splits;
  let Tr = (N + BR - 1u) / BR;
  let w = wid.y * nwg.x + wid.x;     // one workgroup per (batch, query tile, key range)
  let split = w % SPLITS;
  let b = w / SPLITS / Tr;
  let i = (w / SPLITS) % Tr;
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
  let jBegin = split * Tc / SPLITS;      // this workgroup's tiles: jBegin .. jEnd − 1
  let jEnd = (split + 1u) * Tc / SPLITS;
  var kNext: array<vec4<f32>, LD_MAX>;
  var vNext: array<vec4<f32>, LD_MAX>;
  if (PREFETCH == 1u) {
    for (var n = 0u; n < LD; n++) {
      let e = t + n * WG;
      kNext[n] = vec4<f32>(0.0);
      vNext[n] = vec4<f32>(0.0);
      if (e < BC * D4V && jBegin * BC + e / D4V < N) {
        kNext[n] = qkv[kBase + jBegin * BC * D4V + e];
        vNext[n] = qkv[vBase + jBegin * BC * D4V + e];
      }
    }
  }
  for (var j = jBegin; j < jEnd; j++) {
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
    if (PREFETCH == 1u && j + 1u < jEnd) {
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

  if (SPLITS == 1u) {  // one key range (a grid large enough without splitting): O_i = O / ℓ_i, as in row-split
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
    return;
  }
  // This key range's unnormalized O, m and ℓ of both rows, for `combine`.
  let part0 = (b * SPLITS + split) * N + row0;
  if (row0 < N) {
    ML[part0] = vec2<f32>(m0, l0);
    for (var x = 0u; x < C; x++) {
      if (inRow(h + H * x)) { Opart[part0 * D4V + h + H * x] = o0[x]; }
    }
  }
  if (row1 < N) {
    ML[part0 + 1u] = vec2<f32>(m1, l1);
    for (var x = 0u; x < C; x++) {
      if (inRow(h + H * x)) { Opart[(part0 + 1u) * D4V + h + H * x] = o1[x]; }
    }
  }
}

// One invocation per vec4 of O: the partial results of its row merged, O = Σ 2^(m_s − M) O_s / Σ 2^(m_s − M) ℓ_s.
@compute @workgroup_size(CW)
fn combine(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
           @builtin(local_invocation_index) t: u32) {
  let N = params.N;
  let SPLITS = params.splits;
  let e = (wid.y * nwg.x + wid.x) * CW + t;   // vec4 e of O: batch b, row, column col
  if (e >= params.batches * N * D4V) { return; }
  let col = e % D4V;
  let row = (e / D4V) % N;
  let b = e / D4V / N;
  var M = LOWEST;
  for (var s = 0u; s < SPLITS; s++) { M = max(M, ML[(b * SPLITS + s) * N + row].x); }
  var l = 0.0;
  var o = vec4<f32>(0.0);
  for (var s = 0u; s < SPLITS; s++) {
    let part = (b * SPLITS + s) * N + row;
    let scale = exp2(ML[part].x - M);
    l += scale * ML[part].y;
    o += scale * Opart[part * D4V + col];
  }
  O[(b * N + row) * D4V + col] = o / l;
}
