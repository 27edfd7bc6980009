// The interface of the tiled attention kernels (attention-fp32 and attention-matrix), appended to each by tiledKernel
// (tiled-host.ts), whose host fills it: the uniform, the bindings, and the band and block tests both kernels make.
// Each kernel declares `Packed` (how q, k, v and O are held in memory).

struct Params {
  Lq: u32,
  Lk: u32,
  Hq: u32,
  GROUP: u32,              // query heads per KV head
  bh: u32,                 // B·Hq: (batch, head) pairs in this run
  batch0: u32,             // the run's first batch, for the masks (which cover every batch)
  qBatch: u32,             // strides of Q and O in vec4s: batch, head, row
  qHead: u32,
  qRow: u32,
  kvBatch: u32,            // strides of K and V in vec4s
  kvHead: u32,
  kvRow: u32,
  scaleLog2: f32,          // scale·log2(e)
  left: i32,               // keys before the diagonal a row sees (a large number when unbounded)
  right: i32,              // keys after it (0 when causal)
  maskB: u32,              // element mask strides in f32s (0 along broadcast dimensions)
  maskH: u32,
  maskI: u32,
  maskJ: u32,
  blockRows: u32,          // rows and keys of a block of the block mask
  blockKeys: u32,
  blocksB: u32,            // block mask strides in flags
  blocksH: u32,
  blocksI: u32,
  blocksJ: u32,
  minusInfinity: u32,      // 0xff800000, the bits of −∞ (WGSL has no constant for it), the lse of a row with no key
  splits: u32,             // workgroups per row block, each a range of its tiles; 1: O is written directly
  perSplit: u32,           // tiles per range (0: count / splits each)
  mask: u32,               // 1: an element mask is bound
  blocks: u32,             // 1: a block mask is bound
  blockTiles: u32,         // 1: every kernel tile lies inside one block (blocks are whole tiles): no per-score test
  writeLse: u32,           // 1: write each row's log-sum-exp
  cached: u32,             // 1: batch b holds only its first tileLists[b] keys (no block mask then)
}

@group(0) @binding(0) var<storage, read> q: array<Packed>;
@group(0) @binding(1) var<storage, read> k: array<Packed>;
@group(0) @binding(2) var<storage, read> v: array<Packed>;
@group(0) @binding(3) var<storage, read_write> O: array<Packed>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(5) var<storage, read> mask: array<f32>;          // additive, EXCLUDED for excluded keys
@group(0) @binding(6) var<storage, read> blockFlags: array<u32>;   // 1: the block is computed
@group(0) @binding(7) var<storage, read_write> lse: array<f32>;     // B·Hq·Lq: log-sum-exp of each row
@group(0) @binding(8) var<storage, read> tileLists: array<u32>;     // per (batch, head, query tile): start, count; then tiles.
                                                                    // Without a block mask: each batch's cache length
                                                                    // when `cached` is 1
@group(0) @binding(9) var<storage, read_write> Opart: array<vec4<f32>>;  // per (pair, split, row): unnormalized O
@group(0) @binding(10) var<storage, read_write> ML: array<vec2<f32>>;    // per (pair, split, row): m, ℓ

const LOWEST: f32 = -3.0e38;   // stands for −∞ in m_i and in excluded scores
const EXCLUDED: f32 = -3.0e38; // in the mask: the key is excluded (the host writes it for −∞ and for false)

// The band of keys row i sees in a batch of Lk valid keys: [i + Lk − Lq − left, i + Lk − Lq + right], signed.
fn bandFirst(i: u32, Lk: u32) -> i32 { return i32(i) + i32(Lk) - i32(params.Lq) - params.left; }
fn bandLast(i: u32, Lk: u32) -> i32 { return i32(i) + i32(Lk) - i32(params.Lq) + params.right; }

// The flag of the block that holds (row i, key j) of (batch b, head hq).
fn blockKept(b: u32, hq: u32, i: u32, j: u32) -> bool {
  return blockFlags[b * params.blocksB + hq * params.blocksH + (i / params.blockRows) * params.blocksI + (j / params.blockKeys) * params.blocksJ] != 0u;
}
