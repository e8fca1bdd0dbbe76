"""Host (CPU) issue cost of eager training steps as a function of the hidden size, the number of
blocks and checkpointing: a micro-benchmark on block stacks fed a few tokens (never a
calibration configuration), so that the GPU finishes every kernel before the next is issued and
a step's CPU issue time is what it measures.

Every model of the sweep is built once and kept resident; the measurement goes round-robin over
them (`--rounds` rounds, each: one warm-up step and `--steps` timed steps per model and
checkpoint setting, the order shuffled with a fixed seed), so the host speed drift of a machine
(±20 % within a minute on the H200 device machine, docs/validation.md §P.3) falls on every
configuration alike instead of on whichever ran last. A second, smaller sweep repeats some
configurations with the GPU kept busy by a sleep kernel queued before the step (`busy`), to see
whether a launch costs the CPU the same when the queue is not empty.

  python3 tools/profile/host_sweep.py --out DIR [--quick]

writes DIR/host-sweep.json (docs/formats/gpu-profile.md, "Host sweep")."""
import argparse
import gc
import json
import os
import platform
import random
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpt  # noqa: E402
import host  # noqa: E402

PHASES = host.PHASES


def grid(quick, spec=""):
    """(h, L) pairs of the sweep (`spec` "H:L,H:L" overrides); head dim 64 (h = 64: one head)."""
    if spec:
        return [tuple(int(v) for v in item.split(":")) for item in spec.split(",")]
    if quick:
        return [(16, 1), (16, 2), (32, 1), (32, 2)]
    out = [(h, L) for h in (64, 256, 512, 1024, 2048) for L in (2, 6, 12, 24)]
    return out + [(4096, 2), (4096, 6)]


class Subject:
    """One resident model with its optimizer and batch."""

    def __init__(self, h, L, tokens, device):
        torch.manual_seed(1234)
        self.h, self.L, self.heads = h, L, max(1, h // 64)
        self.model = gpt.GPT(h, L, self.heads, device=device)
        cuda = device.type == "cuda"
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4, weight_decay=0.1,
                                     **({"fused": True} if cuda else {}))
        g = torch.Generator().manual_seed(42)
        self.x = torch.randint(0, gpt.VOCAB, (1, tokens), generator=g).to(device)
        self.y = torch.randint(0, gpt.VOCAB, (1, tokens), generator=g).to(device)
        self.device = device

    def set_ckpt(self, on):
        for b in self.model.blocks:
            b.ckpt = on

    def step(self, busy_cycles=0):
        """(phase issue times, synchronized step time); `busy_cycles` > 0 queues a GPU sleep first."""
        host._sync(self.device)
        if busy_cycles:
            torch.cuda._sleep(busy_cycles)
        return host._phase_times(self.model, self.opt, self.x, self.y, self.device)

    def kernels(self):
        return host._kernel_counts(self.model, self.opt, self.x, self.y, self.device)


def summarize(samples):
    """Median and quartiles of each phase and of the whole issue time (the sum of the phases)."""
    rec = {"n": len(samples)}
    for k, ph in enumerate(PHASES):
        rec[f"{ph}_s"] = statistics.median(s[0][k] for s in samples)
    issue = sorted(sum(s[0]) for s in samples)
    rec["issue_s"] = statistics.median(issue)
    q = statistics.quantiles(issue, n=4) if len(issue) >= 2 else [issue[0]] * 3
    rec["issue_q1_s"], rec["issue_q3_s"] = q[0], q[2]
    rec["step_s"] = statistics.median(s[1] for s in samples)
    return rec


def sweep(subjects, rounds, steps, busy_cycles=0, seed=7):
    """Round-robin measurement; returns {(index, ckpt): [samples]}."""
    order = [(i, ck) for i in range(len(subjects)) for ck in (0, 1)]
    rng = random.Random(seed)
    out = {key: [] for key in order}
    for _ in range(rounds):
        rng.shuffle(order)
        for i, ck in order:
            s = subjects[i]
            s.set_ckpt(bool(ck))
            s.step(busy_cycles)  # re-warm after the switch (caches, allocator)
            for _ in range(steps):
                out[(i, ck)].append(s.step(busy_cycles))
    return out


def per_block_slopes(rows):
    """Least-squares issue time per block over L, per (h, ckpt): the per-block host cost."""
    out = []
    for h in sorted({r["h"] for r in rows}):
        for ck in (0, 1):
            sel = [r for r in rows if r["h"] == h and r["ckpt"] == ck]
            if len({r["L"] for r in sel}) < 2:
                continue
            a, slope = host.fit_line([r["L"] for r in sel], [r["issue_s"] for r in sel])
            ka, kslope = host.fit_line([r["L"] for r in sel], [r["kernels"] for r in sel])
            out.append({"h": h, "ckpt": ck, "fixed_s": a, "per_block_s": slope,
                        "fixed_kernels": ka, "per_block_kernels": kslope})
    return out


def records(subjects, samples, counts, label):
    rows = []
    for (i, ck), smp in sorted(samples.items()):
        s = subjects[i]
        rec = {"sweep": label, "h": s.h, "L": s.L, "heads": s.heads, "tokens": int(s.x.numel()), "ckpt": ck,
               "param_tensors": sum(1 for _ in s.model.parameters())}
        rec.update(summarize(smp))
        kc = counts[(i, ck)]
        rec.update({f"{ph}_kernels": kc[ph] for ph in PHASES})
        rec["kernels"] = sum(kc[ph] for ph in PHASES)
        rows.append(rec)
    return rows


def kernel_counts(subjects):
    counts = {}
    for i, s in enumerate(subjects):
        for ck in (0, 1):
            s.set_ckpt(bool(ck))
            s.step()
            counts[(i, ck)] = s.kernels()
    return counts


def environment(device):
    env = {"torch": torch.__version__, "python": platform.python_version(), "cpu": platform.processor(),
           "device": torch.cuda.get_device_name(0) if device.type == "cuda" else "cpu", "cpus": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            env["cpu"] = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return env


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true", help="a CPU-sized grid (tests)")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--grid", default="", help="H:L,H:L,... instead of the default grid")
    ap.add_argument("--gc-off", action="store_true", help="Python's cyclic garbage collector disabled while measuring")
    ap.add_argument("--no-busy", action="store_true", help="skip the busy-GPU sweep")
    ap.add_argument("--busy-ms", type=float, default=100.0, help="GPU sleep before each step of the busy sweep")
    a = ap.parse_args()
    device = torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
    t0 = time.time()
    subjects = [Subject(h, L, a.tokens, device) for h, L in grid(a.quick, a.grid)]
    if a.gc_off:
        gc.collect()
        gc.disable()
    counts = kernel_counts(subjects)
    rows = records(subjects, sweep(subjects, a.rounds, a.steps), counts, "idle")
    print(f"idle sweep done in {time.time() - t0:.0f} s", flush=True)
    if device.type == "cuda" and not a.no_busy:
        # ≤ 12 blocks keeps a step under the launch queue's ~1,000 entries, so the CPU never
        # waits for the sleeping GPU; ~1.98 GHz SM clock.
        busy = [i for i, s in enumerate(subjects) if s.L <= 12 and s.h in (256, 1024, 2048)]
        sub = [subjects[i] for i in busy]
        smp = sweep(sub, max(2, a.rounds // 2), a.steps, busy_cycles=int(a.busy_ms * 1e-3 * 1.98e9))
        rows += records(sub, smp, {(j, ck): counts[(i, ck)] for j, i in enumerate(busy) for ck in (0, 1)}, "busy")
        print(f"busy sweep done in {time.time() - t0:.0f} s", flush=True)
    doc = {"format": "orrery-host-sweep/1", "env": environment(device), "tokens": a.tokens, "rounds": a.rounds,
           "gc": "off" if a.gc_off else "on",
           "steps_per_round": a.steps, "rows": rows,
           "per_block": per_block_slopes([r for r in rows if r["sweep"] == "idle"]),
           "wall_s": time.time() - t0}
    os.makedirs(a.out, exist_ok=True)
    tmp = os.path.join(a.out, "host-sweep.json.tmp")
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, os.path.join(a.out, "host-sweep.json"))


if __name__ == "__main__":
    main()
