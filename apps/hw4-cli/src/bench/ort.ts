/**
 * ONNX Runtime's WebGPU flash attention (the kernel transformers.js runs) on the bench's model cases, as a peer beside
 * ours and PyTorch's. It is no dependency of any package: `sdpa --bench --ort` installs onnxruntime-node on demand into
 * a folder of its own (FA_ORT_DIR, else hw4-cli's cache folder), with its install scripts off (they fetch CUDA
 * binaries; the package itself carries the WebGPU EP for Linux x64).
 *
 * ONNX Runtime brings its own Dawn, so it runs in a child process. The model is attention-only (onnx-model.ts), a few
 * nodes chained through the query; ONNX Runtime's profile gives each program's GPU-timed duration (its uploads and
 * readback are not in them), read after the GPU has been kept busy for half a second.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SdpaDims, SdpaOptions } from '@fa/core';
import { attentionModel, onnxUnsupported, type OnnxAttention } from './onnx-model.js';

/** The onnxruntime-node version the bench installs and measures. */
export const ORT_VERSION = '1.30.0';
/** Attention nodes of the model, chained through the query (more GPU work per run, so fewer runs between gaps). */
const NODES = 3;

/** The folder onnxruntime-node is installed into. */
export function ortFolder(): string {
  return process.env.FA_ORT_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'hw4-cli', `onnxruntime-node-${ORT_VERSION}`);
}

/** onnxruntime-node in `folder`, installed there with npm if it is not; or why it cannot be. */
export function ensureOrt(folder = ortFolder()): string | { reason: string } {
  const entry = join(folder, 'node_modules', 'onnxruntime-node');
  if (existsSync(join(entry, 'package.json'))) return entry;
  mkdirSync(folder, { recursive: true });
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const run = spawnSync(npm, ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--prefix', folder, `onnxruntime-node@${ORT_VERSION}`], { encoding: 'utf8' });
  if (run.error || run.status !== 0) {
    const last = (run.stderr || String(run.error ?? '')).trim().split('\n').pop() ?? '';
    return { reason: `onnxruntime-node ${ORT_VERSION} could not be installed into ${folder} (${last}); install it there by hand or set FA_ORT_DIR` };
  }
  return existsSync(join(entry, 'package.json')) ? entry : { reason: `npm installed no onnxruntime-node into ${folder}` };
}

/** A bench case as ONNX Runtime's operators express it, or why they cannot. */
export function onnxProblem(dims: SdpaDims, options: SdpaOptions, dtype: 'f32' | 'f16'): OnnxAttention | string {
  const { B, Hq, Hkv, Lq, Lk, d } = dims;
  if (Lq !== Lk) return 'Lq ≠ Lk needs a KV cache in ONNX Runtime; not timed';
  const masked = options.mask !== undefined || options.blockMask !== undefined || options.window !== undefined || options.cacheLengths !== undefined;
  if (masked) return 'masks, windows and cache lengths are not among its attention operators here';
  if (options.scoreMod !== undefined || options.maskMod !== undefined) return 'score and mask functions are not among its attention operators';
  if (options.scale !== undefined) return 'a custom scale is not timed';
  // The bench's model gives GroupQueryAttention none of these, so a time would be of another attention.
  if (options.softcap !== undefined || options.alibiSlopes !== undefined || options.sinks !== undefined) return 'softcap, ALiBi and sinks are not given to its operators here; not timed';
  // GroupQueryAttention takes one head size for Q, K and V, and the model chains its nodes through the query (each
  // output is the next node's query), so an output of another head size cannot be expressed.
  if (dims.dv !== undefined && dims.dv !== d) return `dv = ${dims.dv} ≠ d = ${d}: GroupQueryAttention takes one head size, and the model chains its nodes through the query; not timed`;
  const problem = { B, Hq, Hkv, L: Lq, d, causal: options.causal === true, dtype };
  return onnxUnsupported(problem) ?? problem;
}

/**
 * The child process: loads onnxruntime-node, runs the model with profiling on, the GPU kept busy for `warmMs` and then
 * `repeats` more runs, and prints the kernel time in ms as JSON: for each program of a node (`<node>&<op>&<program>`
 * in the profile: FlashAttention, and CopyKVCache for GroupQueryAttention), the median of its GPU-timed durations,
 * summed over the node's programs; the median over the nodes.
 */
const RUNNER = `
const [entry, model, dimsText, warmMs, repeats, folder] = process.argv.slice(1);
const ort = (await import('node:module')).createRequire(entry + '/')('./');
const fs = await import('node:fs');
const p = JSON.parse(dimsText);
const count = (h) => p.B * p.L * h * p.d;
const data = (h, seed) => {
  let s = seed >>> 0;
  const x = new Float32Array(count(h));
  for (let e = 0; e < x.length; e++) { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; x[e] = (s / 2 ** 32) * 2 - 1; }
  if (p.dtype === 'f32') return x;
  const bits = new Uint16Array(x.length);
  const f = new Float32Array(1), u = new Uint32Array(f.buffer);
  for (let e = 0; e < x.length; e++) { f[0] = x[e]; const v = u[0], sign = (v >>> 16) & 0x8000, exp = ((v >>> 23) & 0xff) - 112, man = (v >>> 13) & 0x3ff; bits[e] = exp <= 0 ? sign : sign | (exp << 10) | man; }
  return bits;
};
const type = p.dtype === 'f32' ? 'float32' : 'float16';
const feeds = {
  query: new ort.Tensor(type, data(p.Hq, 1), [p.B, p.L, p.Hq * p.d]),
  key: new ort.Tensor(type, data(p.Hkv, 2), [p.B, p.L, p.Hkv * p.d]),
  value: new ort.Tensor(type, data(p.Hkv, 3), [p.B, p.L, p.Hkv * p.d]),
};
const session = await ort.InferenceSession.create(fs.readFileSync(model), {
  executionProviders: ['webgpu'],
  enableProfiling: true,
  profileFilePrefix: folder + '/profile',
  extra: { session: { disable_cpu_ep_fallback: '1' } },
});
const start = performance.now();
while (performance.now() - start < Number(warmMs)) await session.run(feeds);
for (let r = 0; r < Number(repeats); r++) await session.run(feeds);
session.endProfiling();
const file = fs.readdirSync(folder).find((f) => f.startsWith('profile'));
const events = JSON.parse(fs.readFileSync(folder + '/' + file, 'utf8')).filter((e) => e.cat === 'Api' && e.name.startsWith('attention'));
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const byProgram = new Map();
for (const e of events) byProgram.set(e.name, [...(byProgram.get(e.name) ?? []), e.dur]);
const byNode = new Map();
for (const [name, durations] of byProgram) { const node = name.split('&')[0]; byNode.set(node, (byNode.get(node) ?? 0) + median(durations)); }
if (byNode.size === 0) throw new Error('the profile holds no attention programs');
process.stdout.write(JSON.stringify({ ms: median([...byNode.values()]) / 1000, programs: [...byProgram.keys()] }) + '\\n');
process.exit(0);
`;

/** ONNX Runtime's kernel time in ms for one case (GPU timestamps from its profile), or why there is none. */
export function timeOrt(entry: string, problem: OnnxAttention, warmMs = 500, repeats = 20): number | string {
  const folder = mkdtempSync(join(tmpdir(), 'fa-ort-'));
  try {
    const model = join(folder, 'model.onnx');
    writeFileSync(model, attentionModel(problem, NODES));
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', RUNNER, entry, model, JSON.stringify(problem), String(warmMs), String(repeats), folder], {
      encoding: 'utf8',
      timeout: 600_000,
    });
    if (run.status !== 0) {
      const last = run.stderr.trim().split('\n').filter((l) => l.length > 0).pop() ?? `exit ${run.status ?? run.signal ?? '?'}`;
      return `ONNX Runtime failed: ${last.slice(0, 200)}`;
    }
    return (JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as { ms: number }).ms;
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
