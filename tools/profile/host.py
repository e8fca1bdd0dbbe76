"""Host (CPU) side of an eager training step: how long Python, the dispatcher, autograd and the
CUDA launch path take to *issue* each phase of a step, and how many kernels each phase launches.

A step is timed phase by phase without synchronizing inside it (forward + loss, backward,
optimizer step, zero_grad): the CPU never waits for the GPU inside a step of eager PyTorch (no
.item(), the caching allocator is warm), so each phase's wall time is its issue time as long as the
launch queue does not fill. On a model small enough that every kernel finishes before the next is
issued (`tiny`: h = 64) the whole step is host time; varying the number of blocks separates the
per-block cost from the per-step cost. The same phases on the real models (125M ... 1.3B) show
whether the issue cost depends on tensor sizes.

  python3 tools/profile/host.py --out OUT [--quick]

writes OUT/host.json (docs/formats/gpu-profile.md, "Host micro-profile")."""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt  # noqa: E402

PHASES = ("forward", "backward", "optimizer", "zero_grad")


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _phase_times(model, opt, x, y, device):
    cuda = device.type == "cuda"
    t = [time.perf_counter()]
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cuda):
        loss = gpt.loss_fn(model(x), y)
    t.append(time.perf_counter())
    loss.backward()
    t.append(time.perf_counter())
    opt.step()
    t.append(time.perf_counter())
    opt.zero_grad(set_to_none=True)
    t.append(time.perf_counter())
    _sync(device)
    t.append(time.perf_counter())
    return [t[i + 1] - t[i] for i in range(4)], t[-1] - t[0]


def _kernel_counts(model, opt, x, y, device):
    """Kernels (and memcpy/memset) launched per phase, from one profiled step."""
    if device.type != "cuda":
        return {p: 0 for p in PHASES}
    from torch.profiler import ProfilerActivity, profile
    counts = {}
    cuda = True

    def run(name, fn):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            out = fn()
            _sync(device)
        counts[name] = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
        return out

    def fwd():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=cuda):
            return gpt.loss_fn(model(x), y)
    loss = run("forward", fwd)
    run("backward", loss.backward)
    run("optimizer", opt.step)
    run("zero_grad", lambda: opt.zero_grad(set_to_none=True))
    return counts


def measure(h, L, heads, s, b, ckpt, device, timed=10, warmup=3, name=None):
    torch.manual_seed(1234)
    model = gpt.GPT(h, L, heads, ckpt=ckpt, device=device)
    cuda = device.type == "cuda"
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1, **({"fused": True} if cuda else {}))
    g = torch.Generator().manual_seed(42)
    x = torch.randint(0, gpt.VOCAB, (b, s), generator=g).to(device)
    y = torch.randint(0, gpt.VOCAB, (b, s), generator=g).to(device)
    phases, steps = [], []
    for i in range(warmup + timed):
        _sync(device)
        p, total = _phase_times(model, opt, x, y, device)
        if i >= warmup:
            phases.append(p)
            steps.append(total)
    counts = _kernel_counts(model, opt, x, y, device)
    rec = {"model": name or f"h{h}", "h": h, "L": L, "heads": heads, "s": s, "b": b, "ckpt": int(ckpt),
           "param_tensors": sum(1 for _ in model.parameters()), "iters": timed,
           "step_s": statistics.median(steps)}
    for k, ph in enumerate(PHASES):
        rec[f"{ph}_s"] = statistics.median(p[k] for p in phases)
        rec[f"{ph}_kernels"] = counts[ph]
    del model, opt
    if cuda:
        torch.cuda.empty_cache()
    return rec


def fit_line(xs, ys):
    """Least squares y = a + b x."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else 0.0
    return my - slope * mx, slope


def summarize(tiny):
    """Per-block and per-step host costs from the tiny-model rows (linear in the block count)."""
    out = {}
    for ck in (0, 1):
        rows = [r for r in tiny if r["ckpt"] == ck]
        if len(rows) < 2:
            continue
        Ls = [r["L"] for r in rows]
        for ph in PHASES:
            a, slope = fit_line(Ls, [r[f"{ph}_s"] for r in rows])
            out[f"ck{ck}_{ph}_fixed_s"], out[f"ck{ck}_{ph}_per_block_s"] = a, slope
            ka, kslope = fit_line(Ls, [r[f"{ph}_kernels"] for r in rows])
            out[f"ck{ck}_{ph}_fixed_kernels"], out[f"ck{ck}_{ph}_per_block_kernels"] = ka, kslope
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true", help="two block counts, CPU-sized (tests)")
    ap.add_argument("--real", nargs="*", default=["125M:2048:1", "350M:2048:1", "1.3B:2048:1"],
                    help="MODEL:SEQ:BATCH of real models, each with and without checkpointing")
    a = ap.parse_args()
    device = torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
    blocks = (1, 2) if a.quick else (1, 2, 4, 8, 16, 32)
    tiny = []
    for ck in (0, 1):
        for L in blocks:
            rec = measure(64, L, 1, 32, 1, bool(ck), device, timed=3 if a.quick else 10, warmup=1 if a.quick else 3,
                          name="tiny")
            tiny.append(rec)
            print(json.dumps(rec), flush=True)
    real = []
    for spec in ([] if a.quick else a.real):
        m, s, b = spec.split(":")
        h, L, heads = gpt.MODELS[m]
        for ck in (0, 1):
            rec = measure(h, L, heads, int(s), int(b), bool(ck), device, name=m)
            real.append(rec)
            print(json.dumps(rec), flush=True)
    env = {"torch": torch.__version__, "python": platform.python_version(), "cpu": platform.processor(),
           "device": torch.cuda.get_device_name(0) if device.type == "cuda" else "cpu"}
    try:
        with open("/proc/cpuinfo") as f:
            env["cpu"] = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    os.makedirs(a.out, exist_ok=True)
    doc = {"format": "orrery-host-profile/1", "env": env, "fit": summarize(tiny), "tiny": tiny, "real": real}
    tmp = os.path.join(a.out, "host.json.tmp")
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, os.path.join(a.out, "host.json"))


if __name__ == "__main__":
    main()
