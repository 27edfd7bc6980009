// Rung 4 — naive: the per-step kernel set.
//
// Changed from seq-flash: its Algorithm 1 moves from one CPU thread to the GPU, one thread per element of each step.
// For one K/V tile j (the host loops over j = 0..Tc-1 and passes kv0 = j·Bc) six dispatches run, each one step of
// Algorithm 1 over every batch and every query row at once, each reading its inputs from and writing its result to GPU
// memory:
//   scores        S_ij  = Q_i K_jᵀ · scale                      (batches × N × Bc)
//   row_max       m̃_ij = rowmax(S_ij)                           (batches × N)
//   exponentiate  P̃_ij = exp(S_ij − m̃_ij), written over S
//   row_sum       ℓ̃_ij = rowsum(P̃_ij)
//   update_o      O_i   = diag(ℓ_new)⁻¹ (diag(ℓ_i) e^(m_i − m_new) O_i + e^(m̃_ij − m_new) P̃_ij V_j)
//   update_ml     ℓ_i = ℓ_new,  m_i = m_new
// Why it should be faster: thousands of GPU threads instead of one CPU thread. It is still slow on purpose: S makes
// four round trips through GPU memory per tile, O two, and every step pays a dispatch. The fused rung keeps all of it
// on chip in one kernel.
// Measured: docs/rungs/04-naive.md.

override D: u32;          // head size d
override BC: u32;         // K/V tile rows Bc
override WG: u32 = 256u;  // threads per workgroup

struct Tile {
  N: u32,
  batches: u32,
  kv0: u32,     // first key of tile j: j·Bc
  first: u32,   // 1 for j = 0: m, ℓ and O hold nothing yet (m = −∞, ℓ = 0, O = 0)
  scale: f32,   // 1/√d
}

@group(0) @binding(0) var<storage, read> qkv: array<f32>;           // per batch: Q, K, V, each N × d
@group(0) @binding(1) var<storage, read_write> S: array<f32>;       // batches × N × Bc: S_ij, then P̃_ij
@group(0) @binding(2) var<storage, read_write> mTile: array<f32>;   // batches × N: m̃_ij
@group(0) @binding(3) var<storage, read_write> lTile: array<f32>;   // batches × N: ℓ̃_ij
@group(0) @binding(4) var<storage, read_write> m: array<f32>;       // batches × N: running max m_i
@group(0) @binding(5) var<storage, read_write> l: array<f32>;       // batches × N: running sum ℓ_i
@group(0) @binding(6) var<storage, read_write> O: array<f32>;       // batches × N × d
@group(0) @binding(7) var<uniform> tile: Tile;

const LOWEST: f32 = -3.0e38;  // stands for −∞: exp(LOWEST − x) is 0 for any score x

fn thread_index(wid: vec3u, nwg: vec3u, lid: u32) -> u32 {
  return (wid.y * nwg.x + wid.x) * WG + lid;
}

// Step 1: one thread per (batch, query row i, key c of the tile). Keys past N score LOWEST.
@compute @workgroup_size(WG)
fn scores(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
          @builtin(local_invocation_index) lid: u32) {
  let e = thread_index(wid, nwg, lid);
  let N = tile.N;
  if (e >= tile.batches * N * BC) { return; }
  let row = e / BC;             // b·N + i
  let b = row / N;
  let key = tile.kv0 + e % BC;
  var s = LOWEST;
  if (key < N) {
    let q = b * 3u * N * D + (row % N) * D;
    let k = b * 3u * N * D + N * D + key * D;
    var dot = 0.0;
    for (var x = 0u; x < D; x++) {
      dot += qkv[q + x] * qkv[k + x];
    }
    s = dot * tile.scale;
  }
  S[e] = s;
}

// Step 2: one thread per (batch, query row).
@compute @workgroup_size(WG)
fn row_max(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
           @builtin(local_invocation_index) lid: u32) {
  let row = thread_index(wid, nwg, lid);
  if (row >= tile.batches * tile.N) { return; }
  var mt = LOWEST;
  for (var c = 0u; c < BC; c++) {
    mt = max(mt, S[row * BC + c]);
  }
  mTile[row] = mt;
}

// Step 3: one thread per score.
@compute @workgroup_size(WG)
fn exponentiate(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
                @builtin(local_invocation_index) lid: u32) {
  let e = thread_index(wid, nwg, lid);
  if (e >= tile.batches * tile.N * BC) { return; }
  S[e] = exp(S[e] - mTile[e / BC]);
}

// Step 4: one thread per (batch, query row).
@compute @workgroup_size(WG)
fn row_sum(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
           @builtin(local_invocation_index) lid: u32) {
  let row = thread_index(wid, nwg, lid);
  if (row >= tile.batches * tile.N) { return; }
  var lt = 0.0;
  for (var c = 0u; c < BC; c++) {
    lt += S[row * BC + c];
  }
  lTile[row] = lt;
}

struct Running {
  alpha: f32,  // e^(m_i − m_new)
  beta: f32,   // e^(m̃_ij − m_new)
  li: f32,     // ℓ_i before this tile
  mNew: f32,
  lNew: f32,
}

fn running(row: u32) -> Running {
  let fresh = tile.first == 1u;
  let mi = select(m[row], LOWEST, fresh);
  let li = select(l[row], 0.0, fresh);
  let mt = mTile[row];
  let mNew = max(mi, mt);
  let alpha = exp(mi - mNew);
  let beta = exp(mt - mNew);
  return Running(alpha, beta, li, mNew, alpha * li + beta * lTile[row]);
}

// Step 5: one thread per element of O.
@compute @workgroup_size(WG)
fn update_o(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
            @builtin(local_invocation_index) lid: u32) {
  let e = thread_index(wid, nwg, lid);
  let N = tile.N;
  if (e >= tile.batches * N * D) { return; }
  let row = e / D;
  let b = row / N;
  let r = running(row);
  let v = b * 3u * N * D + 2u * N * D + tile.kv0 * D + e % D;
  let cols = min(BC, N - tile.kv0);
  var pv = 0.0;
  for (var c = 0u; c < cols; c++) {
    pv += S[row * BC + c] * qkv[v + c * D];
  }
  let previous = select(O[e], 0.0, tile.first == 1u);
  O[e] = (r.li * r.alpha * previous + r.beta * pv) / r.lNew;
}

// Step 6: one thread per (batch, query row), after every thread of step 5 has read the old m and ℓ.
@compute @workgroup_size(WG)
fn update_ml(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
             @builtin(local_invocation_index) lid: u32) {
  let row = thread_index(wid, nwg, lid);
  if (row >= tile.batches * tile.N) { return; }
  let r = running(row);
  m[row] = r.mNew;
  l[row] = r.lNew;
}
