"""sdpa.py — PyTorch's scaled_dot_product_attention at the attention workload's shapes, for
bench/attention/run.sh: the peer the fused kernel is measured against, in the same device call.

One rank's queries against both ranks' keys: q [1, H, S, D], k and v [1, H, 2S, D], bf16,
non-causal; FLOPs 4*H*S*2S*D. Backends: FlashAttention-2, cuDNN, memory-efficient. CUDA events,
median of 50 after 10 warm-ups, on random data; also a large bf16 GEMM for the practical ceiling.
Prints one line per measurement and writes them as JSON lines to argv[1] when given.
"""
import json
import statistics
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

SHAPES = (("short", 512, 64), ("small", 1024, 32), ("large", 4096, 32))
D = 128


def bench(fn, reps=50, warm=10):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) * 1000)
    return statistics.median(ts)


def main():
    out = open(sys.argv[1], "w") if len(sys.argv) > 1 else None
    rows = []
    n = 8192
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    us = bench(lambda: a @ b, reps=20)
    rows.append({"what": "gemm 8192^3 bf16", "us": us, "tflops": 2 * n**3 / us / 1e6})
    for name, s, h in SHAPES:
        q = torch.randn(1, h, s, D, device="cuda", dtype=torch.bfloat16)
        k = torch.randn(1, h, 2 * s, D, device="cuda", dtype=torch.bfloat16)
        v = torch.randn_like(k)
        flops = 4 * h * s * 2 * s * D
        for be in (SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION):
            try:
                with sdpa_kernel(be):
                    us = bench(lambda: F.scaled_dot_product_attention(q, k, v))
                rows.append({"what": "sdpa", "size": name, "backend": be.name, "us": us, "tflops": flops / us / 1e6})
            except Exception as e:  # a backend this build lacks
                rows.append({"what": "sdpa", "size": name, "backend": be.name, "error": str(e)[:120]})
    for r in rows:
        if "error" in r:
            print("%-5s %-7s %-20s %s" % (r["what"], r.get("size", ""), r.get("backend", ""), r["error"]))
        else:
            print("%-5s %-7s %-20s %9.1f us %7.1f TFLOP/s %5.1f %% of 989" % (r["what"][:5], r.get("size", ""),
                  r.get("backend", r["what"]), r["us"], r["tflops"], 100 * r["tflops"] / 989))
        if out:
            out.write(json.dumps(r) + "\n")
    print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())


if __name__ == "__main__":
    main()
