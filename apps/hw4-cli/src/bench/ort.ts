/**
 * ONNX Runtime's WebGPU flash attention (the kernel transformers.js runs) on the bench's model cases, as a peer beside
 * ours and PyTorch's. It is no dependency of any package: `sdpa --bench --ort` installs onnxruntime-node on demand into
 * a folder of its own (FA_ORT_DIR, else hw4-cli's cache folder), with its install scripts off (they fetch CUDA
 * binaries; the package itself carries the WebGPU EP for Linux x64).
 *
 * ONNX Runtime brings its own Dawn, so it runs in a child process. The models are attention-only (onnx-model.ts):
 * R chained nodes against one node, each timed as the median wall time of a session.run after the GPU has been kept
 * busy; (t_R − t_1)/(R − 1) is one node's kernel time, the uploads and readback of the run cancelling out.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SdpaDims, SdpaOptions } from '@fa/core';
import { attentionModel, onnxUnsupported, type OnnxAttention } from './onnx-model.js';

/** The onnxruntime-node version the bench installs and measures. */
export const ORT_VERSION = '1.30.0';
/** Chained nodes of the long model. */
const CHAIN = 9;

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
  if (options.scale !== undefined) return 'a custom scale is not timed';
  const problem = { B, Hq, Hkv, L: Lq, d, causal: options.causal === true, dtype };
  return onnxUnsupported(problem) ?? problem;
}

/** The child process: loads onnxruntime-node, times the models in argv, prints JSON. */
const RUNNER = `
const [entry, oneNode, chained, dimsText, warmMs, repeats] = process.argv.slice(1);
const ort = (await import('node:module')).createRequire(entry + '/')('./');
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
const options = { executionProviders: ['webgpu'], extra: { session: { disable_cpu_ep_fallback: '1' } } };
const fs = await import('node:fs');
const time = async (path) => {
  const session = await ort.InferenceSession.create(fs.readFileSync(path), options);
  const once = async () => { const t = performance.now(); await session.run(feeds); return performance.now() - t; };
  const start = performance.now();
  while (performance.now() - start < Number(warmMs)) await once();
  const times = [];
  for (let r = 0; r < Number(repeats); r++) times.push(await once());
  await session.release();
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
};
const one = await time(oneNode);
const many = await time(chained);
process.stdout.write(JSON.stringify({ one, many }) + '\\n');
process.exit(0);
`;

/** ONNX Runtime's kernel time in ms for one case, or why there is none. */
export function timeOrt(entry: string, problem: OnnxAttention, warmMs = 500, repeats = 15): number | string {
  const folder = mkdtempSync(join(tmpdir(), 'fa-ort-'));
  try {
    const one = join(folder, 'one.onnx');
    const chained = join(folder, 'chained.onnx');
    writeFileSync(one, attentionModel(problem, 1));
    writeFileSync(chained, attentionModel(problem, CHAIN));
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', RUNNER, entry, one, chained, JSON.stringify(problem), String(warmMs), String(repeats)], {
      encoding: 'utf8',
      timeout: 600_000,
    });
    if (run.status !== 0) {
      const last = run.stderr.trim().split('\n').filter((l) => l.length > 0).pop() ?? `exit ${run.status ?? run.signal ?? '?'}`;
      return `ONNX Runtime failed: ${last.slice(0, 200)}`;
    }
    const { one: t1, many: tR } = JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as { one: number; many: number };
    return (tR - t1) / (CHAIN - 1);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
