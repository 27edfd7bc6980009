#!/usr/bin/env python3
"""Finite values near float32's limits, through `hw4-cli sdpa`, on every implementation: each run must either give the
float64 answer (within 1e-5 relative to max|V|, or 2e-3 for f16 tensors) or refuse in one line with a documented exit
code, never write NaN, Inf or a wrong number with exit 0.

Cases: additive masks of float32's most negative value (what Hugging Face uses for padding) and of -3e38 over a whole
row, +3e38 on one key, Q and K of about 1e20 (scores past float32), scale 1e38, V of 3e38.

Usage: python3 scripts/sdpa-limits.py "node bundle/hw4-cli/hw4-cli.mjs" [OUT_FOLDER]
Prints a Markdown table; exits 1 when any run wrote a wrong or non-finite result with exit 0.
"""
import os, subprocess, sys, tempfile
import numpy as np

CLI = sys.argv[1].split()
FOLDER = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix='sdpa-limits-')
os.makedirs(FOLDER, exist_ok=True)
IMPLS = ['attention-fp32', 'attention-matrix', 'attention-decode', 'cpu-fp32', None]
rng = np.random.default_rng(5)
F32_MIN = float(np.finfo(np.float32).min)


def oracle(q, k, v, scale, mask):
    """float64 attention with the mask's float32 values added to float64 scores (-inf excludes; a row that sees no key
    gives 0). The rows of [1, H, L, d] tensors."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = np.einsum('bhid,bhjd->bhij', q, k) * scale
    if mask is not None:
        s = s + mask.astype(np.float64)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - m)
    l = p.sum(axis=-1, keepdims=True)
    return np.where(l > 0, np.einsum('bhij,bhjd->bhid', p, v) / np.where(l > 0, l, 1), 0.0)


def case(name, Lq=5, Lk=40, d=64, qs=1.0, ks=1.0, vs=1.0, scale=None, mask=None, dtype=np.float32):
    q = (rng.uniform(-1, 1, (1, 2, Lq, d)) * qs)
    k = (rng.uniform(-1, 1, (1, 2, Lk, d)) * ks)
    v = (rng.uniform(-1, 1, (1, 2, Lk, d)) * vs)
    return dict(name=name, q=q.astype(dtype), k=k.astype(dtype), v=v.astype(dtype), scale=scale, mask=mask)


def row_mask(value, Lk=40, Lq=5):
    m = np.zeros((Lq, Lk), np.float32)
    m[1, :] = value
    return m


def one_key(value, Lk=40, Lq=5):
    m = np.zeros((Lq, Lk), np.float32)
    m[:, 3] = value
    return m


CASES = [
    case('mask row of float32 min', mask=row_mask(F32_MIN)),
    case('mask row of -3e38', mask=row_mask(-3e38)),
    case('mask +3e38 on one key', mask=one_key(3e38)),
    case('mask -inf on one key, float32 min on another', mask=np.where(np.arange(40) == 7, -np.inf, np.where(np.arange(40) == 9, F32_MIN, 0)).astype(np.float32)[None, :].repeat(5, 0)),
    case('Q and K of 1e20', qs=1e20, ks=1e20),
    case('scale 1e38', scale=1e38),
    case('V of 3e38', vs=3e38),
    case('f16: mask row of float32 min', mask=row_mask(F32_MIN), dtype=np.float16),
    case('f16: V of 6e4', vs=6e4, dtype=np.float16),
    case('prefill Lq = 40: mask row of float32 min', Lq=40, mask=row_mask(F32_MIN, Lq=40)),
    case('prefill Lq = 40: mask +3e38 on one key', Lq=40, mask=one_key(3e38, Lq=40)),
    case('prefill Lq = 40: Q and K of 1e20', Lq=40, qs=1e20, ks=1e20),
]

rows, bad = [], 0
for n, c in enumerate(CASES):
    paths = {x: os.path.join(FOLDER, f'{n}-{x}.npy') for x in ('q', 'k', 'v', 'mask')}
    for x in ('q', 'k', 'v'):
        np.save(paths[x], c[x])
    if c['mask'] is not None:
        np.save(paths['mask'], c['mask'])
    d = c['q'].shape[-1]
    scale = c['scale'] if c['scale'] is not None else 1 / np.sqrt(d)
    exact = oracle(c['q'], c['k'], c['v'], scale, c['mask'])
    vmax = float(np.abs(c['v'].astype(np.float64)).max())
    limit = (2e-3 if c['q'].dtype == np.float16 else 1e-5) * vmax
    for impl in IMPLS:
        out = os.path.join(FOLDER, f'{n}-{impl or "default"}-out.npy')
        if os.path.exists(out):
            os.remove(out)
        cmd = CLI + ['sdpa', paths['q'], paths['k'], paths['v'], out]
        cmd += ['--impl', impl] if impl else []
        cmd += ['--mask', paths['mask']] if c['mask'] is not None else []
        cmd += ['--scale', repr(float(c['scale']))] if c['scale'] is not None else []
        run = subprocess.run(cmd, capture_output=True, text=True)
        lines = [l for l in run.stderr.strip().splitlines() if l.startswith('hw4-cli') or l.startswith('wrote')]
        line = (lines or run.stderr.strip().splitlines() or [''])[-1][:150]
        if run.returncode != 0:
            verdict = 'refused' if 'cannot run' in line or run.returncode in (2, 3) else f'failed ({run.returncode})'
            rows.append((c['name'], impl or 'default', f'exit {run.returncode}', '—', verdict + ': ' + line))
            continue
        got = np.load(out).astype(np.float64)
        finite = bool(np.isfinite(got).all())
        err = float(np.abs(got - exact).max()) if finite else float('inf')
        ok = finite and err <= limit
        bad += 0 if ok else 1
        rows.append((c['name'], impl or 'default', 'exit 0', f'{err:.1e} (limit {limit:.1e})', 'ok' if ok else 'WRONG: ' + line))

print('| case | implementation | exit | max error | verdict |')
print('|---|---|---|---|---|')
for r in rows:
    print('| ' + ' | '.join(r) + ' |')
print(f'{bad} wrong results with exit 0')
sys.exit(1 if bad else 0)
