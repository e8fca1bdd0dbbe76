"""GEMM time in a profile table (short bursts on the same operands, bench.gemm_table) against
the same GEMMs under the conditions of a GPU-bound training step: operands that do not stay
in L2 (`cold`: a ring of distinct buffers larger than the L2), a GPU that has been running for
a while (`sustained`: back-to-back for `--sustain` seconds after a heat-up, the power and clock
state of a long step), and the layouts autograd uses (`chain`: a stack of bias-free Linear pairs
h -> 4h -> h, forward and backward, as in a block's MLP). With `--sdpa-profile` the attention
shapes of a profile are timed the same two ways (the table's burst, and sustained). A
micro-benchmark: shapes from the profile's grid, no model configuration.

  python3 tools/profile/gemm_sustained.py --out DIR [--quick] [--sdpa-profile PROFILE.json] [--skip-gemm]
  python3 tools/profile/gemm_sustained.py --apply SUSTAINED.json [SUSTAINED2.json ...] --to PROFILE.json

writes DIR/gemm-sustained.json (docs/formats/gpu-profile.md, "Sustained-load tables"); `--apply`
rewrites PROFILE.json's attention rows of ≥ 1 ms with the mean sustained times of the given runs
(atomically; apply_sdpa says why shorter rows keep the table's times)."""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

L2_BYTES = 60 * 2**20  # H200: 60 MiB (a ring of ≥ 4x this keeps the operands out of L2)


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _operands(device, dt, m, k, n, ring_bytes):
    """Pairs (a, w) of F.linear(a, w): a m×k, w n×k; as many as fill `ring_bytes` (at least 1)."""
    per = 2 * (m * k + n * k)
    count = max(1, min(64, ring_bytes // per))
    return [(torch.randn(m, k, device=device, dtype=dt), torch.randn(n, k, device=device, dtype=dt))
            for _ in range(count)]


def time_for(device, fn, seconds):
    """Mean seconds per call over a run of about `seconds`, after one calibration call."""
    _sync(device)
    t0 = time.perf_counter()
    fn(0)
    _sync(device)
    one = max(time.perf_counter() - t0, 1e-6)
    iters = max(3, int(seconds / one))
    t0 = time.perf_counter()
    for i in range(iters):
        fn(i)
    _sync(device)
    return (time.perf_counter() - t0) / iters


def gemm_row(device, dt, m, k, n, sustain_s, ring_bytes):
    """One forward GEMM shape: burst (the table's method), cold, and sustained-cold seconds."""
    timer = bench.Timer(device)
    hot = _operands(device, dt, m, k, n, 0)[0]
    est = 2.0 * m * k * n / (500e12 if device.type == "cuda" else 5e10)
    iters = max(2, min(100, int(0.02 / max(est, 1e-7))))
    burst = timer(lambda i: F.linear(*hot), iters)
    ring = _operands(device, dt, m, k, n, ring_bytes)
    cold_fn = lambda i: F.linear(*ring[i % len(ring)])  # noqa: E731
    cold = timer(cold_fn, iters)
    time_for(device, cold_fn, sustain_s)  # heat-up
    sustained = time_for(device, cold_fn, sustain_s)
    del hot, ring
    return {"m": m, "k": k, "n": n, "tflop": 2.0 * m * k * n / 1e12, "burst_s": burst, "cold_s": cold,
            "sustained_s": sustained}


def chain_row(device, dt, h, tokens, pairs, sustain_s):
    """Forward + backward of `pairs` Linear pairs h -> 4h -> h (bf16, autograd), sustained, against
    the sum of the burst times of its twelve GEMM kinds (fwd, dgrad, wgrad of each Linear)."""
    timer = bench.Timer(device)
    ws = [(torch.randn(4 * h, h, device=device, dtype=dt, requires_grad=True),
           torch.randn(h, 4 * h, device=device, dtype=dt, requires_grad=True)) for _ in range(pairs)]
    x = torch.randn(tokens, h, device=device, dtype=dt, requires_grad=True)

    def step(i):
        y = x
        for w1, w2 in ws:
            y = F.linear(F.linear(y, w1), w2)
        y.backward(torch.ones_like(y))
        for w1, w2 in ws:
            w1.grad = w2.grad = None
        x.grad = None

    time_for(device, step, sustain_s)  # heat-up
    measured = time_for(device, step, sustain_s) / pairs
    parts = []
    for op, m, k, n in (("fwd", tokens, h, 4 * h), ("fwd", tokens, 4 * h, h),
                        ("dgrad", tokens, h, 4 * h), ("dgrad", tokens, 4 * h, h),
                        ("wgrad", 4 * h, tokens, h), ("wgrad", h, tokens, 4 * h)):
        a = torch.randn(m, k, device=device, dtype=dt)
        if op == "fwd":
            w = torch.randn(n, k, device=device, dtype=dt)
            fn = lambda i: F.linear(a, w)  # noqa: E731
        else:
            b = torch.randn(k, n, device=device, dtype=dt)
            fn = lambda i: torch.mm(a, b)  # noqa: E731
        parts.append(timer(fn, 20))
    del ws, x
    return {"h": h, "tokens": tokens, "pairs": pairs, "measured_per_pair_s": measured, "table_sum_s": sum(parts),
            "ratio": measured / sum(parts)}


def sdpa_row(device, dt, b, heads, s, hd, sustain_s):
    """Causal flash attention of one shape: forward and forward+backward, the table's burst method
    (bench.sdpa_table) against a sustained run (heat-up, then `sustain_s` of back-to-back calls)."""
    (burst,) = bench.sdpa_table(device, [(b, heads, s, hd)])
    fwd, fwdbwd = bench.sdpa_calls(device, dt, b, heads, s, hd)
    out = {"b": b, "heads": heads, "s": s, "head_dim": hd, "burst_fwd_s": burst["t_fwd_s"],
           "burst_fwdbwd_s": burst["t_fwdbwd_s"]}
    for name, fn in (("fwd", fwd), ("fwdbwd", fwdbwd)):
        time_for(device, fn, 0.4 * sustain_s)  # heat-up
        out[f"sustained_{name}_s"] = time_for(device, fn, sustain_s)
    del fwd, fwdbwd
    return out


MIN_SUSTAINED_S = 1e-3  # below this a back-to-back loop of one fwd+bwd call is paced by the host


def apply_sdpa(profile, runs, min_s=MIN_SUSTAINED_S):
    """The profile with each attention row's times replaced by the mean sustained times of the
    same shape over `runs` (sustained documents), for rows whose table forward+backward time is
    at least `min_s`; shorter rows keep the table (CUDA-event) times, since a wall-clock loop of
    them measures the host's issue rate (two runs differ by up to ±50 % there). Every row must
    have a measurement in every run (ValueError names the first shape that has none)."""
    key = lambda r: (r["b"], r["heads"], r["s"], r["head_dim"])  # noqa: E731
    by_shape = [{key(r): r for r in run["sdpa"]} for run in runs]
    out = dict(profile, sdpa=[])
    for row in profile["sdpa"]:
        ms = [m.get(key(row)) for m in by_shape]
        if not ms or any(m is None for m in ms):
            raise ValueError("no sustained measurement for attention shape b=%d heads=%d s=%d head_dim=%d" % key(row))
        if row["t_fwdbwd_s"] < min_s:
            out["sdpa"].append(dict(row))
            continue
        mean = lambda k: sum(m[k] for m in ms) / len(ms)  # noqa: E731
        out["sdpa"].append(dict(row, t_fwd_s=mean("sustained_fwd_s"), t_fwdbwd_s=mean("sustained_fwdbwd_s")))
    return out


def _apply_main(sustained_paths, profile_path):
    runs = []
    for path in sustained_paths:
        with open(path) as f:
            runs.append(json.load(f))
    with open(profile_path) as f:
        profile = json.load(f)
    tmp = profile_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(apply_sdpa(profile, runs), f, indent=1)
        f.write("\n")
    os.replace(tmp, profile_path)


def main():
    if "--apply" in sys.argv:
        ap = argparse.ArgumentParser()
        ap.add_argument("--apply", required=True, nargs="+", help="sustained documents (their mean is applied)")
        ap.add_argument("--to", required=True)
        a = ap.parse_args()
        return _apply_main(a.apply, a.to)
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true", help="CPU-sized shapes (tests)")
    ap.add_argument("--sustain", type=float, default=1.0, help="seconds of heat-up and of measurement")
    ap.add_argument("--sdpa-profile", default="", help="a GPU profile whose sdpa shapes are re-timed sustained")
    ap.add_argument("--skip-gemm", action="store_true")
    a = ap.parse_args()
    device = torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
    dt = bench.compute_dtype(device)
    hs, toks = ((16, 32), (8,)) if a.quick else ((1024, 2048, 4096), (2048, 8192))
    sustain = 0.01 if a.quick else a.sustain
    ring = 0 if a.quick else 4 * L2_BYTES
    t0 = time.time()
    sdpa = []
    if a.sdpa_profile:
        with open(a.sdpa_profile) as f:
            shapes = [(r["b"], r["heads"], r["s"], r["head_dim"]) for r in json.load(f)["sdpa"]]
        for shape in shapes[:2] if a.quick else shapes:
            sdpa.append(sdpa_row(device, dt, *shape, sustain))
            print(json.dumps(sdpa[-1]), flush=True)
    gemms = []
    for h in ([] if a.skip_gemm else hs):
        for T in toks:
            for k, n in ((h, 3 * h), (h, h), (h, 4 * h), (4 * h, h)):
                gemms.append(dict(gemm_row(device, dt, T, k, n, sustain, ring), h=h))
                print(json.dumps(gemms[-1]), flush=True)
    chains = []
    for h in ([] if a.skip_gemm else hs):
        for T in toks:
            chains.append(chain_row(device, dt, h, T, 2 if a.quick else 4, sustain))
            print(json.dumps(chains[-1]), flush=True)
    ratio = lambda key: statistics.median(g[key] / g["burst_s"] for g in gemms) if gemms else None  # noqa: E731
    doc = {"format": "orrery-gemm-sustained/1", "device": torch.cuda.get_device_name(0) if device.type == "cuda" else "cpu",
           "torch": torch.__version__, "sustain_s": sustain, "ring_bytes": ring, "gemm": gemms, "chain": chains,
           "median_cold_over_burst": ratio("cold_s"), "median_sustained_over_burst": ratio("sustained_s"),
           "median_chain_over_table": statistics.median(c["ratio"] for c in chains) if chains else None,
           "sdpa": sdpa, "wall_s": time.time() - t0}
    os.makedirs(a.out, exist_ok=True)
    tmp = os.path.join(a.out, "gemm-sustained.json.tmp")
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, os.path.join(a.out, "gemm-sustained.json"))


if __name__ == "__main__":
    main()
