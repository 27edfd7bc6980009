// Rung 16 — f16-matrix: the matrix units. S = Q Kᵀ and P̃ V as 16×16×16 f16 subgroup-matrix multiply-accumulates.
//
// Changed from prefetch: rung 15 does every multiply-add of S and P̃V on the fp32 lanes, one FMA per lane per cycle at
// best (about 67 TFLOP/s on an H100). Here a first pass (`convert`) writes Q·log2(e)/√d, K and V as f16 into a scratch
// buffer, with the rows of each matrix padded to a multiple of 64 with zeros; the main pass (`main`) runs one subgroup
// of 32 invocations per workgroup on Br = 16·RQ query rows. Its Q fragments stay in registers for the whole key loop;
// for each tile of 64 keys it loads each K fragment once from the scratch buffer (L1/L2) and multiplies it with all RQ
// query fragments, stores the S fragments to workgroup memory once for the online softmax in f32, writes P̃ there as
// f16 and loads it back as left operands for O += P̃ V, with each V fragment loaded once and used RQ times. The O
// accumulators stay in registers across the key loop: the running maximum m is raised only when a row's maximum grows
// by more than TAU (P̃ ≤ 2^TAU then, well inside f16), so O goes through workgroup memory to be rescaled only in the
// rare tile where that happens.
// Why it should be faster: the matrix units do 16·16·16 multiply-adds per instruction for the subgroup, an order of
// magnitude more than the fp32 lanes; the cost is precision: Q, K, V and P̃ are rounded to f16 (11 significant bits),
// so on ±3 data the error is about 1e-3 and can exceed 5e-3.
// Barely faster than prefetch at two shapes, slower elsewhere, and far slower than PyTorch's fp16 kernel: every
// fragment passes through memory. Measured: docs/rungs/16-f16-matrix.md.

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
@group(0) @binding(3) var<storage, read_write> qkv16: array<f16>;     // per batch: Q·scale, K, V, each NP × d, f16

override DK: u32 = D / 16u;          // fragments across d
override BR: u32 = 16u * RQ;         // query rows per workgroup
override G: u32 = max(1u, 32u / BR); // invocations per row in the softmax
override RPI: u32 = max(1u, BR / 32u); // rows per invocation in the softmax
override SW: u32 = max(BC, D);       // row length of Sf (S tile, or O when it is rescaled)

var<workgroup> Sf: array<f32, BR * SW>;   // S tile (stride BC), or O (stride D) while it is rescaled or written
var<workgroup> Pt: array<f16, BR * BC>;   // P̃ tile (stride BC)
var<workgroup> rowScale: array<f32, 64>;  // per row: the rescale factor of O, at the end 1/ℓ
// flag is a vec4 so that every workgroup variable is a multiple of 16 bytes: the matrix loads and stores need their
// arrays 16-byte aligned, and a 4-byte variable placed before them shifted them by one f32 (two f16) on the H100.
var<workgroup> flag: vec4<u32>;            // x: some row raised its m in this tile

// One invocation per 4 values of the scratch buffer: Q·scale, K, V of each batch as f16, rows N..NP-1 zero.
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
  let at = (matrix * params.NP + row) * D + 4u * x;
  qkv16[at] = f16(v.x);
  qkv16[at + 1u] = f16(v.y);
  qkv16[at + 2u] = f16(v.z);
  qkv16[at + 3u] = f16(v.w);
}

// P̃ = 2^(S − mRow) for this invocation's keys of one row of the tile, written to the P̃ tile; returns their sum.
fn writeRow(row: u32, g: u32, j: u32, mRow: f32) -> f32 {
  var sum = 0.0;
  for (var cc = 0u; cc < BC / G; cc++) {
    let col = (g + G * (cc + row)) % BC;
    var p = 0.0;
    if (j * BC + col < params.N) { p = exp2(Sf[row * BC + col] - mRow); }
    sum += p;
    Pt[row * BC + col] = f16(p);
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
  let q0 = 3u * b * params.NP * D;   // Q of batch b in qkv16
  let k0 = q0 + params.NP * D;
  let v0 = k0 + params.NP * D;

  // Q_i: RQ × DK fragments, resident for the whole key loop.
  var q: array<L, QO_MAX>;
  var o: array<A, QO_MAX>;
  for (var r = 0u; r < RQ; r++) {
    for (var k = 0u; k < DK; k++) {
      q[r * DK + k] = subgroupMatrixLoad<L, row_major>(&qkv16, q0 + (i * BR + 16u * r) * D + 16u * k, D);
      o[r * DK + k] = A();
    }
  }

  // Softmax roles: invocation t owns RPI rows (g = 0 .. G-1 splits a row's keys when BR < 32).
  let g = t % G;
  var m: array<f32, 2>;
  var l: array<f32, 2>;
  for (var rr = 0u; rr < RPI; rr++) { m[rr] = LOWEST; l[rr] = 0.0; }

  let Tc = (N + BC - 1u) / BC;
  for (var j = 0u; j < Tc; j++) {
    workgroupBarrier();  // the previous tile's Sf, Pt and flag are consumed
    if (t == 0u) { flag = vec4<u32>(0u); }
    // S = Q_i K_jᵀ: each K fragment is loaded once and used by the RQ query fragments.
    for (var c = 0u; c < NC; c++) {
      var s: array<A, RQ_MAX>;
      for (var r = 0u; r < RQ; r++) { s[r] = A(); }
      for (var k = 0u; k < DK; k++) {
        let kf = subgroupMatrixLoad<R, col_major>(&qkv16, k0 + (j * BC + 16u * c) * D + 16u * k, D);
        for (var r = 0u; r < RQ; r++) { s[r] = subgroupMatrixMultiplyAccumulate(q[r * DK + k], kf, s[r]); }
      }
      for (var r = 0u; r < RQ; r++) { subgroupMatrixStore<row_major>(&Sf, 16u * r * BC + 16u * c, s[r], BC); }
    }
    workgroupBarrier();

    // Online softmax in f32, per row; keys past N do not count. Columns are rotated by row so that the 32
    // invocations read 32 different banks. One pass: P̃ = 2^(S − m) with the current m, the row's maximum taken on the
    // way; only where that maximum exceeds m by more than TAU (every row in the first tile, rarely after) is P̃
    // written again with the new m (`writeRow`).
    var raise = false;
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
        Pt[row * BC + col] = f16(p);
      }
      for (var lane = 1u; lane < G; lane <<= 1u) { mx = max(mx, subgroupShuffleXor(mx, lane)); }
      var mNew = mOld;
      if (mx > mOld + TAU) {
        mNew = mx;
        sum = writeRow(row, g, j, mNew);
      }
      let alpha = exp2(mOld - mNew);
      if (j > 0u && mNew != mOld) { raise = true; }
      m[rr] = mNew;
      l[rr] = l[rr] * alpha + sum;
      if (g == 0u) { rowScale[row] = alpha; }
    }
    if (raise) { flag.x = 1u; }
    // Rare: a row's maximum grew by more than TAU, so O is rescaled by 2^(m_old − m_new) through workgroup memory.
    if (workgroupUniformLoad(&flag).x != 0u) {
      for (var r = 0u; r < RQ; r++) {
        for (var n = 0u; n < DK; n++) { subgroupMatrixStore<row_major>(&Sf, 16u * r * D + 16u * n, o[r * DK + n], D); }
      }
      workgroupBarrier();
      for (var e = t; e < BR * D; e += 32u) { Sf[e] *= rowScale[e / D]; }
      workgroupBarrier();
      for (var r = 0u; r < RQ; r++) {
        for (var n = 0u; n < DK; n++) { o[r * DK + n] = subgroupMatrixLoad<A, row_major>(&Sf, 16u * r * D + 16u * n, D); }
      }
    }

    // O += P̃ V_j: each V fragment is loaded once and used by the RQ row fragments of P̃.
    for (var c = 0u; c < NC; c++) {
      var p: array<L, RQ_MAX>;
      for (var r = 0u; r < RQ; r++) { p[r] = subgroupMatrixLoad<L, row_major>(&Pt, 16u * r * BC + 16u * c, BC); }
      for (var n = 0u; n < DK; n++) {
        let vf = subgroupMatrixLoad<R, row_major>(&qkv16, v0 + (j * BC + 16u * c) * D + 16u * n, D);
        for (var r = 0u; r < RQ; r++) { o[r * DK + n] = subgroupMatrixMultiplyAccumulate(p[r], vf, o[r * DK + n]); }
      }
    }
  }

  // ℓ_i: the sum of the row's partial sums; O_i = O / ℓ_i, through workgroup memory, rows past N not written.
  for (var rr = 0u; rr < RPI; rr++) {
    var sum = l[rr];
    for (var lane = 1u; lane < G; lane <<= 1u) { sum += subgroupShuffleXor(sum, lane); }
    if (g == 0u) { rowScale[t / G + rr * (32u / G)] = 1.0 / sum; }
  }
  workgroupBarrier();
  for (var r = 0u; r < RQ; r++) {
    for (var n = 0u; n < DK; n++) { subgroupMatrixStore<row_major>(&Sf, 16u * r * D + 16u * n, o[r * DK + n], D); }
  }
  workgroupBarrier();
  for (var e = t; e < BR * D; e += 32u) {
    let row = e / D;
    if (i * BR + row < N) { O[(b * N + i * BR + row) * D + e % D] = Sf[e] * rowScale[row]; }
  }
}
