// the cache append (WG set by its host); override constants:

// append-cache: a KV cache that grows in place. The caller preallocates K and V for Lk keys per head and keeps each
// batch's valid length in a u32 buffer; `append` copies the Lnew new rows of K and V of batch b to rows
// lengths[b] … lengths[b] + Lnew − 1 of its cache, and `advance` (the next dispatch, so it sees every copy done)
// adds Lnew to each length. The attention that follows in the same encoder reads the new lengths.
//
// Rows move as u32 words (a float32 element is one, two f16 elements are one), so one kernel serves both element
// types. Rows that would pass the cache's Lk rows are dropped and the length stops at Lk: a GPU cannot report an
// error, so the host checks the lengths it knows, and the caller sizes the cache for the longest sequence.

override WG: u32;         // invocations per workgroup

struct Params {
  rowWords: u32,           // u32 words per row: d for float32, d / 2 for f16
  rows: u32,               // Lnew: new rows per (batch, head)
  heads: u32,              // Hkv
  capacity: u32,           // Lk: rows per (batch, head) the cache holds
  batches: u32,            // B
  cacheBatch: u32,         // strides of the cache in words: batch, head, row
  cacheHead: u32,
  cacheRow: u32,
  newBatch: u32,           // strides of the new rows in words
  newHead: u32,
  newRow: u32,
}

@group(0) @binding(0) var<storage, read_write> kCache: array<u32>;
@group(0) @binding(1) var<storage, read_write> vCache: array<u32>;
@group(0) @binding(2) var<storage, read> kNew: array<u32>;
@group(0) @binding(3) var<storage, read> vNew: array<u32>;
@group(0) @binding(4) var<storage, read_write> lengths: array<u32>;
@group(0) @binding(5) var<uniform> params: Params;

// One invocation per word of the new rows: word w of row r of head h of batch b.
@compute @workgroup_size(WG)
fn append(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let e = (wid.y * nwg.x + wid.x) * WG + t;
  let w = e % params.rowWords;
  let r = (e / params.rowWords) % params.rows;
  let h = (e / params.rowWords / params.rows) % params.heads;
  let b = e / params.rowWords / params.rows / params.heads;
  if (b >= params.batches) { return; }
  // The row of the cache it goes to, length + r, when under Lk; compared without the sum, which a length near 2^32
  // (the caller's to keep from 0 to Lk) would wrap past 0.
  let length = min(lengths[b], params.capacity);
  if (r >= params.capacity - length) { return; }
  let at = length + r;
  let newAt = b * params.newBatch + h * params.newHead + r * params.newRow + w;
  let cacheAt = b * params.cacheBatch + h * params.cacheHead + at * params.cacheRow + w;
  kCache[cacheAt] = kNew[newAt];
  vCache[cacheAt] = vNew[newAt];
}

// One invocation per batch: its length grows by Lnew, up to Lk. min(length, Lk − Lnew) + Lnew is min(length + Lnew, Lk)
// without a sum that could wrap (the host keeps Lnew ≤ Lk).
@compute @workgroup_size(WG)
fn advance(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) t: u32) {
  let b = wid.x * WG + t;
  if (b < params.batches) { lengths[b] = min(lengths[b], params.capacity - params.rows) + params.rows; }
}
