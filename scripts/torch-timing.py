#!/usr/bin/env python3
"""PyTorch's fp16 decode timed three ways, to show what each method counts (docs/sdpa.md, "PyTorch's times").

For 1 and 8 query rows (32 query heads, 8 KV heads, d = 128) against 32768 keys, and 1 row against 4096, on SDPA's
default choice, FlashAttention-2 and cuDNN, prints the median ms per call:
  - events around one call, then a synchronize (the bench's method before 2026-11-28: includes Python's launch);
  - 200 calls back to back between one pair of events (the bench's method since);
  - a CUDA graph of 100 calls replayed (the GPU's time alone, as close as PyTorch gets to ours).
Then the same three for one and two tiny dependent kernels per call: the floor under any call.
Usage, on a machine with a CUDA PyTorch: python3 scripts/torch-timing.py
"""
import torch
from torch.nn.attention import sdpa_kernel, SDPBackend

sdpa = torch.nn.functional.scaled_dot_product_attention


def per_call(call, n=20):
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(n):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); call(); e.record(); torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


def back_to_back(call, n=200):
    for _ in range(10):
        call()
    torch.cuda.synchronize()
    means = []
    for _ in range(5):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(n):
            call()
        e.record(); torch.cuda.synchronize()
        means.append(s.elapsed_time(e) / n)
    means.sort()
    return means[len(means) // 2]


def graph(call, n=100):
    call()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(n):
            call()
    g.replay()
    torch.cuda.synchronize()
    means = []
    for _ in range(5):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); g.replay(); e.record(); torch.cuda.synchronize()
        means.append(s.elapsed_time(e) / n)
    means.sort()
    return means[len(means) // 2]


torch.manual_seed(0)
print('B, keys, backend: events around one call / back to back / CUDA graph (ms per call)')
for B, Lk in ((1, 32768), (8, 32768), (1, 4096)):
    q = torch.randn(B, 32, 1, 128, device='cuda', dtype=torch.float16)
    k = torch.randn(B, 8, Lk, 128, device='cuda', dtype=torch.float16)
    v = torch.randn_like(k)
    call = lambda: sdpa(q, k, v, enable_gqa=True)
    for label, backend in (('default', None), ('FA2', SDPBackend.FLASH_ATTENTION), ('cuDNN', SDPBackend.CUDNN_ATTENTION)):
        try:
            if backend is None:
                times = (per_call(call), back_to_back(call), graph(call))
            else:
                with sdpa_kernel(backend):
                    times = (per_call(call), back_to_back(call), graph(call))
            print(f'{B}, {Lk}, {label}: ' + ' / '.join(f'{t:.4f}' for t in times))
        except Exception as error:
            print(f'{B}, {Lk}, {label}: failed: {str(error).splitlines()[0][:80]}')
# The floor under any call: kernels that do almost nothing, each depending on the one before (one stream), as the
# dispatch-floor experiment times Dawn's dispatches (docs/decode.md).
x = torch.zeros(256, device='cuda')
y = torch.zeros(256, device='cuda')
def one():
    x.add_(1.0)
def two():
    x.add_(1.0)
    y.add_(x)
for label, call in (('1 tiny kernel', one), ('2 tiny kernels, the second reading the first', two)):
    print(f'{label}: ' + ' / '.join(f'{t * 1e3:.2f} us' for t in (per_call(call), back_to_back(call), graph(call))))
print(torch.__version__, torch.cuda.get_device_name())
