#!/usr/bin/env python3
"""Why the generated Venus/Earth months queue 10x the real clusters (docs/validation/workload.md).

For a VC preset and seeds, generates the whole period (`orrery generate --arrivals open-loop`, the
preset's other defaults: Venus and Earth submit long runs flat since the closed loop per node, `--generate-flags
"--long-runs weekly"` gives the traces of the figures before), replays it under
`easy:estimator=walltime --renege` on the preset's VCs and on counterfactual versions of the same
jobs, and prints, per seed:
  * the avg GPU-job queueing delay of: the trace as generated; walltime = run time (perfect
    estimates); walltime = 30 days (no user limit, Slurm's partition MaxTime); all VCs merged into
    one pool of the same GPUs; every job split into 1-GPU jobs of the same VC and times ("fluid":
    no gang scheduling, no fragmentation; the average is over the pieces);
  * the same with closed-loop arrivals (and that trace split into 1-GPU jobs: "closed loop, fluid") (`--arrivals closed-loop`: users hold a job while its VC is
    full), and for both the pending jobs/GPUs by utilisation (compare scripts/analyze_queueing.py's
    table of the real Venus);
  * where the wait is (by job size and VC) and behind whom (GPUs held, at a waiting job's submit, by
    running jobs of each size: jobs that waited > 1 h, up to 200 per VC);
  * the zero-wait occupancy fluctuation (running GPUs sampled every 10 min with every job started
    at submit, detrended by a 7-day moving average, first 30 days skipped; split into its mean
    hour-of-week pattern and the rest) and the GPU-time-weighted job size E[g^2 d] / E[g d];
and, for Venus, the same fluctuation of the real running GPUs (cluster_throughput.csv,
cumulative GPUs started - ended, offset to min 0) with its monthly mean and max.
VC capacities are read from the files the presets use (vc_config.csv x 8; Earth_gpu_number.csv,
last row). Standard library only; deterministic.

usage: scripts/queueing_why.py [--orrery build/orrery] [--preset helios-venus] [--seeds 1-3]
                               [--load 1.0] [--generate-flags="--batches short-sweeps --long-runs flat"]
                               [--closed closed-loop-nodes]
(--generate-flags: extra `orrery generate` options for every generated trace, e.g. the generator
variants of docs/validation/workload.md.)
"""
import argparse
import bisect
import collections
import csv
import json
import os
import random
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
AGG = os.path.join(HERE, "..", "..", "shared", "traces", "helios-aggregates")
BIN, SKIP, DETREND = 600, 30 * 144, 7 * 144  # 10-minute bins; skip 30 days; 7-day moving average
SIZES = (("1", 1), ("2-8", 8), ("16", 16), ("32", 32), ("64+", 1 << 30))


def vc_gpus(preset):
    if preset == "helios-venus":
        return {r[""]: 8 * int(r["num"]) for r in csv.DictReader(open(os.path.join(AGG, "vc_config.csv")))}
    if preset == "helios-earth":
        last = list(csv.DictReader(open(os.path.join(AGG, "Earth_gpu_number.csv"))))[-1]
        return {k: int(v) for k, v in last.items() if k not in ("date", "total") and int(v) > 0}
    raise SystemExit("queueing_why.py: only the VC presets helios-venus and helios-earth")


def write_cluster(path, vcs):
    with open(path, "w") as f:
        f.write('name = "why"\n[defaults]\ngpus_per_node = 8\ngpu_type = "V100"\n')
        for name, gpus in vcs.items():
            f.write('[[vc]]\nname = "%s"\nnodes = %d\n' % (name, gpus // 8))


def read_trace(path):
    lines = open(path).read().splitlines()
    head = [l for l in lines if l.startswith("#")]
    return head, list(csv.DictReader([l for l in lines if not l.startswith("#")]))


def write_variant(path, head, rows, edit):
    with open(path, "w", newline="") as f:
        f.write("".join(h + "\n" for h in head))
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow(edit(dict(r)))


def fluid(rows):
    """Every job as g 1-GPU jobs of the same VC, submit and run time: no gang, no fragmentation."""
    out = []
    for r in rows:
        for _ in range(int(r["gpus"])):
            out.append({**r, "id": str(len(out)), "gpus": "1", "nodes": "1",
                        "cpu_milli": str(int(r["cpu_milli"]) // int(r["gpus"])),
                        "mem_mib": str(int(r["mem_mib"]) // int(r["gpus"]))})
    return out


def write_rows(path, head, rows):
    write_variant(path, head, rows, lambda r: r)


def generate(orrery, preset, seed, load, arrivals, out, flags=()):
    subprocess.run([orrery, "generate", "--preset", preset, "--seed", str(seed), "--load", load, "--arrivals",
                    arrivals, "--out", out, *flags], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return read_trace(out)


def simulate(orrery, trace, cluster, out):
    subprocess.run([orrery, "simulate", trace, "--cluster", cluster, "--policy", "easy:estimator=walltime",
                    "--renege", "--quiet", "--out-dir", out], check=True, stdout=subprocess.DEVNULL)
    mean = json.load(open(os.path.join(out, "summary.json")))["runs"][0]["queue_delay_s"]["mean"]
    return mean, list(csv.DictReader(open(os.path.join(out, "easy_estimator_walltime", "jobs.csv"))))


def pending_by_util(rows, jobs, cap, days=181):
    """Utilisation decile -> (share of time, mean pending jobs, median pending GPUs), sampled at
    10-minute bin ends after day 30, as scripts/analyze_queueing.py does for the real Venus."""
    n = int(days * 86400 // BIN)
    gpus = {r["id"]: int(r["gpus"]) for r in rows}
    d_jobs, d_gpus, d_run = [0] * (n + 2), [0] * (n + 2), [0] * (n + 2)
    for j in jobs:
        g = gpus[j["job_id"]]
        for (a, b), deltas in (((float(j["submit"]), float(j["start"])), ((d_jobs, 1), (d_gpus, g))),
                               ((float(j["start"]), float(j["end"])), ((d_run, g),))):
            lo, hi = int(a // BIN) + 1, int(b // BIN) + 1
            for arr, v in deltas:
                if lo < hi and lo <= n:
                    arr[lo] += v
                    if hi <= n:
                        arr[hi] -= v
    by = collections.defaultdict(list)
    p = pg = run = 0
    for i in range(n):
        p, pg, run = p + d_jobs[i], pg + d_gpus[i], run + d_run[i]
        if i >= SKIP:
            by[min(9, int(run / cap * 10))].append((p, pg))
    total = sum(len(v) for v in by.values())
    return {k: (len(v) / total, statistics.mean(a for a, _ in v), sorted(b for _, b in v)[len(v) // 2])
            for k, v in sorted(by.items())}


def size_class(g):
    return next(name for name, top in SIZES if g <= top)


def where_and_behind(rows, jobs):
    gpus = {r["id"]: int(r["gpus"]) for r in rows}
    wait = collections.Counter()
    n = collections.Counter()
    for j in jobs:
        c = size_class(gpus[j["job_id"]])
        wait[c] += float(j["queue_delay"])
        n[c] += 1
    by_vc = collections.defaultdict(list)
    for j in jobs:
        by_vc[j["vc"]].append((float(j["start"]), float(j["end"]), gpus[j["job_id"]], float(j["queue_delay"]),
                               float(j["submit"])))
    held, held_day = collections.Counter(), collections.Counter()
    rnd = random.Random(1)
    for lst in by_vc.values():
        lst.sort()
        starts = [x[0] for x in lst]
        waiting = [x for x in lst if x[3] > 3600]
        for w in rnd.sample(waiting, min(200, len(waiting))):
            t = w[4] + 1
            for s, e, g, _, _ in lst[max(0, bisect.bisect_right(starts, t) - 5000):bisect.bisect_right(starts, t)]:
                if s <= t < e:
                    held[size_class(g)] += g
                    held_day[size_class(g)] += g if e - t > 86400 else 0
    tw, th = sum(wait.values()), sum(held.values()) or 1
    return {c: (n[c] / len(jobs), wait[c] / max(1, n[c]), wait[c] / tw, held[c] / th, held_day[c] / th)
            for c, _ in SIZES}


def per_vc(rows, jobs, vcs, days=181):
    """VC -> (GPUs, jobs, offered load, avg wait)."""
    gpu_s, n, wait = collections.Counter(), collections.Counter(), collections.Counter()
    by_id = {r["id"]: r for r in rows}
    for j in jobs:
        r = by_id[j["job_id"]]
        gpu_s[j["vc"]] += int(r["gpus"]) * int(r["duration"])
        n[j["vc"]] += 1
        wait[j["vc"]] += float(j["queue_delay"])
    return {v: (g, n[v], gpu_s[v] / (g * days * 86400), wait[v] / max(1, n[v])) for v, g in vcs.items() if n[v]}


def fluctuation(run):
    """Mean, detrended sd, and the sd of its hour-of-week part and of the rest. Bin 0 is
    2020-04-01 00:00 (a Wednesday) in the real file and in every Helios preset (kHeliosEpoch)."""
    run = run[SKIP:]
    pre = [0]
    for x in run:
        pre.append(pre[-1] + x)
    det = []
    for i in range(len(run)):
        lo, hi = max(0, i - DETREND // 2), min(len(run), i + DETREND // 2)
        det.append(run[i] - (pre[hi] - pre[lo]) / (hi - lo))
    how = [((2 * 144 + SKIP + i) % 1008) // 6 for i in range(len(det))]
    by_how = collections.defaultdict(list)
    for h, x in zip(how, det):
        by_how[h].append(x)
    pattern = {h: statistics.mean(v) for h, v in by_how.items()}
    return (statistics.mean(run), statistics.pstdev(det), statistics.pstdev([pattern[h] for h in how]),
            statistics.pstdev([x - pattern[h] for h, x in zip(how, det)]))


def zero_wait(rows, days=181):
    n = int(days * 86400 // BIN)
    delta = [0] * (n + 1)
    gd = g2d = 0
    for r in rows:
        g, s, d = int(r["gpus"]), float(r["submit"]), int(r["duration"])
        for t, sign in ((s, 1), (s + d, -1)):
            b = int(t // BIN) + 1
            if b <= n:
                delta[b] += sign * g
        gd += g * d
        g2d += g * g * d
    run, c = [], 0
    for x in delta[:n]:
        c += x
        run.append(c)
    return fluctuation(run) + (g2d / gd,)


def burst_share(starts, ends):
    """Share of GPU starts in 10-minute bins that start > 200 GPUs, and of those the share that
    ends in the same bin (min(started, ended) per bin): large, instant jobs."""
    hot = [i for i, g in enumerate(starts) if g > 200]
    total_hot = sum(starts[i] for i in hot)
    return total_hot / sum(starts), sum(min(starts[i], ends[i]) for i in hot) / max(1, total_hot)


def simulated_bins(rows, jobs, days=181):
    n = int(days * 86400 // BIN)
    gpus = {r["id"]: int(r["gpus"]) for r in rows}
    starts, ends = [0] * n, [0] * n
    for j in jobs:
        for t, arr in ((float(j["start"]), starts), (float(j["end"]), ends)):
            if int(t // BIN) < n:
                arr[int(t // BIN)] += gpus[j["job_id"]]
    return starts, ends


def real_venus():
    rows = list(csv.DictReader(open(os.path.join(AGG, "cluster_throughput.csv"))))
    run, c = [], 0
    for r in rows:
        c += int(r["start_gpu_num"]) - int(r["end_gpu_num"])
        run.append(c)
    low = min(run)
    run = [x - low for x in run]
    print("real Venus GPU starts in bins starting > 200 GPUs: %.3f, of which ending in the same bin: %.3f"
          % burst_share([int(r["start_gpu_num"]) for r in rows], [int(r["end_gpu_num"]) for r in rows]))
    print("real Venus running GPUs (after day 30): mean %.0f, detrended sd %.0f (hour-of-week part %.0f, "
          "rest %.0f)" % fluctuation(run))
    months = collections.defaultdict(list)
    for r, x in zip(rows, run):
        months[r["time"][:7]].append(x)
    print("| month | mean running GPUs | max running GPUs |\n|---|---:|---:|")
    for m, v in sorted(months.items()):
        print("| %s | %.0f | %d |" % (m, statistics.mean(v), max(v)))


def counterfactuals(orrery, d, head, rows):
    """Avg queue of the same jobs with perfect walltimes, 30-day walltimes, one pool, 1-GPU pieces,
    and the pool's jobs."""
    out, pool_jobs = [], None
    for name, edit, cluster in (
            ("exact", lambda r: {**r, "walltime": str(max(1, int(r["duration"])))}, "vcs.toml"),
            ("max", lambda r: {**r, "walltime": str(30 * 86400)}, "vcs.toml"),
            ("pool", lambda r: {**r, "vc": "default"}, "pool.toml"),
            ("fluid", None, "vcs.toml")):
        path = os.path.join(d, name + ".csv")
        if edit:
            write_variant(path, head, rows, edit)
        else:
            write_rows(path, head, fluid(rows))
        mean, jobs = simulate(orrery, path, os.path.join(d, cluster), os.path.join(d, "o_" + name))
        out.append(mean)
        pool_jobs = jobs if name == "pool" else pool_jobs
    return out, pool_jobs


def print_breakdown(seed, sizes, vcs, burst, pending):
    print("\nseed %d, as generated: GPU starts in bins starting > 200 GPUs %.3f, of which ending in the same "
          "bin %.3f" % ((seed,) + burst))
    print("| size | share of jobs | avg wait (s) | share of the wait | GPUs held at a "
          "waiting job's submit | of which > 1 day left |\n|---|---:|---:|---:|---:|---:|")
    for c, v in sizes.items():
        print("| %s | %.3f | %.0f | %.3f | %.3f | %.3f |" % ((c,) + v))
    print("| VC | GPUs | jobs | offered load | avg wait (s) |\n|---|---:|---:|---:|---:|")
    for v, (g, n, load, w) in sorted(vcs.items(), key=lambda x: -x[1][0]):
        print("| %s | %d | %d | %.3f | %.0f |" % (v, g, n, load, w))
    print("| utilisation | share of time (VCs / one pool / closed loop) | mean pending jobs | median pending GPUs |\n"
          "|---|---|---|---|")
    for k in sorted(set().union(*pending)):
        v = [p.get(k, (0, 0, 0)) for p in pending]
        print("| %d-%d %% | %s | %s | %s |" % (10 * k, 10 * k + 10, " / ".join("%.3f" % x[0] for x in v),
                                            " / ".join("%.1f" % x[1] for x in v), " / ".join("%d" % x[2] for x in v)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--orrery", default="build/orrery")
    ap.add_argument("--preset", default="helios-venus")
    ap.add_argument("--seeds", default="1-3")
    ap.add_argument("--load", default="1.0")
    ap.add_argument("--generate-flags", default="", help="extra orrery generate options (one string)")
    ap.add_argument("--closed", default="closed-loop", help="arrival model of the closed-loop column "
                    "(closed-loop or closed-loop-nodes)")
    a = ap.parse_args()
    flags = a.generate_flags.split()
    lo, _, hi = a.seeds.partition("-")
    vcs = vc_gpus(a.preset)
    if a.preset == "helios-venus":
        real_venus()
    print("\n| seed | as generated | walltime = run time | walltime = 30 d | one pool | fluid (1-GPU pieces) | "
          "closed-loop arrivals | closed loop, fluid | zero-wait running GPUs: mean / detrended sd (hour-of-week part / rest) | E[g^2 d]/E[g d] |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    breakdowns = []
    with tempfile.TemporaryDirectory() as d:
        write_cluster(os.path.join(d, "vcs.toml"), vcs)
        write_cluster(os.path.join(d, "pool.toml"), {"default": sum(vcs.values())})
        for seed in range(int(lo), int(hi or lo) + 1):
            base, closed = os.path.join(d, "base.csv"), os.path.join(d, "closed.csv")
            head, rows = generate(a.orrery, a.preset, seed, a.load, "open-loop", base, flags)
            q0, jobs = simulate(a.orrery, base, os.path.join(d, "vcs.toml"), os.path.join(d, "o0"))
            _, closed_rows = generate(a.orrery, a.preset, seed, a.load, a.closed, closed, flags)
            qc, closed_jobs = simulate(a.orrery, closed, os.path.join(d, "vcs.toml"), os.path.join(d, "oc"))
            cap = sum(vcs.values())
            others, pool_jobs = counterfactuals(a.orrery, d, head, rows)
            closed_fluid = os.path.join(d, "closed_fluid.csv")
            write_rows(closed_fluid, head, fluid(closed_rows))
            qcf, _ = simulate(a.orrery, closed_fluid, os.path.join(d, "vcs.toml"), os.path.join(d, "ocf"))
            out = [q0] + others + [qc, qcf]
            breakdowns.append((seed, where_and_behind(rows, jobs), per_vc(rows, jobs, vcs),
                               burst_share(*simulated_bins(rows, jobs)),
                               [pending_by_util(rows, jobs, cap), pending_by_util(rows, pool_jobs, cap),
                                pending_by_util(closed_rows, closed_jobs, cap)]))
            mean, sd, how, rest, gw = zero_wait(rows)
            print("| %d | %s | %.0f / %.0f (%.0f / %.0f) | %.1f |" % (seed, " | ".join("%.0f" % q for q in out), mean,
                                                                    sd, how, rest, gw), flush=True)
    for b in breakdowns:
        print_breakdown(*b)


if __name__ == "__main__":
    main()
