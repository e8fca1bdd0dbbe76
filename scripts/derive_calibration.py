#!/usr/bin/env python3
"""Recomputes the calibration constants shipped in src/workload/calibration_data.cc.

Reads ../shared/traces/helios-aggregates/cluster_throughput.csv (Venus, 10-minute bins,
2020-04-01 .. 2020-09-28) and prints the 168-value hour-of-week profile of GPU-job
submissions: the mean of `submit_gpu_job` over all 10-minute bins with the same
(day of week, hour), times 6, i.e. GPU jobs submitted per hour. Index = dow*24 + hour,
dow 0 = Monday. Timestamps are taken as they are written (no time-zone shift).

Usage: scripts/derive_calibration.py [SHARED_DIR] [--check src/workload/calibration_data.cc]
With --check it compares against the shipped constants (|diff| <= 0.0005) and exits 1 on mismatch.
"""
import csv
import datetime
import os
import re
import sys


def derive(shared):
    path = os.path.join(shared, "traces", "helios-aggregates", "cluster_throughput.csv")
    sums = [0.0] * 168
    counts = [0] * 168
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            t = datetime.datetime.strptime(row["time"], "%Y-%m-%d %H:%M:%S")
            h = t.weekday() * 24 + t.hour
            sums[h] += float(row["submit_gpu_job"])
            counts[h] += 1
    return [6.0 * s / c for s, c in zip(sums, counts)]


def main():
    argv = sys.argv[1:]
    if "--check" in argv:
        i = argv.index("--check")
        argv = argv[:i] + argv[i + 2:]
    args = [a for a in argv if not a.startswith("--")]
    here = os.path.dirname(os.path.abspath(__file__))
    shared = args[0] if args else os.path.join(here, "..", "..", "shared")
    prof = derive(shared)
    if "--check" in sys.argv:
        src = sys.argv[sys.argv.index("--check") + 1]
        text = open(src).read()
        body = text[text.index("kVenusGpuJobsPerHourOfWeek"):]
        body = body[body.index("{") + 1: body.index("}")]
        shipped = [float(x) for x in re.findall(r"[-+]?\d+\.\d+", body)]
        bad = [i for i, (a, b) in enumerate(zip(prof, shipped)) if abs(a - b) > 0.0005]
        if len(shipped) != 168 or bad:
            print(f"MISMATCH: {len(shipped)} shipped values, bad indices {bad[:10]}")
            return 1
        print("OK: shipped hour-of-week profile matches cluster_throughput.csv")
        return 0
    for d in range(7):
        print("    " + ", ".join(f"{v:.3f}" for v in prof[d * 24:(d + 1) * 24]) + ",")
    print(f"// mean {sum(prof) / 168:.4f} GPU jobs/hour")
    return 0


if __name__ == "__main__":
    sys.exit(main())
