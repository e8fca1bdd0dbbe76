#!/usr/bin/env python3
"""Inference steps as production engines run them, for the inference cost model
(src/plan/infer.h, docs/design/inference.md): a decoder with GQA attention and a SwiGLU MLP
(random bf16 weights: timing does not depend on their values) runs

  decode   B sequences, one new token each, over a KV cache of C tokens per sequence;
  verify   B sequences, K draft tokens each checked in one forward over C cached tokens;
  prefill  B prompts of C tokens, logits for the last token only;

decode and verify steps are captured once as a CUDA graph of the whole step and replayed (as
SGLang and vLLM run decode); prefill runs eagerly (as engines run it). Attention is PyTorch's
flash kernel over the cache. With --tp T the step is one tensor-parallel rank's share (heads,
KV heads and MLP columns divided by T), without the all-reduces.

  python3 tools/profile/infer.py --out OUT [--configs qwen2.5-7b:1 ...] [--quick]

Writes OUT/infer-steps.csv (docs/formats/infer-profile.md), one row per point, as it goes."""
import argparse
import csv
import math
import os
import platform
import statistics
import sys
import time

import torch
import torch.nn.functional as F

# name: (layers, hidden, heads, kv_heads, ffn, vocab, tied) — the models' published configs.
MODELS = {
    "qwen2.5-1.5b": (28, 1536, 12, 2, 8960, 151936, True),
    "qwen2.5-7b": (28, 3584, 28, 4, 18944, 152064, False),
    "qwen2.5-14b": (48, 5120, 40, 8, 13824, 152064, False),
    "qwen2.5-32b": (64, 5120, 40, 8, 27648, 152064, False),
    "qwen2.5-72b": (80, 8192, 64, 8, 29568, 152064, False),
    "llama3-8b": (32, 4096, 32, 8, 14336, 128256, False),
    "llama3-70b": (80, 8192, 64, 8, 28672, 128256, False),
    "tiny": (2, 64, 4, 2, 128, 256, False),
}
COLUMNS = ["gpu", "model", "tp", "layers", "phase", "batch", "context", "verify_tokens",
           "step_s", "reps", "weights_gib", "kv_gib", "status"]


class Rank:
    """One tensor-parallel rank of the decoder: per layer a fused QKV GEMM, a fused gate/up GEMM
    and the O and down GEMMs, RMSNorms, rotary embedding and flash attention over a KV cache."""

    def __init__(self, name, tp, device, dtype, layers=None):
        L, h, a, k, f, v, tied = MODELS[name]
        if a % tp or f % tp:
            raise ValueError(f"tp {tp} does not divide heads {a} and ffn {f} of {name}")
        self.L = layers or L
        self.h, self.d = h, h // a
        self.a, self.k = a // tp, max(1, k // tp)
        self.f, self.v = f // tp, v
        self.device, self.dtype = device, dtype
        g = torch.Generator(device=device).manual_seed(0)

        def w(*shape):
            return (torch.randn(*shape, generator=g, device=device, dtype=torch.float32) * 0.02).to(dtype)

        qkv = (self.a + 2 * self.k) * self.d
        self.layers = [dict(n1=torch.ones(h, device=device, dtype=dtype), qkv=w(qkv, h),
                            o=w(h, self.a * self.d), n2=torch.ones(h, device=device, dtype=dtype),
                            gu=w(2 * self.f, h), down=w(h, self.f)) for _ in range(self.L)]
        self.emb = w(v, h)
        self.head = self.emb if tied else w(v, h)
        self.norm = torch.ones(h, device=device, dtype=dtype)
        self.weight_bytes = sum(t.numel() * t.element_size() for lay in self.layers for t in lay.values())
        self.weight_bytes += self.emb.numel() * self.emb.element_size() * (1 if tied else 2)

    def cache(self, batch, length):
        shape = (batch, self.k, length, self.d)
        return [(torch.zeros(shape, device=self.device, dtype=self.dtype),
                 torch.zeros(shape, device=self.device, dtype=self.dtype)) for _ in range(self.L)]

    def forward(self, ids, pos, cache, start, causal):
        """ids [B, T] at positions start..start+T-1; cache[l] holds start+T positions after."""
        B, T = ids.shape
        x = self.emb[ids]
        cos, sin = pos
        for lay, (kc, vc) in zip(self.layers, cache):
            y = rms(x, lay["n1"])
            q, kk, vv = (y @ lay["qkv"].t()).split([self.a * self.d, self.k * self.d, self.k * self.d], -1)
            q = rotary(q.view(B, T, self.a, self.d), cos, sin).transpose(1, 2)
            kk = rotary(kk.view(B, T, self.k, self.d), cos, sin).transpose(1, 2)
            kc[:, :, start:start + T] = kk
            vc[:, :, start:start + T] = vv.view(B, T, self.k, self.d).transpose(1, 2)
            o = attention(q, kc[:, :, :start + T], vc[:, :, :start + T], causal)
            x = x + o.transpose(1, 2).reshape(B, T, self.a * self.d) @ lay["o"].t()
            y = rms(x, lay["n2"])
            gate, up = (y @ lay["gu"].t()).chunk(2, -1)
            x = x + (F.silu(gate) * up) @ lay["down"].t()
        return rms(x[:, -1], self.norm) @ self.head.t()  # logits of the last token only


def rms(x, w):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * w


def rotary(x, cos, sin):
    x1, x2 = x.chunk(2, -1)
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), -1)


def rope(T, d, start, device, dtype):
    inv = 1.0 / (1e6 ** (torch.arange(0, d, 2, device=device, dtype=torch.float32) / d))
    t = torch.arange(start, start + T, device=device, dtype=torch.float32)
    ang = torch.outer(t, inv)[None, :, None, :]
    return ang.cos().to(dtype), ang.sin().to(dtype)


def attention(q, k, v, causal):
    """Flash attention where PyTorch has it (GQA without copying K and V), else the plain
    formula (CPU tests on older PyTorch)."""
    if hasattr(F, "scaled_dot_product_attention") and q.is_cuda:
        if causal:
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        # Without a mask the queries of one KV head's group read its K and V once, as engines'
        # decode kernels do: the group's heads become rows of one query block.
        B, A, T, d = q.shape
        g = A // k.shape[1]
        o = F.scaled_dot_product_attention(q.reshape(B, k.shape[1], g * T, d), k, v)
        return o.reshape(B, A, T, d)
    rep = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
    s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal:
        T, S = q.shape[2], k.shape[2]
        s = s.masked_fill(torch.ones(T, S, dtype=torch.bool, device=q.device).triu(S - T + 1), float("-inf"))
    return s.softmax(-1) @ v


def time_step(fn, cuda, graph, reps):
    """Median seconds of one call of fn: replays of a captured CUDA graph, or eager calls."""
    if not cuda:
        fn()
        out = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
        return statistics.median(out)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    run = fn
    if graph:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn()
        run = g.replay
    run()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        run()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) / 1e3)
    return statistics.median(out)


def measure(rank, phase, batch, context, k, reps):
    """One point: (step seconds, KV GiB of the batch after the step)."""
    cuda = rank.device.type == "cuda"
    new = {"decode": 1, "verify": k, "prefill": context}[phase]
    start = 0 if phase == "prefill" else context
    cache = rank.cache(batch, start + new)
    ids = torch.randint(0, rank.v, (batch, new), device=rank.device)
    pos = rope(new, rank.d, start, rank.device, rank.dtype)
    causal = phase == "prefill"
    with torch.no_grad(), flash_only(cuda):
        t = time_step(lambda: rank.forward(ids, pos, cache, start, causal), cuda, phase != "prefill", reps)
    kv = sum(a.numel() * a.element_size() * 2 for a, _ in cache) / 2 ** 30
    del cache
    return t, kv


GRIDS = {
    "decode": [(b, c, 0) for b in (1, 4, 16, 64, 256) for c in (512, 4096, 16384)],
    "verify": [(b, c, k) for b in (1, 4, 16) for c in (4096, 16384) for k in (8, 16, 48)],
    "prefill": [(1, c, 0) for c in (512, 2048, 8192, 32768)] + [(8, 1024, 0), (4, 4096, 0)],
}
QUICK = {"decode": [(2, 8, 0)], "verify": [(2, 8, 4)], "prefill": [(1, 16, 0)]}


def flash_only(cuda):
    import contextlib
    if not cuda:
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel(SDPBackend.FLASH_ATTENTION)


def check_flash(device):
    """Fails unless PyTorch's flash kernel takes GQA attention over a longer cache, so that every
    point is timed with the kernel engines use."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q = torch.randn(2, 8, 1, 128, device=device, dtype=torch.bfloat16)
    k = torch.randn(2, 2, 64, 128, device=device, dtype=torch.bfloat16)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        F.scaled_dot_product_attention(q, k, k, enable_gqa=True)
    torch.cuda.synchronize()


def run_config(spec, device, dtype, out, quick, gpu, mem_cap, phases):
    name, tp = spec.split(":")[0], int(spec.split(":")[1])
    rank = Rank(name, tp, device, dtype)
    wg = rank.weight_bytes / 2 ** 30
    grids = QUICK if quick else GRIDS
    for phase, grid in grids.items():
        if phase not in phases:
            continue
        for batch, context, k in grid:
            kv_per_token = 2 * rank.L * rank.k * rank.d * 2
            need = wg + batch * (context + max(k, 1)) * kv_per_token / 2 ** 30
            row = dict(gpu=gpu, model=name, tp=tp, layers=rank.L, phase=phase, batch=batch, context=context,
                       verify_tokens=k, step_s="", reps=0, weights_gib=f"{wg:.3f}", kv_gib="", status="ok")
            if mem_cap and need > mem_cap:
                row["status"] = "skipped-memory"
            else:
                try:
                    reps = 3 if quick else (5 if phase == "prefill" else 20)
                    t, kv = measure(rank, phase, batch, context, k, reps)
                    row.update(step_s=f"{t:.7g}", reps=reps, kv_gib=f"{kv:.4f}")
                except torch.cuda.OutOfMemoryError if device.type == "cuda" else MemoryError:
                    row["status"] = "oom"
                if device.type == "cuda":
                    torch.cuda.empty_cache()
            out.writerow(row)
            print(f"[{time.strftime('%H:%M:%S')}] {name} tp{tp} {phase} b{batch} c{context} k{k}: "
                  f"{row['step_s'] or row['status']}", flush=True)
    del rank


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--configs", nargs="*", default=["qwen2.5-7b:1"], help="MODEL:TP, e.g. qwen2.5-32b:2")
    ap.add_argument("--phases", nargs="*", default=list(GRIDS), choices=list(GRIDS))
    ap.add_argument("--quick", action="store_true", help="one tiny point per phase (CPU tests)")
    ap.add_argument("--gpu-name", default="")
    ap.add_argument("--mem-cap-gib", type=float, default=0, help="skip points needing more (0: the GPU's memory less 6 GiB)")
    a = ap.parse_args(argv)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    gpu = a.gpu_name or (torch.cuda.get_device_name().replace("NVIDIA ", "") if device.type == "cuda" else "cpu")
    cap = a.mem_cap_gib or (torch.cuda.get_device_properties(0).total_memory / 2 ** 30 - 6 if device.type == "cuda" else 0)
    for spec in a.configs:
        if spec.split(":")[0] not in MODELS or len(spec.split(":")) != 2:
            raise SystemExit(f"infer: expected MODEL:TP with MODEL one of {', '.join(MODELS)}, found '{spec}'")
    if device.type == "cuda":
        check_flash(device)
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "infer-steps.csv")
    with open(path, "w", newline="") as f:
        f.write(f"# tools/profile/infer.py torch={torch.__version__} cuda={torch.version.cuda} host={platform.node()} "
                f"utc={time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n")
        w = csv.DictWriter(f, COLUMNS)
        w.writeheader()
        for spec in a.configs:
            run_config(spec, device, dtype, w, a.quick, gpu, cap, a.phases)
            f.flush()
    return path


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
