#!/usr/bin/env python3
"""Two modes.

Multi-GPU (leave one model size out):
  scripts/fit_plan_constants.py --leave-one-size-out ORRERY_BINARY CALIBRATION_2GPU.csv [--gpu H200]
runs `orrery plan validate CSV --gpu GPU --leave-one-size-out` (the fit and the held-out
predictions are the C++ path, src/plan/validate.cc: for each of the model sizes, the two
multi-GPU constants are fitted on the other sizes' GPU-bound rows and the held-out size is
predicted) and prints the per-fold constants and the per-strategy held-out errors as Markdown
(docs/plan-multigpu.md). Only held-out errors are printed.

Single GPU (below): fits the planner's three time constants (host_op_s, host_ckpt_block_s, mem_efficiency) on the
FIT rows of a calibration CSV (the 1.3B model's rows; docs/validation/planner.md §P) by grid search of the
mean absolute percentage error of step time. Every other row stays held out: this script never
reads them. Usage:
  scripts/fit_plan_constants.py ORRERY_BINARY PROFILE.json CALIBRATION.csv [--fix-host]
Prints the best constants; they are the defaults of plan/profile.h (ModelConstants). With
--fix-host only mem_efficiency is fitted (steps of 0.01) and the host constants stay what the
profile or the defaults say: the refit after a device-side table of the profile changed
(docs/validation/planner.md §P.4; the two host constants are not identifiable from the 1.3B rows alone,
which hold one host-bound row)."""
import csv, json, os, subprocess, sys, tempfile, itertools


def leave_one_size_out(argv):
    binary, calib = argv[0], argv[1]
    gpu = argv[argv.index("--gpu") + 1] if "--gpu" in argv else "H200"
    out = subprocess.run([binary, "plan", "validate", calib, "--gpu", gpu, "--leave-one-size-out"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(out.stderr.strip() or "orrery plan validate failed")
    lines = out.stdout.splitlines()
    folds = [l.split() for l in lines if l.startswith("  ") and "comm_compute_slowdown" in l]
    print("| held-out size | comm_compute_slowdown (fit-set error) | dtensor_op_factor (fit-set error) |")
    print("|---|---:|---:|")
    for f in folds:
        print("| %s | %s %s | %s %s |" % (f[0], f[2], " ".join(f[3:5]), f[6], " ".join(f[7:9])))
    start = next(i for i, l in enumerate(lines) if l.startswith("strategy"))
    print()
    print("| strategy | GPU-bound rows | step time mean | max | rows | memory mean | max |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for l in lines[start + 1:]:
        c = l.split()
        if len(c) == 7:
            print("| " + " | ".join(c) + " |")


if sys.argv[1:2] == ["--leave-one-size-out"]:
    leave_one_size_out(sys.argv[2:])
    sys.exit(0)

binary, profile, calib = sys.argv[1:4]
fix_host = "--fix-host" in sys.argv[4:]
rows = list(csv.DictReader(open(calib)))
fit = [r for r in rows if r["model"] == "1.3B"]
tmp = tempfile.mkdtemp()
fit_csv = os.path.join(tmp, "fit.csv")
with open(fit_csv, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(fit)
base = json.load(open(profile))


def score(c):
    p = dict(base)
    p["constants"] = dict(base.get("constants", {}), **c)
    path = os.path.join(tmp, "p.json")
    json.dump(p, open(path, "w"))
    out = subprocess.run([binary, "plan", "validate", fit_csv, "--profile", path], capture_output=True, text=True).stdout
    errs = [float(l.split()[5].rstrip("%")) for l in out.splitlines()[1:] if l.startswith("single|") or "|" in l.split()[0]]
    return sum(errs) / len(errs)


if fix_host:
    fits = [(score({"mem_efficiency": e / 100}), e / 100) for e in range(60, 96)]
    s, e = min(fits)
    print("fit-set mean abs error %.2f %%" % s)
    print(json.dumps({"mem_efficiency": e}))
    sys.exit(0)

best = None
for op in [8e-6, 12e-6, 16e-6, 20e-6, 24e-6, 28e-6, 32e-6]:
    for ck in [0.5e-3, 1.0e-3, 1.5e-3, 2.0e-3, 2.5e-3, 3.0e-3, 3.5e-3]:
        for eff in [0.6, 0.7, 0.8, 0.9, 1.0]:
            c = {"host_op_s": op, "host_ckpt_block_s": ck, "mem_efficiency": eff}
            s = score(c)
            if best is None or s < best[0]:
                best = (s, c)
print("coarse", best)
s0, c0 = best
for op in [c0["host_op_s"] * f for f in (0.85, 0.9, 0.95, 1.0, 1.05, 1.1, 1.15)]:
    for ck in [c0["host_ckpt_block_s"] * f for f in (0.8, 0.9, 1.0, 1.1, 1.2)]:
        for eff in [c0["mem_efficiency"] + d for d in (-0.05, -0.025, 0, 0.025, 0.05)]:
            c = {"host_op_s": op, "host_ckpt_block_s": ck, "mem_efficiency": eff}
            s = score(c)
            if s < best[0]:
                best = (s, c)
print("fit-set mean abs error %.2f %%" % best[0])
print(json.dumps(best[1]))
