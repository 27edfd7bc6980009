/**
 * PyTorch's scaled_dot_product_attention on the same input file, in fp32 or fp16 (Q, K, V converted on the GPU
 * before timing; PyTorch picks its flash kernel for fp16), when Python with a CUDA PyTorch is present: kernel time
 * from CUDA events around calls back to back (each repeat the mean of enough calls for 2 ms; the median of repeats),
 * and its output on the sampled rows so its error can be shown beside ours.
 */
import { spawnSync } from 'node:child_process';
import type { RowRef } from '@fa/reference';
import type { Shape } from '@fa/io/node';
import { median } from './measure.js';

/**
 * Python: `gpu_ms_per_call(call, samples)`, the GPU's time per call of `call` as `samples` means, each of n calls issued
 * back to back between one pair of CUDA events (n enough for 2 ms, at most 200), as our kernels are timed in a queue
 * that never runs dry. Events around one call each, with a synchronize after it, add Python's launch of the call to the
 * GPU's time (docs/sdpa.md: PyTorch's times). Shared by both benches' PyTorch scripts; `torch` must be imported.
 */
export const TORCH_GPU_MS_PER_CALL = `
def gpu_ms_per_call(call, samples):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); call(); e.record(); torch.cuda.synchronize()
    n = max(1, min(200, int(2.0 / max(s.elapsed_time(e), 1e-3))))
    means = []
    for _ in range(samples):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(n):
            call()
        e.record(); torch.cuda.synchronize()
        means.append(s.elapsed_time(e) / n)
    return means
`;

const SCRIPT = `
import json, sys
import numpy as np
import torch
${TORCH_GPU_MS_PER_CALL}
path, B, N, d, warmup, repeats, rows, dtype = sys.argv[1:]
B, N, d, warmup, repeats = int(B), int(N), int(d), int(warmup), int(repeats)
raw = np.fromfile(path, dtype='<f4', offset=12).reshape(B, 3, N, d)
x = torch.from_numpy(raw).cuda()
q, k, v = (x[:, i:i + 1].to(getattr(torch, dtype)).contiguous() for i in range(3))
del x
sdpa = torch.nn.functional.scaled_dot_product_attention
with torch.no_grad():
    for _ in range(warmup):
        o = sdpa(q, k, v)
    torch.cuda.synchronize()
    times = gpu_ms_per_call(lambda: sdpa(q, k, v), repeats)
    o = sdpa(q, k, v)  # the output the sampled rows are read from
sample = [o[b, 0, i].double().cpu().tolist() for b, i in json.loads(rows)]
print(json.dumps({"times": times, "torch": torch.__version__, "device": torch.cuda.get_device_name(), "dtype": str(q.dtype), "sample": sample}))
`;

/** The precisions the bench can time PyTorch in: its name in hw4-cli, and torch's. */
export const TORCH_DTYPES = { fp32: 'float32', fp16: 'float16' } as const;
export type TorchDtype = keyof typeof TORCH_DTYPES;

/** --torch-dtype: a comma-separated list of fp32 and fp16, each at most once; or why it is not. */
export function parseTorchDtypes(text: string): TorchDtype[] | string {
  const names = text.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  const bad = names.find((n) => !(n in TORCH_DTYPES));
  if (bad !== undefined) return `unknown PyTorch dtype "${bad}" (expected ${Object.keys(TORCH_DTYPES).join(', ')}, comma-separated)`;
  if (names.length === 0) return 'no PyTorch dtype given';
  return [...new Set(names as TorchDtype[])];
}

export interface TorchResult {
  ms: number;
  times: number[];
  version: string;
  device: string;
  sample: number[][];
}

/** Why PyTorch cannot be timed here, or undefined when it can. */
export function torchUnavailable(python: string): string | undefined {
  const probe = spawnSync(python, ['-c', 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 3)'], { encoding: 'utf8' });
  if (probe.error) return `${python} not found`;
  if (probe.status === 3) return 'PyTorch has no CUDA device here';
  if (probe.status !== 0) return `${python} has no PyTorch`;
  return undefined;
}

export function timeTorch(
  python: string,
  inputPath: string,
  shape: Shape,
  rows: readonly RowRef[],
  warmups: number,
  repeats: number,
  dtype: TorchDtype = 'fp32',
): TorchResult | string {
  const args = [
    '-c',
    SCRIPT,
    inputPath,
    String(shape.B),
    String(shape.N),
    String(shape.d),
    String(warmups),
    String(repeats),
    JSON.stringify(rows.map((r) => [r.batch, r.row])),
    TORCH_DTYPES[dtype],
  ];
  const run = spawnSync(python, args, { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  if (run.status !== 0) {
    const last = run.stderr.trim().split('\n').pop() ?? `exit ${run.status}`;
    return `PyTorch failed: ${last}`;
  }
  const parsed = JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as { times: number[]; torch: string; device: string; sample: number[][] };
  return { ms: median(parsed.times), times: parsed.times, version: parsed.torch, device: parsed.device, sample: parsed.sample };
}
