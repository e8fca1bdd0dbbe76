"""Measurements written into the planner's GPU profile (docs/formats/gpu-profile.md): GEMM and
causal-attention tables, device copy bandwidth, host dispatch cost of one eager op, per-layer
forward/backward time and memory, and whole training steps (calibration.csv format)."""
import gc
import statistics
import time

import torch
import torch.nn.functional as F

import gpt


class Timer:
    """Median seconds per call of fn over `reps` blocks of `iters` calls (CUDA events on a GPU,
    wall clock on the CPU)."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"

    def sync(self):
        if self.cuda:
            torch.cuda.synchronize()

    def __call__(self, fn, iters, reps=3, warmup=2):
        for i in range(warmup):
            fn(i)
        self.sync()
        out = []
        for _ in range(reps):
            if self.cuda:
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                for i in range(iters):
                    fn(i)
                e.record()
                e.synchronize()
                out.append(s.elapsed_time(e) / 1e3 / iters)
            else:
                t0 = time.perf_counter()
                for i in range(iters):
                    fn(i)
                out.append((time.perf_counter() - t0) / iters)
        return statistics.median(out)


def compute_dtype(device):
    return torch.bfloat16 if device.type == "cuda" else torch.float32


def gemm_shapes(hiddens, tokens, vocab=gpt.VOCAB):
    """(op, M, K, N) in the layouts of the micro-profiles: fwd Y[M,N] = X[M,K]·W[N,K]ᵀ, wgrad
    dW[N,K] = dYᵀ·X, dgrad dX = dY·W, for every GEMM of a block and the head."""
    out = []
    for h in hiddens:
        for T in tokens:
            for k, n in ((h, 3 * h), (h, h), (h, 4 * h), (4 * h, h), (h, vocab)):
                out.append(("fwd", T, k, n))
                out.append(("wgrad", n, T, k))
                out.append(("dgrad", T, n, k))
    return out


def gemm_table(device, hiddens, tokens, budget_s=0.02, vocab=gpt.VOCAB):
    timer, dt = Timer(device), compute_dtype(device)
    rows = []
    for op, m, k, n in gemm_shapes(hiddens, tokens, vocab):
        a = torch.randn(m, k, device=device, dtype=dt)
        if op == "fwd":
            w = torch.randn(n, k, device=device, dtype=dt)
            fn = lambda i: F.linear(a, w)  # noqa: E731
        else:
            # wgrad: [M=N_out, K=T] @ [T, N=K_in]; dgrad: [T, N_out] @ [N_out, K_in] -- both plain mm
            b = torch.randn(k, n, device=device, dtype=dt)
            fn = lambda i: torch.mm(a, b)  # noqa: E731
        est = 2.0 * m * k * n / (500e12 if device.type == "cuda" else 5e10)
        iters = max(2, min(100, int(budget_s / max(est, 1e-7))))
        rows.append({"op": op, "m": m, "k": k, "n": n, "t_s": timer(fn, iters)})
        del a, fn
    return rows


def sdpa_calls(device, dt, b, heads, s, hd):
    """Causal attention of one shape on fresh random operands: a forward call and a
    forward+backward call, each taking the iteration index the timers pass."""
    q, k, v = (torch.randn(b, heads, s, hd, device=device, dtype=dt, requires_grad=True) for _ in range(3))
    do = torch.randn(b, heads, s, hd, device=device, dtype=dt)

    def fwd(i):
        with torch.no_grad():
            gpt.causal_attention(q, k, v)

    def fwdbwd(i):
        gpt.causal_attention(q, k, v).backward(do)

    return fwd, fwdbwd


def sdpa_table(device, cases, budget_s=0.03):
    timer, dt = Timer(device), compute_dtype(device)
    rows = []
    for b, heads, s, hd in cases:
        fwd, fwdbwd = sdpa_calls(device, dt, b, heads, s, hd)
        est = 12.0 * b * heads * s * s * hd / (300e12 if device.type == "cuda" else 2e10)
        iters = max(2, min(50, int(budget_s / max(est, 1e-7))))
        rows.append({"b": b, "heads": heads, "s": s, "head_dim": hd,
                     "t_fwd_s": timer(fwd, iters), "t_fwdbwd_s": timer(fwdbwd, iters)})
        del fwd, fwdbwd  # their operands, before the next shape is allocated
    return rows


def copy_bandwidth(device, nbytes):
    """Bytes read + written per second by a device-to-device copy."""
    src = torch.empty(nbytes // 4, device=device, dtype=torch.float32).uniform_()
    dst = torch.empty_like(src)
    t = Timer(device)(lambda i: dst.copy_(src), 10)
    return 2.0 * nbytes / t


def host_op_cost(device, n=2000):
    """Host seconds to dispatch one small eager op (the queue never drains: tiny tensors)."""
    x = torch.ones(16, device=device)
    timer = Timer(device)

    def many(i):
        y = x
        for _ in range(n):
            y = y + 1.0

    t0 = time.perf_counter()
    many(0)
    timer.sync()
    t = (time.perf_counter() - t0) / n
    return t


def mem_stats(device):
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device), torch.cuda.memory_allocated(device)
    return 0, 0


def reset_peak(device):
    gc.collect()
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)


def layer_profile(device, h, heads, b, s, iters=5):
    """One block: forward and backward seconds and the bytes it saves for backward."""
    timer = Timer(device)
    blk = gpt.Block(h, heads, device=device)
    x = torch.randn(b, s, h, device=device, requires_grad=True)
    gy = torch.randn(b, s, h, device=device)
    dev_type = device.type
    use_ac = dev_type == "cuda"

    def fwd(i):
        with torch.autocast(dev_type, dtype=torch.bfloat16, enabled=use_ac):
            with torch.no_grad():
                blk(x)

    def fwdbwd(i):
        with torch.autocast(dev_type, dtype=torch.bfloat16, enabled=use_ac):
            y = blk(x)
        y.backward(gy)

    t_f = timer(fwd, iters)
    t_fb = timer(fwdbwd, iters)
    reset_peak(device)
    before = mem_stats(device)[1]
    with torch.autocast(dev_type, dtype=torch.bfloat16, enabled=use_ac):
        y = blk(x)
    saved = mem_stats(device)[1] - before
    del y
    return {"hidden": h, "heads": heads, "b": b, "s": s, "fwd_s": t_f, "bwd_s": max(t_fb - t_f, 0.0),
            "act_bytes": saved}
