/**
 * The kernels of the workgroup-reads microbenchmark (lds-pattern-bench.ts). `readsKernel`: 8 vec4 reads from a 16 KiB
 * workgroup tile per step, the 32 invocations of a subgroup reading 1, 2, 4 or 32 different vec4s at once (the
 * override MASK: 0, 1, 3 or 31), each read feeding 4 multiply-adds per row. `microtileKernel`: each invocation
 * accumulating an R × C block from two operands read out of workgroup memory.
 */

/** Invocations per workgroup of the read loops. */
export const WG = 128;
/** Workgroups of the read loops: 32 per SM of an H100. */
export const WORKGROUPS = 132 * 32;
/** Loop iterations per invocation, 8 vec4 reads each. */
export const STEPS = 2048;
/** The read patterns, by the override MASK: lane & MASK picks the vec4, so MASK + 1 different vec4s per read. */
export const PATTERNS = { same: 0, pair: 1, quad: 3, all: 31 } as const;
/** Scalar multiply-adds per invocation of a microtile loop, as in the read loops. */
export const MICRO_FMAS = 131072;

const ids = (n: number): number[] => Array.from({ length: n }, (_, k) => k);

/**
 * Reads vec4 ((8·it) mod 32 + x)·32 + (lane & MASK) of a 1024-vec4 tile (16 KiB), 8 per iteration, each into ROWS
 * rows' accumulators (4·ROWS multiply-adds per read); with qFromMemory also the ROWS query vec4s, 32 different ones
 * per read (each invocation its own rows). With SHUFFLES, that many scalars per step also go to the partner invocation
 * (lane ^ 1) and are added to an accumulator of the other row, as split-softmax's scores and P̃ do (about one scalar
 * per 8 reads at d = 64).
 */
export function readsKernel(ROWS: number, qFromMemory = false, SHUFFLES = 0): string {
  const rows = ids(ROWS);
  const qReads = qFromMemory
    ? rows.map((r) => `let q${r} = tile[(((8u * it + ${r}u) % 32u) * 32u + lane + 512u) % 1024u];`).join('\n    ')
    : '';
  const fmas = (k: string, a: number): string => rows.map((r) => `acc${r}_${a} = fma(q${r}, ${k}, acc${r}_${a});`).join(' ');
  const shuffles = ids(SHUFFLES).map((s) =>
    `acc0_${s % 4}[${s % 4}] += subgroupShuffleXor(acc${ROWS - 1}_${(s + 1) % 4}[${(s + 2) % 4}], 1u);`).join('\n    ');
  return `
${SHUFFLES > 0 ? 'enable subgroups;' : ''}
override MASK: u32;
@group(0) @binding(0) var<storage, read_write> out: array<vec4<f32>>;
var<workgroup> tile: array<vec4<f32>, 1024>;

@compute @workgroup_size(${WG})
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3u) {
  for (var e = t; e < 1024u; e += ${WG}u) { tile[e] = vec4<f32>(f32(e % 7u) * 0.125, 0.5, -0.25, f32(e % 3u)); }
  workgroupBarrier();
  let lane = t % 32u;
  ${qFromMemory ? '' : rows.map((r) => `let q${r} = vec4<f32>(f32(t) * 1e-3 + ${r}.0, 0.5, 0.25, 0.125);`).join('\n  ')}
  ${rows.map((r) => [0, 1, 2, 3].map((a) => `var acc${r}_${a} = vec4<f32>(0.0);`).join(' ')).join('\n  ')}
  for (var it = 0u; it < ${STEPS}u; it++) {
    let base = ((8u * it) % 32u) * 32u + (lane & MASK);
    ${qReads}
    ${ids(8).map((x) => `let k${x} = tile[base + ${32 * x}u];`).join('\n    ')}
    ${ids(8).map((x) => fmas(`k${x}`, x % 4)).join('\n    ')}
    ${shuffles}
  }
  out[wid.x * ${WG}u + t] = ${rows.map((r) => [0, 1, 2, 3].map((a) => `acc${r}_${a}`).join(' + ')).join(' + ')};
}`;
}

/**
 * Register microtiles, the other way to make a read feed more multiply-adds (the GEMM kernels' way, not the rungs'
 * so far): each invocation accumulates an R × C block of scalars (R query rows × C keys of S, say), and per step of
 * the shared dimension reads R/4 vec4s of one operand and C/4 of the other, both from workgroup memory (rows of the
 * tile hold the operands transposed, 64 vec4s of each). A subgroup is RG groups of rows × 32/RG groups of columns, so
 * a read of the first operand touches RG different vec4s, of the second 32/RG (neighbouring ones: no bank conflicts).
 * R·C multiply-adds per (R + C)/4 reads: 8 at 4 × 4 (the rungs' ratio), 16 at 8 × 8, 21.3 at 8 × 16.
 * With `pad` the workgroup also holds 12 KiB it barely uses (44 KiB in all), so at most 5 workgroups fit an SM, as in
 * a FlashAttention kernel whose tiles fill the workgroup memory.
 */
export function microtileKernel(R: number, C: number, RG: number, WG_M = WG, pad = false): string {
  const CG = 32 / RG;
  const K_UNROLL = 4;
  const accs = ids(R).map((r) => ids(C / 4).map((y) => `acc${r}_${y}`));
  const step = (kk: number): string => [
    `{ let row = ((it * ${K_UNROLL}u + ${kk}u) % 16u) * 128u;`,
    ...ids(R / 4).map((x) => `let a${x} = tile[row + ${x * RG}u + rg];`),
    ...ids(C / 4).map((y) => `let b${y} = tile[row + ${64 + y * CG}u + cg];`),
    ...accs.flatMap((row, r) => row.map((name, y) => `${name} = fma(vec4<f32>(a${Math.floor(r / 4)}[${r % 4}]), b${y}, ${name});`)),
    '}',
  ].join('\n    ');
  return `
@group(0) @binding(0) var<storage, read_write> out: array<vec4<f32>>;
var<workgroup> tile: array<vec4<f32>, 2048>;
${pad ? 'var<workgroup> pad: array<vec4<f32>, 768>;' : ''}

@compute @workgroup_size(${WG_M})
fn main(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wid: vec3u) {
  for (var e = t; e < 2048u; e += ${WG_M}u) { tile[e] = vec4<f32>(f32(e % 7u) * 0.125, 0.5, -0.25, f32(e % 3u)); }
  ${pad ? 'pad[t] = vec4<f32>(f32(t));' : ''}
  workgroupBarrier();
  let lane = t % 32u;
  let rg = lane / ${CG}u;
  let cg = lane % ${CG}u;
  ${accs.flat().map((name) => `var ${name} = vec4<f32>(0.0);`).join(' ')}
  for (var it = 0u; it < ${MICRO_FMAS / (R * C * K_UNROLL)}u; it++) {
    ${ids(K_UNROLL).map((kk) => step(kk)).join('\n    ')}
  }
  out[wid.x * ${WG_M}u + t] = ${accs.flat().join(' + ')}${pad ? ' + pad[(t + 1u) % 768u]' : ''};
}`;
}

/** The read loops: rows per invocation and whether the query rows are read from workgroup memory too. */
export const READ_LOOPS: readonly (readonly [ROWS: number, qFromMemory: boolean])[] = [[2, false], [4, false], [4, true]];

/**
 * The loops with scalars exchanged between the invocations of a pair (neighbouring vec4s per read, `pair`), the
 * traffic that splitting d between two invocations adds: split-softmax at d = 64 shuffles 17 scalars per 128 reads
 * (8 partial scores, 8 P̃, a rescale factor per 8 keys), about one per step here; four rows per pair would need two.
 */
export const SHUFFLE_LOOPS: readonly (readonly [ROWS: number, SHUFFLES: number])[] = [[2, 1], [2, 2], [2, 4], [4, 2], [4, 4]];

/** The microtiles: R, C, RG, workgroup size, and whether 12 KiB of padding keep more workgroups off an SM. */
export const MICROTILES: readonly (readonly [R: number, C: number, RG: number, WG_M: number, pad: boolean])[] = [
  [4, 4, 4, WG, false], [8, 8, 4, WG, false], [8, 8, 2, WG, false], [8, 8, 1, WG, false], [8, 16, 4, WG, false], [16, 8, 4, WG, false],
  [8, 8, 4, 64, true], [8, 4, 4, 128, true], [8, 8, 4, 128, true],
];
