#!/usr/bin/env python3
"""The attention function against a float64 reference and PyTorch, case by case, through the CLI.

For each case it writes q, k, v (and a mask, sinks, ALiBi slopes, score and mask functions in WGSL and their buffers)
as files, runs `hw4-cli sdpa` on them, and compares OUTPUT with:

- float64, always: NumPy in float64 on the same values, written out step by step in the project's order: s = scale·q·k
  → score_mod → softcap → ALiBi → additive mask → exclusions (boolean mask, causal, window, cache length, mask_mod) →
  softmax with each query head's sink logit in its denominator → P·V, grouped heads by repeating each KV head, the
  bottom-right causal mask and windows as explicit boolean masks, a row that sees no key 0. The score and mask
  functions are written once more in NumPy beside their WGSL.
- PyTorch on CUDA, when `import torch` works and there is a GPU (float32 with TF32 off, or fp16 with --dtype f16):
  `scaled_dot_product_attention` with explicit masks (PyTorch's is_causal aligns top-left when Lq != Lk) and
  `enable_gqa`, or, for the cases with softcap, ALiBi, sinks or score and mask functions, FlexAttention (eager, not
  compiled: scores and softmax in float32 even for fp16 tensors, then P in the tensors' type times V) with the same
  steps as its score_mod and mask_mod (the mask from create_block_mask). FlexAttention has no sink term: its output is
  rescaled with its log-sum-exp (natural log), O · 1/(1 + exp(sink − lse)), exact. A row that sees no key is NaN in SDPA
  and compared as 0. Where FlexAttention is missing or either function fails, the last column says why and the case is
  judged on float64 alone. Without PyTorch or CUDA the CUDA columns are left out.

Cache lengths (`--cache-lengths`) become a key mask with the band aligned to each batch's length. (Block masks are the
library's, not the CLI's; the test suite checks them against the float64 oracle.)

Usage: python3 scripts/sdpa-parity.py "node bundle/hw4-cli/hw4-cli.mjs" [--impl ID] [--dtype f16]
Prints a Markdown table and exits 1 if a case fails to run, or differs from float64 by more than 1e-5 (f32 tensors),
or by more than twice the plain f16 computation's own difference from float64 (f16 tensors): PyTorch fp16's on CUDA
where that column exists, else NumPy's plain f16 computation (the float64 steps with the softmax weights P and the
output rounded to f16), which the f16 table shows in its own column. A case the named --impl declines (exit 2,
"cannot run this problem here") is listed as declined and does not fail the run.
"""
import json, math, os, subprocess, sys, tempfile
import numpy as np

try:
    import torch
except ImportError:
    torch = None

CLI = sys.argv[1].split()
IMPL = sys.argv[sys.argv.index('--impl') + 1] if '--impl' in sys.argv else None
F16 = '--dtype' in sys.argv and sys.argv[sys.argv.index('--dtype') + 1] == 'f16'
CUDA = torch is not None and torch.cuda.is_available()
rng = np.random.default_rng(17)

# Score and mask functions: the WGSL the CLI compiles (a function of the case), the same in NumPy over broadcast index
# grids b, h, q, k (int64) and in PyTorch for FlexAttention (scalar index tensors), and the buffers they read (drawn per
# case, any shape, read flat). `buf` holds each buffer flattened, `c` is the case.
REL_BIAS = dict(
    score=lambda c: '''// T5-like relative-position bias: a value per head and clamped distance (rel: float32 [Hq, 64]).
fn score_mod(s: f32, b: u32, h: u32, q: u32, k: u32) -> f32 {
  let distance = clamp(i32(q) - i32(k), -31, 32) + 31;
  return s + rel[h * 64u + u32(distance)];
}
''',
    score_np=lambda s, b, h, q, k, buf, c: s + buf['rel'][h * 64 + np.clip(q - k, -31, 32) + 31],
    score_torch=lambda s, b, h, q, k, buf, c: s + buf['rel'][h * 64 + torch.clamp(q - k, -31, 32) + 31],
    buffers=lambda c: {'rel': rng.uniform(-2, 2, (c['Hq'], 64)).astype(np.float32)},
)

def document_ids(L, lengths):
    """int32 [L]: the document of each token of a sequence packed from documents of these lengths."""
    assert sum(lengths) == L
    return np.repeat(np.arange(len(lengths), dtype=np.int32), lengths)

DOCUMENTS = dict(
    mask=lambda c: '''// Packed sequences: documents side by side, each causal within itself (doc: int32 [L]).
fn mask_mod(b: u32, h: u32, q: u32, k: u32) -> bool { return doc[q] == doc[k] && k <= q; }
''',
    mask_np=lambda b, h, q, k, buf, c: (buf['doc'][q] == buf['doc'][k]) & (k <= q),
    mask_torch=lambda b, h, q, k, buf, c: (buf['doc'][q] == buf['doc'][k]) & (k <= q),
    buffers=lambda c: {'doc': document_ids(c['Lq'], (37, 5, 60, 1, 57))},
)

PREFIX_LM = dict(
    mask=lambda c: '''// Prefix-LM: batch b's first prefix[b] tokens see each other, the rest causal (prefix: int32 [B]).
fn mask_mod(b: u32, h: u32, q: u32, k: u32) -> bool { return k <= q || k < u32(prefix[b]); }
''',
    mask_np=lambda b, h, q, k, buf, c: (k <= q) | (k < buf['prefix'][b]),
    mask_torch=lambda b, h, q, k, buf, c: (k <= q) | (k < buf['prefix'][b]),
    buffers=lambda c: {'prefix': np.array([0, 17, 50], np.int32)},
)

KEY_BIAS_PATTERN = dict(
    score=lambda c: f'''// A bias per query head and key (kbias: float32 [Hq, Lk]) on scores scaled by 3/4.
fn score_mod(s: f32, b: u32, h: u32, q: u32, k: u32) -> f32 {{ return 0.75 * s + kbias[h * {c['Lk']}u + k]; }}
''',
    score_np=lambda s, b, h, q, k, buf, c: 0.75 * s + buf['kbias'][h * c['Lk'] + k],
    score_torch=lambda s, b, h, q, k, buf, c: 0.75 * s + buf['kbias'][h * c['Lk'] + k],
    mask=lambda c: '''// A pattern that differs from query head to query head: one key in five hidden.
fn mask_mod(b: u32, h: u32, q: u32, k: u32) -> bool { return (q + 2u * k + h) % 5u != 0u; }
''',
    mask_np=lambda b, h, q, k, buf, c: (q + 2 * k + h) % 5 != 0,
    mask_torch=lambda b, h, q, k, buf, c: (q + 2 * k + h) % 5 != 0,
    buffers=lambda c: {'kbias': rng.uniform(-2, 2, (c['Hq'], c['Lk'])).astype(np.float32)},
)

def case(name, B, Hq, Hkv, Lq, Lk, d, causal=False, window=None, mask=None, layout='bhsd', scale=None, lengths=None,
         dv=None, softcap=None, sinks=False, alibi=False, mods=None):
    return dict(name=name, B=B, Hq=Hq, Hkv=Hkv, Lq=Lq, Lk=Lk, d=d, causal=causal, window=window, mask=mask, layout=layout,
                scale=scale, lengths=lengths, dv=dv or d, softcap=softcap, sinks=sinks, alibi=alibi, mods=mods)

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
    case('softcap 30, causal, GQA 4', 2, 8, 2, 77, 77, 64, causal=True, softcap=30),
    case('sinks, causal, Lq = 70 > Lk = 40 (rows that see nothing), GQA 2', 2, 4, 2, 70, 40, 64, causal=True, sinks=True),
    case('ALiBi, causal, Lq = 50 < Lk = 120, GQA 4, bshd', 1, 8, 2, 50, 120, 64, causal=True, alibi=True, layout='bshd'),
    case('softcap 20, ALiBi and sinks, boolean mask with an empty row, GQA 4', 2, 4, 1, 30, 60, 64, mask='bool', softcap=20, sinks=True, alibi=True),
    case('decode: 1 row, softcap 30, ALiBi and sinks, GQA 4, 300 keys', 2, 8, 2, 1, 300, 64, softcap=30, sinks=True, alibi=True),
    case('score_mod: relative-position bias table (float32 buffer)', 2, 4, 4, 100, 100, 64, mods=REL_BIAS),
    case('mask_mod: 5 packed documents, causal within each (int32 buffer), GQA 2', 1, 4, 2, 160, 160, 64, mods=DOCUMENTS),
    case('mask_mod: prefix-LM, prefixes 0, 17, 50 (int32 buffer)', 3, 2, 1, 64, 64, 64, mods=PREFIX_LM),
    case('score_mod and mask_mod, causal, Lq = 40 < Lk = 90, GQA 4', 1, 8, 2, 40, 90, 64, causal=True, mods=KEY_BIAS_PATTERN),
    case('d = 192, dv = 128 (MLA-shaped), causal, Lq = 48 < Lk = 96', 1, 4, 4, 48, 96, 192, dv=128, causal=True),
    case('d = 256, causal, GQA 2, Lq = Lk = 80', 1, 2, 1, 80, 80, 256, causal=True),
]

def valid_lengths(c):
    """The keys each batch holds: its cache length, or Lk."""
    return c['lengths'] or (c['Lk'],) * c['B']

def visible(c):
    """[B, 1, Lq, Lk] booleans: the keys each query sees by the band (causal, window), aligned to each batch's cache
    length when the case has them (keys past it excluded)."""
    i = np.arange(c['Lq'])[:, None]; j = np.arange(c['Lk'])[None, :]
    left, right = (c['window'] if c['window'] else (-1, -1))
    rows = []
    for n in valid_lengths(c):
        diag = i + n - c['Lq']
        keep = j < n
        if left >= 0: keep = keep & (j >= diag - left)
        if right >= 0: keep = keep & (j <= diag + right)
        if c['causal']: keep = keep & (j <= diag)
        rows.append(keep)
    return np.stack(rows)[:, None]

def alibi_distance(c):
    """[B, 1, Lq, Lk]: |(i + Lk − Lq) − j|, Lk each batch's valid keys (FlashAttention-2's ALiBi, aligned as the
    band)."""
    i = np.arange(c['Lq'])[:, None]; j = np.arange(c['Lk'])[None, :]
    return np.stack([np.abs(i + n - c['Lq'] - j) for n in valid_lengths(c)])[:, None].astype(np.float64)

def grids(c):
    """Index grids b, h, q, k (int64), broadcast to [B, Hq, Lq, Lk]."""
    return (np.arange(c['B']).reshape(-1, 1, 1, 1), np.arange(c['Hq']).reshape(1, -1, 1, 1),
            np.arange(c['Lq']).reshape(1, 1, -1, 1), np.arange(c['Lk']).reshape(1, 1, 1, -1))

def reference(c, q, k, v, keep, additive, extra, plain_f16=False):
    """The float64 attention in the project's order (the module's docstring), [B, Hq, Lq, dv]. With plain_f16, the
    plain f16 computation: the same, with the softmax weights P and the output rounded to f16."""
    B, Hq, Hkv, Lq, Lk, d = (c[n] for n in ('B', 'Hq', 'Hkv', 'Lq', 'Lk', 'd'))
    scale = c['scale'] if c['scale'] is not None else 1 / math.sqrt(d)
    kd = np.repeat(k.astype(np.float64), Hq // Hkv, axis=1)  # query head h reads KV head h // (Hq/Hkv)
    vd = np.repeat(v.astype(np.float64), Hq // Hkv, axis=1)
    s = scale * (q.astype(np.float64) @ kd.transpose(0, 1, 3, 2))
    b, h, i, j = grids(c)
    mods, buf = c['mods'] or {}, extra['flat']
    with np.errstate(invalid='ignore', divide='ignore', over='ignore'):
        if 'score_np' in mods: s = mods['score_np'](s, b, h, i, j, buf, c)
        if c['softcap'] is not None: s = c['softcap'] * np.tanh(s / c['softcap'])
        if c['alibi']: s = s - extra['slopes'].astype(np.float64)[h] * alibi_distance(c)
        s = s + additive
        seen = np.broadcast_to(keep, s.shape)
        if 'mask_np' in mods: seen = seen & mods['mask_np'](b, h, i, j, buf, c)
        seen = seen & (s > -np.inf)
        s = np.where(seen, s, -np.inf)
        m = s.max(-1, keepdims=True)
        sink = extra['sinks'].astype(np.float64)[None, :, None, None] if c['sinks'] else None
        if sink is not None: m = np.maximum(m, sink)
        m = np.where(np.isfinite(m), m, 0)  # a row that sees no key, and no sink
        p = np.exp(s - m)
        l = p.sum(-1, keepdims=True) + (np.exp(sink - m) if sink is not None else 0)
        if plain_f16: p = p.astype(np.float16).astype(np.float64)
        out = (p @ vd) / np.where(l > 0, l, 1)
    out = np.where(seen.any(-1, keepdims=True), out, 0)  # no key visible: 0
    return out.astype(np.float16).astype(np.float64) if plain_f16 else out

def pytorch_cuda(c, q, k, v, keep, additive, extra):
    """PyTorch on CUDA (float32 with TF32 off, or fp16): (the function, its [B, Hq, Lq, dv] in float64 or None, why
    not)."""
    B, Hq, Hkv, Lq, Lk = (c[n] for n in ('B', 'Hq', 'Hkv', 'Lq', 'Lk'))
    dtype = torch.float16 if F16 else torch.float32
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    t = lambda x, dt=dtype: torch.from_numpy(np.ascontiguousarray(x)).to(device='cuda', dtype=dt)
    empty = ~np.broadcast_to(keep & np.isfinite(additive), (B, Hq, Lq, Lk)).any(-1)  # rows that see nothing (no mods)
    if not (c['softcap'] is not None or c['sinks'] or c['alibi'] or c['mods']):
        bias = np.where(keep, additive, -np.inf)
        try:
            ref = torch.nn.functional.scaled_dot_product_attention(
                t(q), t(k), t(v), attn_mask=t(np.broadcast_to(bias, (B, Hq, Lq, Lk))), scale=c['scale'], enable_gqa=Hq != Hkv)
        except Exception as error:  # the column says why; the case is judged on float64
            return 'SDPA', None, f'failed: {type(error).__name__}: {(str(error).strip().splitlines() or [""])[0][:120]}'
        ref = torch.nan_to_num(ref, nan=0.0).double().cpu().numpy()
        ref[np.broadcast_to(empty[..., None], ref.shape)] = 0
        return 'SDPA', ref, None
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    except ImportError as error:
        return 'FlexAttention', None, f'unavailable ({error})'
    try:
        mods = c['mods'] or {}
        buf = {name: t(x, torch.float32 if x.dtype.kind == 'f' else torch.int64) for name, x in extra['flat'].items()}
        shown = t(np.broadcast_to(keep & np.isfinite(additive), (B, Hq, Lq, Lk)), torch.bool)
        added = t(np.broadcast_to(np.where(np.isfinite(additive), additive, 0), (B, Hq, Lq, Lk)), torch.float32)
        lengths = t(np.array(valid_lengths(c)), torch.int64)
        slopes = t(extra['slopes'], torch.float32) if c['alibi'] else None
        cap = c['softcap']

        def score_mod(score, b, h, qi, ki):
            if 'score_torch' in mods: score = mods['score_torch'](score, b, h, qi, ki, buf, c)
            if cap is not None: score = cap * torch.tanh(score / cap)
            if slopes is not None: score = score - slopes[h] * (qi + lengths[b] - Lq - ki).abs()
            return score + added[b, h, qi, ki]

        def mask_mod(b, h, qi, ki):
            seen = shown[b, h, qi, ki]
            return seen & mods['mask_torch'](b, h, qi, ki, buf, c) if 'mask_torch' in mods else seen

        block_mask = create_block_mask(mask_mod, B, Hq, Lq, Lk, device='cuda')
        args = dict(score_mod=score_mod, block_mask=block_mask, scale=c['scale'], enable_gqa=Hq != Hkv)
        if not c['sinks']:
            out = flex_attention(t(q), t(k), t(v), **args)
        else:
            try:
                from torch.nn.attention.flex_attention import AuxRequest
                out, aux = flex_attention(t(q), t(k), t(v), **args, return_aux=AuxRequest(lse=True))
                lse = aux.lse
            except ImportError:
                out, lse = flex_attention(t(q), t(k), t(v), **args, return_lse=True)
            # The sink's e^sink in the denominator: O · e^lse / (e^lse + e^sink), lse in natural log; a row that sees no
            # key has lse −∞ and O 0, and stays 0.
            sink = t(extra['sinks'], torch.float64)[None, :, None]
            out = (out.double() * (1 / (1 + torch.exp(sink - lse.double())))[..., None]).to(dtype)
        return 'FlexAttention', torch.nan_to_num(out, nan=0.0).double().cpu().numpy(), None
    except Exception as error:  # the column says why; the case is judged on float64
        return 'FlexAttention', None, f'failed: {type(error).__name__}: {(str(error).strip().splitlines() or [""])[0][:120]}'

def run_case(c, folder):
    B, Hq, Hkv, Lq, Lk, d, dv = (c[k] for k in ('B', 'Hq', 'Hkv', 'Lq', 'Lk', 'd', 'dv'))
    stored = np.float16 if F16 else np.float32
    q = rng.uniform(-3, 3, (B, Hq, Lq, d)).astype(stored)
    k = rng.uniform(-3, 3, (B, Hkv, Lk, d)).astype(stored)
    v = rng.uniform(-3, 3, (B, Hkv, Lk, dv)).astype(stored)
    path = lambda name: os.path.join(folder, name)
    files = [path(n) for n in ('q.npy', 'k.npy', 'v.npy', 'out.npy', 'mask.npy')]
    to_layout = (lambda x: x.transpose(0, 2, 1, 3).copy()) if c['layout'] == 'bshd' else (lambda x: x)
    for name, x in zip(files, (q, k, v)): np.save(name, to_layout(x))
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
    extra = {'flat': {}}
    if c['softcap'] is not None: args += ['--softcap', str(c['softcap'])]
    if c['sinks']:
        extra['sinks'] = rng.uniform(-1, 3, (Hq,)).astype(np.float32)
        np.save(path('sinks.npy'), extra['sinks']); args += ['--sinks', path('sinks.npy')]
    if c['alibi']:
        extra['slopes'] = np.array([2 ** (-8 * (h + 1) / Hq) for h in range(Hq)], np.float32)  # ALiBi's geometric slopes
        np.save(path('slopes.npy'), extra['slopes']); args += ['--alibi-slopes', path('slopes.npy')]
    if c['mods']:
        for kind, flag in (('score', '--score-mod'), ('mask', '--mask-mod')):
            if kind in c['mods']:
                with open(path(f'{kind}.wgsl'), 'w') as out: out.write(c['mods'][kind](c))
                args += [flag, path(f'{kind}.wgsl')]
        for name, x in c['mods']['buffers'](c).items():
            np.save(path(f'{name}.npy'), x); args += ['--mod-buffer', f'{name}={path(name + ".npy")}']
            extra['flat'][name] = x.reshape(-1)
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode == 2 and 'cannot run this problem here' in done.stderr:
        why = done.stderr.strip().splitlines()[-1].split('cannot run this problem here: ', 1)[-1]
        return dict(declined=why.split('; use --impl', 1)[0])
    if done.returncode != 0:
        return dict(error=f'exit {done.returncode}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""}')
    ours = np.load(files[3]).astype(np.float64)
    ours = ours.transpose(0, 2, 1, 3) if c['layout'] == 'bshd' else ours
    exact = reference(c, q, k, v, keep, additive, extra)
    result = {'impl': json.loads(done.stdout)['impl'], 'float64': float(np.abs(ours - exact).max())}
    if F16: result['plain f16 vs float64'] = float(np.abs(reference(c, q, k, v, keep, additive, extra, plain_f16=True) - exact).max())
    if CUDA:
        result['torch'], ref, why = pytorch_cuda(c, q, k, v, keep, additive, extra)
        if why is not None: result['torch'] += f' {why}'
        else:
            result['cuda'] = float(np.abs(ours - ref).max())
            if F16: result['torch fp16 vs float64'] = float(np.abs(ref - exact).max())
    return result

def limit(r):
    """The most a case may differ from float64: 1e-5 (f32 tensors), or twice PyTorch fp16's difference where the CUDA
    column has one, else twice NumPy's plain f16 computation's (f16 tensors)."""
    if not F16: return 1e-5
    return 2 * r['torch fp16 vs float64'] if 'torch fp16 vs float64' in r else 2 * r['plain f16 vs float64']

def main():
    rows, failed = [], False
    with tempfile.TemporaryDirectory() as folder:
        for c in CASES:
            r = run_case(c, folder)
            rows.append((c['name'], r))
            if 'error' in r or ('float64' in r and r['float64'] > limit(r)): failed = True
    if CUDA: where = f'PyTorch {torch.__version__} on {torch.cuda.get_device_name()}'
    elif torch is not None: where = f'PyTorch {torch.__version__} without CUDA: no CUDA column'
    else: where = 'no PyTorch: no CUDA column'
    print(f'float64 reference: NumPy {np.__version__}; {where}' + (', f16 tensors' if F16 else ''))
    head = ['case', 'implementation', 'max diff vs float64 (NumPy)']
    if CUDA: head += ['vs PyTorch float16 (CUDA)' if F16 else 'vs PyTorch float32 (CUDA, TF32 off)'] + (['PyTorch fp16 vs float64'] if F16 else [])
    if F16: head += ['plain f16 (NumPy) vs float64']
    if CUDA: head += ['PyTorch function']
    print('| ' + ' | '.join(head) + ' |')
    print('|' + '---|' * len(head))
    blank = ' |' * (len(head) - 2)
    for name, r in rows:
        if 'error' in r: print(f'| {name} | {r["error"]} |{blank}')
        elif 'declined' in r: print(f'| {name} | declined: {r["declined"]} |{blank}')
        else:
            cells = [name, r['impl'], f"{r['float64']:.1e}"]
            number = lambda key: f'{r[key]:.1e}' if key in r else '-'
            if CUDA: cells += [number('cuda')] + ([number('torch fp16 vs float64')] if F16 else [])
            if F16: cells += [f"{r['plain f16 vs float64']:.1e}"]
            if CUDA: cells += [r['torch']]
            print('| ' + ' | '.join(cells) + ' |')
    sys.exit(1 if failed else 0)

main()
