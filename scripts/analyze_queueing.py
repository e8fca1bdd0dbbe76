#!/usr/bin/env python3
"""Queueing evidence in the real Venus trace (docs/validation/workload.md).

Reads ../shared/traces/helios-aggregates/cluster_throughput.csv (10-minute counts of Venus GPU
jobs submitted/started and GPUs submitted/started/ended) and prints:
  1. the distribution of submissions per bin against a compound Poisson process with the
     hour-of-week rate and Zipf(s) batch sizes on 1..max bin, for a grid of s (the fit behind
     kVenusBatchZipf in src/workload/calibration_data.h; s = inf is plain Poisson);
  2. where the queue is: pending jobs (cumulative submitted - started, offset to min 0) by
     cluster utilisation and the share of job-waiting time in the most crowded bins;
  3. the GPU count of jobs submitted alone in their bin, and the largest bursts.
Standard library only; deterministic (random.Random(1)).

usage: scripts/analyze_queueing.py [path/to/cluster_throughput.csv]
"""
import bisect
import collections
import csv
import datetime
import math
import os
import random
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "..", "shared", "traces", "helios-aggregates", "cluster_throughput.csv")
GPUS = 1080  # vc_config.csv: 135 nodes x 8


def load(path):
    rows = list(csv.DictReader(open(path)))
    col = lambda k: [int(r[k]) for r in rows]
    how = [datetime.datetime.strptime(r["time"], "%Y-%m-%d %H:%M:%S").weekday() * 24 + int(r["time"][11:13])
           for r in rows]
    return rows, how, {k: col(k) for k in rows[0] if k != "time"}


def cumulative(a, b):
    c, out = 0, []
    for x, y in zip(a, b):
        c += x - y
        out.append(c)
    m = min(out)
    return [v - m for v in out]


def bin_stats(counts, how, rate):
    s = sorted(counts)
    n, tot = len(s), sum(counts)
    q = lambda p: s[min(n - 1, int(p * n))]
    share = lambda thr: sum(x for x in counts if x >= thr) / tot
    disp = sum((x - rate[h]) ** 2 for h, x in zip(how, counts)) / sum(rate[h] for h in how)
    return (q(.5), q(.9), q(.99), q(.999), s[-1], share(20), share(50), sum(1 for x in counts if x == 0) / n, disp)


def compound_poisson(how, rate, s, kmax, rnd):
    if math.isinf(s):
        cdf, mean_b = [1.0], 1.0
    else:
        w = [k ** -s for k in range(1, kmax + 1)]
        tot = sum(w)
        cdf = list(itertools_accumulate([x / tot for x in w]))
        mean_b = sum((k + 1) * x for k, x in enumerate(w)) / tot
    out = []
    for h in how:
        lam, t, jobs = rate[h] / mean_b, 0.0, 0
        if lam > 0:
            t = rnd.expovariate(lam)
            while t < 1:
                jobs += bisect.bisect_left(cdf, rnd.random()) + 1
                t += rnd.expovariate(lam)
        out.append(jobs)
    return mean_b, out


def itertools_accumulate(xs):
    c = 0.0
    for x in xs:
        c += x
        yield c


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT
    rows, how, c = load(path)
    sj, stj, sg, stg, eg = (c[k] for k in ("submit_gpu_job", "start_gpu_job", "submit_gpu_num", "start_gpu_num",
                                            "end_gpu_num"))
    by_how = collections.defaultdict(list)
    for h, x in zip(how, sj):
        by_how[h].append(x)
    rate = {h: statistics.mean(v) for h, v in by_how.items()}

    print("## 1. GPU-job submissions per 10-minute bin (%d bins, %d jobs)" % (len(sj), sum(sj)))
    print("| process | E[B] | p50 | p90 | p99 | p99.9 | max | jobs in bins >= 20 | >= 50 | empty bins | dispersion |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    fmt = "| %s | %s | %d | %d | %d | %d | %d | %.3f | %.3f | %.3f | %.1f |"
    print(fmt % (("real", "–") + bin_stats(sj, how, rate)))
    kmax = max(sj)
    for s in (math.inf, 3.0, 2.8, 2.7, 2.65, 2.6, 2.5, 2.2):
        mean_b, sim = compound_poisson(how, rate, s, kmax, random.Random(1))
        name = "Poisson (hour-of-week rate)" if math.isinf(s) else "sweeps Zipf s=%.2f, B<=%d" % (s, kmax)
        print(fmt % ((name, "%.2f" % mean_b) + bin_stats(sim, how, rate)))

    pend, run = cumulative(sj, stj), cumulative(stg, eg)
    pend_g = cumulative(sg, stg)
    arrivals_per_bin = sum(sj) / len(sj)
    print("\n## 2. Where the queue is (pending = cumulative submitted - started, offset to min 0)")
    print("avg wait by Little's law: %.0f s; pending jobs p50 %d, p90 %d, p99 %d, max %d; pending GPUs p50 %d"
          % (statistics.mean(pend) * 600 / arrivals_per_bin, *[sorted(pend)[int(p * len(pend))] for p in (.5, .9, .99)],
             max(pend), sorted(pend_g)[len(pend_g) // 2]))
    print("| utilisation (running GPUs / %d) | share of time | mean pending jobs | median pending GPUs |" % GPUS)
    print("|---|---:|---:|---:|")
    by_u = collections.defaultdict(list)
    for p, pg, r in zip(pend, pend_g, run):
        by_u[min(9, int(r / GPUS * 10))].append((p, pg))
    for k in sorted(by_u):
        v = by_u[k]
        print("| %d-%d %% | %.3f | %.1f | %d |" % (10 * k, 10 * k + 10, len(v) / len(pend), statistics.mean(a for a, _ in v),
                                               sorted(b for _, b in v)[len(v) // 2]))
    tot = sum(pend)
    print("| most crowded bins | share of time | share of job-waiting time |\n|---|---:|---:|")
    for thr in (10, 18, 30, 87):
        print("| pending > %d jobs | %.3f | %.3f |" % (thr, sum(1 for p in pend if p > thr) / len(pend),
                                                     sum(p for p in pend if p > thr) / tot))

    def corr(a, b):
        ma, mb = statistics.mean(a), statistics.mean(b)
        return sum((x - ma) * (y - mb) for x, y in zip(a, b)) / math.sqrt(
            sum((x - ma) ** 2 for x in a) * sum((y - mb) ** 2 for y in b))
    last_hour = [sum(sj[max(0, i - 5):i + 1]) for i in range(len(sj))]
    print("corr(pending jobs, jobs submitted in the last hour) = %.2f; corr(pending jobs, running GPUs) = %.2f"
          % (corr(pend, last_hour), corr(pend, run)))

    print("\n## 3. Sizes: jobs submitted alone in their bin, and the largest bursts")
    for k in (1, 2, 3):
        sums = [g for j, g in zip(sj, sg) if j == k]
        print("bins with %d GPU job(s): %d, GPUs per job %.2f" % (k, len(sums), sum(sums) / len(sums) / k))
    print("all bins: GPUs per job %.2f" % (sum(sg) / sum(sj)))
    alone = collections.Counter(g for j, g in zip(sj, sg) if j == 1)
    n1 = sum(alone.values())
    groups = [("1", lambda g: g == 1), ("2-4", lambda g: 2 <= g <= 4), ("5-8", lambda g: 5 <= g <= 8),
              ("9-16", lambda g: 9 <= g <= 16), ("17-32", lambda g: 17 <= g <= 32), ("33-63", lambda g: 33 <= g < 64),
              (">= 64", lambda g: g >= 64)]
    print("| GPUs (job alone in its bin) | " + " | ".join(n for n, _ in groups) + " |")
    print("|---|" + "---:|" * len(groups))
    print("| share | " + " | ".join("%.3f" % (sum(v for g, v in alone.items() if f(g)) / n1) for _, f in groups) + " |")
    print("| bin (start) | GPU jobs submitted | GPUs submitted | GPUs / job | jobs started in the bin | GPUs started |")
    print("|---|---:|---:|---:|---:|---:|")
    for i in sorted(range(len(sj)), key=lambda i: -sj[i])[:8]:
        print("| %s | %d | %d | %.1f | %d | %d |" % (rows[i]["time"], sj[i], sg[i], sg[i] / sj[i], stj[i], stg[i]))
    over = [i for i in range(len(stg)) if stg[i] > GPUS]
    print("bins starting more GPUs than the cluster has (jobs that ended within the bin): %d, %d GPU starts"
          % (len(over), sum(stg[i] for i in over)))


if __name__ == "__main__":
    main()
