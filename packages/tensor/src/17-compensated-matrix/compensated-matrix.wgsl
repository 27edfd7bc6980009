// Rung 17 — compensated-matrix: rung 16's matrix units at fp32-grade accuracy, by splitting every operand in two.
//
// Changed from f16-matrix: rung 16 rounds Q, K, V and P̃ to f16 (11 significant bits), so its error on ±3 data is about
// 1e-3 and can exceed the 5e-3 contract. Two changes:
// 1. Each f32 value x is split into a high part h (x rounded to 11 significant bits, done on the bits so the compiler
//    cannot fold it away) and a low part ℓ = f16(x − h), and the products drop only the ℓ·ℓ term: S = Qh·Khᵀ + Qh·Klᵀ +
//    Ql·Khᵀ and P̃V = P̃h·Vh + P̃h·Vl + P̃l·Vh, about 22 significant bits per operand.
// 2. O is accumulated in f32 registers, not in the matrix units' accumulators: each tile's P̃ V_j is computed from
//    zero, stored to workgroup memory and added there by the 32 invocations, which also apply the rescale factor every
//    tile. With O kept in the matrix accumulators across all key tiles (the first version of this rung), the error grew
//    with N, far past the fp32 rungs' at N = 32768; with this it stays at their level there.
// Not faster: the price of the accuracy is three times rung 16's matrix work and twice its scratch and P̃ traffic.
// Measured: docs/rungs/17-compensated-matrix.md.

enable f16;
enable subgroups;
enable chromium_experimental_subgroup_matrix;

alias L = subgroup_matrix_left<f16, 16, 16>;
alias R = subgroup_matrix_right<f16, 16, 16>;
alias A = subgroup_matrix_result<f32, 16, 16>;

override D: u32;       // head size, a multiple of 16
override RQ: u32;      // query fragments (16 rows each) per workgroup; RQ · D/16 ≤ QO_MAX

const BC: u32 = 64u;       // keys per tile
const NC: u32 = 4u;        // BC / 16: key fragments per tile
const RQ_MAX: u32 = 4u;
const QO_MAX: u32 = 8u;    // most Q (and O) fragments per subgroup
const TAU: f32 = 8.0;      // m is raised only when a row's maximum exceeds it by more than TAU (base 2)
const LOWEST: f32 = -3.0e38;

struct Params {
  N: u32,
  NP: u32,         // N rounded up to a multiple of 64: rows of each matrix in the scratch buffer
  batches: u32,
  scaleLog2: f32,  // log2(e)/√d
}

@group(0) @binding(0) var<storage, read> qkv: array<vec4<f32>>;       // per batch: Q, K, V, each N × d
@group(0) @binding(1) var<storage, read_write> O: array<f32>;         // batches × N × d
@group(0) @binding(2) var<uniform> params: Params;
@group(0) @binding(3) var<storage, read_write> qkv16: array<f16>;     // per batch: high and low parts of Q·scale, K, V, each NP × d

override DK: u32 = D / 16u;          // fragments across d
override BR: u32 = 16u * RQ;         // query rows per workgroup
override G: u32 = max(1u, 32u / BR); // invocations per row in the softmax
override RPI: u32 = max(1u, BR / 32u); // rows per invocation in the softmax
override SW: u32 = max(BC, D);       // row length of Sf (S tile, or O when it is rescaled)

var<workgroup> Sf: array<f32, BR * SW>;   // S tile (stride BC), or this tile's P̃ V_j (stride D)
var<workgroup> Pt: array<f16, BR * BC>;   // P̃ tile, high part (stride BC)
var<workgroup> Pl: array<f16, BR * BC>;   // P̃ tile, low part
var<workgroup> rowScale: array<f32, 64>;  // per row: the rescale factor of O, at the end 1/ℓ
// Every workgroup variable is a multiple of 16 bytes: the matrix loads and stores need their arrays 16-byte aligned
// (a 4-byte variable before them shifted them by one f32 on the H100; see rung 16's page).

/** x rounded to 11 significant bits (f16's precision) on its bits: x − hi(x) is exact and cannot be folded to 0. */
fn hi(x: vec4<f32>) -> vec4<f32> {
  return bitcast<vec4<f32>>((bitcast<vec4<u32>>(x) + vec4<u32>(0x1000u)) & vec4<u32>(0xffffe000u));
}

fn hi1(x: f32) -> f32 {
  return bitcast<f32>((bitcast<u32>(x) + 0x1000u) & 0xffffe000u);
}

// One invocation per 4 values of Q·scale, K, V: their high and low parts as f16, rows N..NP-1 zero.
@compute @workgroup_size(256)
fn convert(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
           @builtin(local_invocation_index) t: u32) {
  let e = (wid.y * nwg.x + wid.x) * 256u + t;
  let D4 = D / 4u;
  let perMatrix = params.NP * D4;
  if (e >= params.batches * 3u * perMatrix) { return; }
  let matrix = e / perMatrix;        // 3·b + (0: Q, 1: K, 2: V)
  let row = (e % perMatrix) / D4;
  let x = e % D4;
  var v = vec4<f32>(0.0);
  if (row < params.N) {
    v = qkv[(matrix * params.N + row) * D4 + x];
    if (matrix % 3u == 0u) { v *= params.scaleLog2; }
  }
  let h = hi(v);
  let lo = v - h;
  let at = (2u * matrix * params.NP + row) * D + 4u * x;   // high part; the low part follows NP rows later
  qkv16[at] = f16(h.x);
  qkv16[at + 1u] = f16(h.y);
  qkv16[at + 2u] = f16(h.z);
  qkv16[at + 3u] = f16(h.w);
  let atLo = at + params.NP * D;
  qkv16[atLo] = f16(lo.x);
  qkv16[atLo + 1u] = f16(lo.y);
  qkv16[atLo + 2u] = f16(lo.z);
  qkv16[atLo + 3u] = f16(lo.w);
}

// P̃ = 2^(S − mRow) for this invocation's keys of one row of the tile, written to the P̃ tile; returns their sum.
fn writeRow(row: u32, g: u32, j: u32, mRow: f32) -> f32 {
  var sum = 0.0;
  for (var cc = 0u; cc < BC / G; cc++) {
    let col = (g + G * (cc + row)) % BC;
    var p = 0.0;
    if (j * BC + col < params.N) { p = exp2(Sf[row * BC + col] - mRow); }
    sum += p;
    let ph = hi1(p);
    Pt[row * BC + col] = f16(ph);
    Pl[row * BC + col] = f16(p - ph);
  }
  return sum;
}

@compute @workgroup_size(32)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
        @builtin(local_invocation_index) t: u32) {
  let N = params.N;
  let Tr = (N + BR - 1u) / BR;
  let w = wid.y * nwg.x + wid.x;     // one workgroup per (batch, query tile)
  let b = w / Tr;
  let i = w % Tr;
  if (b >= params.batches) { return; }
  let q0 = 6u * b * params.NP * D;   // Qh of batch b in qkv16; Ql, Kh, Kl, Vh, Vl follow, NP rows apart
  let q1 = q0 + params.NP * D;
  let k0 = q1 + params.NP * D;
  let k1 = k0 + params.NP * D;
  let v0 = k1 + params.NP * D;
  let v1 = v0 + params.NP * D;

  // Q_i: RQ × DK fragments, resident for the whole key loop.
  var q: array<L, QO_MAX>;
  var ql: array<L, QO_MAX>;
  for (var r = 0u; r < RQ; r++) {
    for (var k = 0u; k < DK; k++) {
      q[r * DK + k] = subgroupMatrixLoad<L, row_major>(&qkv16, q0 + (i * BR + 16u * r) * D + 16u * k, D);
      ql[r * DK + k] = subgroupMatrixLoad<L, row_major>(&qkv16, q1 + (i * BR + 16u * r) * D + 16u * k, D);
    }
  }
  // O_i in f32 registers: invocation t owns elements t + 32·k of the BR × D tile.
  var acc: array<f32, 64>;   // BR · D / 32 ≤ 64, since RQ · D/16 ≤ QO_MAX
  for (var k = 0u; k < BR * D / 32u; k++) { acc[k] = 0.0; }

  // Softmax roles: invocation t owns RPI rows (g = 0 .. G-1 splits a row's keys when BR < 32).
  let g = t % G;
  var m: array<f32, 2>;
  var l: array<f32, 2>;
  for (var rr = 0u; rr < RPI; rr++) { m[rr] = LOWEST; l[rr] = 0.0; }

  let Tc = (N + BC - 1u) / BC;
  for (var j = 0u; j < Tc; j++) {
    workgroupBarrier();  // the previous tile's Sf, Pt and Pl are consumed
    // S = Q_i K_jᵀ: each K fragment is loaded once and used by the RQ query fragments.
    for (var c = 0u; c < NC; c++) {
      var s: array<A, RQ_MAX>;
      for (var r = 0u; r < RQ; r++) { s[r] = A(); }
      for (var k = 0u; k < DK; k++) {
        let kf = subgroupMatrixLoad<R, col_major>(&qkv16, k0 + (j * BC + 16u * c) * D + 16u * k, D);
        let kl = subgroupMatrixLoad<R, col_major>(&qkv16, k1 + (j * BC + 16u * c) * D + 16u * k, D);
        for (var r = 0u; r < RQ; r++) {
          s[r] = subgroupMatrixMultiplyAccumulate(ql[r * DK + k], kf, s[r]);
          s[r] = subgroupMatrixMultiplyAccumulate(q[r * DK + k], kl, s[r]);
          s[r] = subgroupMatrixMultiplyAccumulate(q[r * DK + k], kf, s[r]);
        }
      }
      for (var r = 0u; r < RQ; r++) { subgroupMatrixStore<row_major>(&Sf, 16u * r * BC + 16u * c, s[r], BC); }
    }
    workgroupBarrier();

    // Online softmax in f32, per row; keys past N do not count. Columns are rotated by row so that the 32
    // invocations read 32 different banks. One pass: P̃ = 2^(S − m) with the current m, the row's maximum taken on the
    // way; only where that maximum exceeds m by more than TAU (every row in the first tile, rarely after) is P̃
    // written again with the new m (`writeRow`).
    for (var rr = 0u; rr < RPI; rr++) {
      let row = t / G + rr * (32u / G);
      let mOld = m[rr];
      var mx = LOWEST;
      var sum = 0.0;
      for (var cc = 0u; cc < BC / G; cc++) {
        let col = (g + G * (cc + row)) % BC;
        var p = 0.0;
        if (j * BC + col < N) {
          let sv = Sf[row * BC + col];
          mx = max(mx, sv);
          p = exp2(sv - mOld);
        }
        sum += p;
        let ph = hi1(p);
        Pt[row * BC + col] = f16(ph);
        Pl[row * BC + col] = f16(p - ph);
      }
      for (var lane = 1u; lane < G; lane <<= 1u) { mx = max(mx, subgroupShuffleXor(mx, lane)); }
      var mNew = mOld;
      if (mx > mOld + TAU) {
        mNew = mx;
        sum = writeRow(row, g, j, mNew);
      }
      let alpha = exp2(mOld - mNew);
      m[rr] = mNew;
      l[rr] = l[rr] * alpha + sum;
      if (g == 0u) { rowScale[row] = alpha; }
    }
    workgroupBarrier();  // rowScale, Pt and Pl are written; Sf's scores are read
    for (var k = 0u; k < BR * D / 32u; k++) { acc[k] *= rowScale[(t + 32u * k) / D]; }

    // This tile's P̃ V_j from zero, added to O in f32 through workgroup memory.
    var ot: array<A, QO_MAX>;
    for (var e = 0u; e < RQ * DK; e++) { ot[e] = A(); }
    for (var c = 0u; c < NC; c++) {
      var p: array<L, RQ_MAX>;
      var pl: array<L, RQ_MAX>;
      for (var r = 0u; r < RQ; r++) {
        p[r] = subgroupMatrixLoad<L, row_major>(&Pt, 16u * r * BC + 16u * c, BC);
        pl[r] = subgroupMatrixLoad<L, row_major>(&Pl, 16u * r * BC + 16u * c, BC);
      }
      for (var n = 0u; n < DK; n++) {
        let vf = subgroupMatrixLoad<R, row_major>(&qkv16, v0 + (j * BC + 16u * c) * D + 16u * n, D);
        let vl = subgroupMatrixLoad<R, row_major>(&qkv16, v1 + (j * BC + 16u * c) * D + 16u * n, D);
        for (var r = 0u; r < RQ; r++) {
          ot[r * DK + n] = subgroupMatrixMultiplyAccumulate(pl[r], vf, ot[r * DK + n]);
          ot[r * DK + n] = subgroupMatrixMultiplyAccumulate(p[r], vl, ot[r * DK + n]);
          ot[r * DK + n] = subgroupMatrixMultiplyAccumulate(p[r], vf, ot[r * DK + n]);
        }
      }
    }
    for (var r = 0u; r < RQ; r++) {
      for (var n = 0u; n < DK; n++) { subgroupMatrixStore<row_major>(&Sf, 16u * r * D + 16u * n, ot[r * DK + n], D); }
    }
    workgroupBarrier();
    for (var k = 0u; k < BR * D / 32u; k++) { acc[k] += Sf[t + 32u * k]; }
  }

  // ℓ_i: the sum of the row's partial sums; O_i = O / ℓ_i, through workgroup memory, rows past N not written.
  for (var rr = 0u; rr < RPI; rr++) {
    var sum = l[rr];
    for (var lane = 1u; lane < G; lane <<= 1u) { sum += subgroupShuffleXor(sum, lane); }
    if (g == 0u) { rowScale[t / G + rr * (32u / G)] = 1.0 / sum; }
  }
  workgroupBarrier();
  for (var k = 0u; k < BR * D / 32u; k++) {
    let e = t + 32u * k;
    let row = e / D;
    if (i * BR + row < N) { O[(b * N + i * BR + row) * D + e % D] = acc[k] * rowScale[row]; }
  }
}
