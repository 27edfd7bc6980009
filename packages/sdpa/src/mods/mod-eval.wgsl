// The score and mask functions evaluated for the CPU computations (evaluate-mods.ts): one invocation per (b, h, q, k)
// of [B, Hq, Lq, Lk], score_mod of the given score (the oracle's float64 s rounded to float32) and mask_mod as 1 or 0.
// mod-source.ts appends the caller's functions and the mod buffers (group 1), as in the kernel.

struct ModEvalParams {
  Hq: u32,
  Lq: u32,
  Lk: u32,
  count: u32,              // B·Hq·Lq·Lk
}

@group(0) @binding(0) var<uniform> evalParams: ModEvalParams;
@group(0) @binding(1) var<storage, read> evalScores: array<f32>;
@group(0) @binding(2) var<storage, read_write> evalResults: array<vec2<f32>>;   // score_mod (held), mask_mod

@compute @workgroup_size(64)
fn modEval(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) nwg: vec3u,
           @builtin(local_invocation_index) t: u32) {
  let e = (wid.y * nwg.x + wid.x) * 64u + t;
  if (e >= evalParams.count) { return; }
  let k = e % evalParams.Lk;
  let q = (e / evalParams.Lk) % evalParams.Lq;
  let h = (e / evalParams.Lk / evalParams.Lq) % evalParams.Hq;
  let b = e / evalParams.Lk / evalParams.Lq / evalParams.Hq;
  var r = vec2<f32>(evalScores[e], 1.0);
  if (MOD_SCORES) { r.x = score_mod(r.x, b, h, q, k); }
  if (MOD_MASKS) { r.y = select(0.0, 1.0, mask_mod(b, h, q, k)); }
  evalResults[e] = r;
}
