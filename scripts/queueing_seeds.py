#!/usr/bin/env python3
"""Multi-seed queueing of the generated presets (docs/workload.md "Queueing").

For each preset and seed: `orrery simulate --generate PRESET --seed S --policy
easy:estimator=walltime` over the preset's whole period (181 d Helios, 184 d Acme), and prints
the avg GPU-job queueing delay per seed, its median and mean over seeds, the largest
per-seed median, the makespans and the GPU utilisation over the makespan, next to the real figure of the summaries. Extra simulate flags after `--`.

usage: scripts/queueing_seeds.py [--orrery build/orrery] [--seeds 1-5] [--presets a,b] [-- FLAGS...]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

REAL = {  # avg / median queueing delay of GPU jobs (s): helios_cluster_summary.csv, acme cluster_summary.csv
    "helios-venus": (1253.288, 0), "helios-earth": (319.483, 0), "helios-saturn": (611.561, 0),
    "helios-uranus": (1949.182, 0), "acme-seren": (445.984, 1), "acme-kalos": (214.179, 17),
}


def run(orrery, preset, seed, extra):
    with tempfile.TemporaryDirectory() as d:
        cmd = [orrery, "simulate", "--generate", preset, "--seed", str(seed), "--policy",
               "easy:estimator=walltime", "--quiet", "--out-dir", d] + extra
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(d, "summary.json")) as f:
            r = json.load(f)["runs"][0]
    return r["queue_delay_s"]["mean"], r["queue_delay_s"]["median"], r["makespan_s"] / 86400, r["gpu_utilization"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--orrery", default="build/orrery")
    ap.add_argument("--seeds", default="1-5")
    ap.add_argument("--presets", default=",".join(REAL))
    ap.add_argument("extra", nargs="*")
    a = ap.parse_args()
    lo, _, hi = a.seeds.partition("-")
    seeds = range(int(lo), int(hi or lo) + 1)
    print("| preset | real avg (s) | " + " | ".join(f"seed {s}" for s in seeds) +
          " | median of seeds | ÷ real | mean | ÷ real | median queue (max over seeds) | makespan (d) | GPU utilisation |")
    print("|---|---:|" + "---:|" * len(seeds) + "---:|---:|---:|---:|---:|---|---|")
    for p in a.presets.split(","):
        rows = [run(a.orrery, p, s, a.extra) for s in seeds]
        avg = [r[0] for r in rows]
        mean = sum(avg) / len(avg)
        med = sorted(avg)[len(avg) // 2]
        print(f"| {p} | {REAL[p][0]:,.0f} | " + " | ".join(f"{v:,.0f}" for v in avg) +
              f" | {med:,.0f} | {med / REAL[p][0]:.2f} | {mean:,.0f} | {mean / REAL[p][0]:.2f} | "
              f"{max(r[1] for r in rows):.0f} | "
              f"{min(r[2] for r in rows):.1f}-{max(r[2] for r in rows):.1f} | "
              f"{min(r[3] for r in rows):.3f}-{max(r[3] for r in rows):.3f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
