#!/usr/bin/env python3
"""The attention function against PyTorch's scaled_dot_product_attention, case by case, through the CLI.

For each case it writes q, k, v (and a mask) as .npy files, runs `hw4-cli sdpa` on them, and compares OUTPUT with
PyTorch on the same tensors (float64 on the CPU, and float32 on CUDA when there is a GPU), with the project's semantics
mapped onto PyTorch's: the bottom-right causal mask and windows as explicit boolean masks (PyTorch's is_causal aligns
top-left when Lq != Lk), grouped heads through enable_gqa, block masks expanded to element masks. A row that sees no
key is 0 here and NaN in PyTorch: such rows are compared as 0. Cache lengths (`--cache-lengths`) become a key mask
with the band aligned to each batch's length. (Block masks are the library's, not the CLI's; the
test suite checks them against the float64 oracle.)

Usage: python3 scripts/sdpa-parity.py "node bundle/hw4-cli/hw4-cli.mjs" [--impl ID] [--dtype f16]
Prints a Markdown table and exits 1 if any case differs from PyTorch float64 by more than 1e-5 (f32 tensors), or by
more than twice PyTorch fp16's own difference from float64 on CUDA (f16 tensors: the plain f16 computation). A case the
named --impl declines (exit 2, "cannot run this problem here") is listed as declined and does not fail the run.
"""
import json, os, subprocess, sys, tempfile
import numpy as np
import torch

CLI = sys.argv[1].split()
IMPL = sys.argv[sys.argv.index('--impl') + 1] if '--impl' in sys.argv else None
F16 = '--dtype' in sys.argv and sys.argv[sys.argv.index('--dtype') + 1] == 'f16'
rng = np.random.default_rng(17)

def case(name, B, Hq, Hkv, Lq, Lk, d, causal=False, window=None, mask=None, layout='bhsd', scale=None, lengths=None):
    return dict(name=name, B=B, Hq=Hq, Hkv=Hkv, Lq=Lq, Lk=Lk, d=d, causal=causal, window=window, mask=mask, layout=layout, scale=scale, lengths=lengths)

CASES = [
    case('GQA 4, causal, Lq = Lk = 77', 2, 4, 1, 77, 77, 64, causal=True),
    case('Lq = 1 over 130 keys, bshd', 1, 2, 2, 1, 130, 64, layout='bshd'),
    case('Lq = 100 > Lk = 37, causal (rows that see nothing)', 1, 1, 1, 100, 37, 64, causal=True),
    case('window [5, 3], Lq < Lk', 1, 2, 1, 40, 90, 64, window=(5, 3)),
    case('Lk = 1, GQA 8', 1, 8, 1, 9, 1, 64),
    case('scale 0.3, bshd, GQA 2, causal', 2, 4, 2, 33, 50, 64, causal=True, layout='bshd', scale=0.3),
    case('d = 8, window [-1, 4]', 1, 2, 1, 33, 65, 8, window=(-1, 4)),
    case('d = 128, causal, Lq < Lk', 1, 1, 1, 40, 50, 128, causal=True),
    case('d = 80, additive mask over keys [Lk]', 1, 2, 1, 20, 45, 80, mask='additive'),
    case('d = 80, boolean mask [B, 1, Lq, Lk] with an empty row, causal', 2, 2, 2, 12, 30, 80, causal=True, mask='bool'),
    case('chunked prefill: 64 queries over 1024 keys, GQA 4, causal', 1, 8, 2, 64, 1024, 64, causal=True),
    case('decode: 1 row, GQA 4, 1000 keys', 2, 8, 2, 1, 1000, 64),
    case('decode: 16 rows, window [7, 0], bshd', 1, 2, 1, 16, 77, 64, window=(7, 0), layout='bshd'),
    case('decode: 1 row, GQA 4, cache lengths 57, 0, 20 of 64', 3, 8, 2, 1, 64, 64, lengths=(57, 0, 20)),
    case('decode: 4 causal rows, caches of 3 and 33 of 40', 2, 2, 2, 4, 40, 64, causal=True, lengths=(3, 33)),
    case('chunked prefill over caches of 70 and 25 of 70, GQA 2, causal', 2, 4, 2, 20, 70, 64, causal=True, lengths=(70, 25)),
]

def visible(c):
    """[B, 1, Lq, Lk] booleans: the keys each query sees by the band (causal, window), aligned to each batch's cache
    length when the case has them (keys past it excluded)."""
    lengths = c['lengths'] or (c['Lk'],) * c['B']
    i = np.arange(c['Lq'])[:, None]; j = np.arange(c['Lk'])[None, :]
    left, right = (c['window'] if c['window'] else (-1, -1))
    rows = []
    for n in lengths:
        diag = i + n - c['Lq']
        keep = j < n
        if left >= 0: keep = keep & (j >= diag - left)
        if right >= 0: keep = keep & (j <= diag + right)
        if c['causal']: keep = keep & (j <= diag)
        rows.append(keep)
    return np.stack(rows)[:, None]

def run_case(c, folder):
    B, Hq, Hkv, Lq, Lk, d = (c[k] for k in ('B', 'Hq', 'Hkv', 'Lq', 'Lk', 'd'))
    stored = np.float16 if F16 else np.float32
    q = rng.uniform(-3, 3, (B, Hq, Lq, d)).astype(stored)
    k = rng.uniform(-3, 3, (B, Hkv, Lk, d)).astype(stored)
    v = rng.uniform(-3, 3, (B, Hkv, Lk, d)).astype(stored)
    files = [os.path.join(folder, n) for n in ('q.npy', 'k.npy', 'v.npy', 'out.npy', 'mask.npy')]
    to_layout = (lambda x: x.transpose(0, 2, 1, 3).copy()) if c['layout'] == 'bshd' else (lambda x: x)
    for path, x in zip(files, (q, k, v)): np.save(path, to_layout(x))
    args = CLI + ['sdpa', '--json', files[0], files[1], files[2], files[3], '--layout', c['layout']]
    if c['causal']: args.append('--causal')
    if c['window']: args += ['--window', f"{c['window'][0]},{c['window'][1]}"]
    if c['scale'] is not None: args += ['--scale', str(c['scale'])]
    if c['lengths']: args += ['--cache-lengths', ','.join(str(n) for n in c['lengths'])]
    if IMPL: args += ['--impl', IMPL]
    keep = visible(c)
    additive = np.zeros((1, 1, Lq, Lk), np.float64)
    if c['mask'] == 'additive':
        m = rng.uniform(-3, 3, (Lk,)).astype(np.float32); m[::7] = -np.inf
        np.save(files[4], m); args += ['--mask', files[4]]
        additive = additive + m.astype(np.float64)
    elif c['mask'] == 'bool':
        m = rng.uniform(0, 1, (B, 1, Lq, Lk)) > 0.2; m[:, :, 5, :] = False
        np.save(files[4], m); args += ['--mask', files[4]]
        keep = keep & m
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode == 2 and 'cannot run this problem here' in done.stderr:
        return dict(declined=done.stderr.strip().splitlines()[-1])
    if done.returncode != 0:
        return dict(error=f'exit {done.returncode}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""}')
    ours = np.load(files[3]).astype(np.float64)
    ours = ours.transpose(0, 2, 1, 3) if c['layout'] == 'bshd' else ours
    bias = np.where(keep, additive, -np.inf)
    empty = ~np.isfinite(bias).any(-1)  # rows that see nothing
    result = {'impl': json.loads(done.stdout)['impl']}
    cuda = ('float16 CUDA', 'cuda', torch.float16) if F16 else ('float32 CUDA', 'cuda', torch.float32)
    devices = [('float64 CPU', 'cpu', torch.float64)] + ([cuda] if torch.cuda.is_available() else [])
    exact = None
    for label, device, dtype in devices:
        torch.backends.cuda.matmul.allow_tf32 = False
        t = lambda x: torch.from_numpy(np.ascontiguousarray(x)).to(device=device, dtype=dtype)
        ref = torch.nn.functional.scaled_dot_product_attention(
            t(q), t(k), t(v), attn_mask=t(np.broadcast_to(bias, (B, Hq, Lq, Lk))), scale=c['scale'], enable_gqa=Hq != Hkv)
        ref = torch.nan_to_num(ref, nan=0.0).double().cpu().numpy()
        ref[np.broadcast_to(empty[..., None], ref.shape)] = 0
        result[label] = float(np.abs(ours - ref).max())
        if exact is None: exact = ref
        elif F16: result['torch fp16 vs float64'] = float(np.abs(ref - exact).max())
    return result

def limit(r):
    """The most a case may differ from PyTorch float64: 1e-5 (f32 tensors), or twice PyTorch fp16's difference (f16)."""
    return 2 * r['torch fp16 vs float64'] if F16 and 'torch fp16 vs float64' in r else 1e-5

def main():
    rows, failed = [], False
    with tempfile.TemporaryDirectory() as folder:
        for c in CASES:
            r = run_case(c, folder)
            rows.append((c['name'], r))
            if 'error' in r or ('float64 CPU' in r and r['float64 CPU'] > limit(r)): failed = True
    print(f'PyTorch {torch.__version__}' + (f' on {torch.cuda.get_device_name()}' if torch.cuda.is_available() else '') + (', f16 tensors' if F16 else ''))
    cuda = 'PyTorch float16 (CUDA)' if F16 else 'PyTorch float32 (CUDA, TF32 off)'
    print(f'| case | implementation | max diff vs PyTorch float64 | vs {cuda} |' + (' PyTorch fp16 vs float64 |' if F16 else ''))
    print('|---|---|---|---|' + ('---|' if F16 else ''))
    for name, r in rows:
        if 'error' in r: print(f'| {name} | {r["error"]} | | |')
        elif 'declined' in r: print(f'| {name} | declined: {r["declined"]} | | |')
        else:
            cuda_diff = r.get('float16 CUDA' if F16 else 'float32 CUDA', float('nan'))
            extra = f" {r.get('torch fp16 vs float64', float('nan')):.1e} |" if F16 else ''
            print(f"| {name} | {r['impl']} | {r['float64 CPU']:.1e} | {cuda_diff:.1e} |{extra}")
    sys.exit(1 if failed else 0)

main()
