#!/usr/bin/env python3
"""Real queueing delays of the Acme clusters by job type (docs/validation/workload.md "Acme").

The Acme job logs are not in ../shared (over the 4 MiB limit, PROVENANCE.md §8), but the AcmeTrace
repository (InternLM/AcmeTrace@6d6ac9c, CC BY 4.0, the source of acme-summary/cluster_summary.csv)
ships the figures its analysis.ipynb draws from them, as vector PDFs:

  figure/cdf_job_duration_queue.pdf  panels (b) Seren and (d) Kalos: for each job type, the share
      of GPU jobs with queue <= 2^k s, k = 0..15 (`calculate_num_cdf_customized_xaxis`), one
      polyline of 16 points per type, log x axis [1, 32768], y axis [-0.5, 100.8] %;
  figure/treemap_job_dist.pdf        panels (a) Seren and (c) Kalos: squarify rectangles whose
      areas are proportional to the GPU-job count of each type.

This script reads those polylines and rectangles back (stdlib only: zlib content streams), prints
the per-type CDFs and shares, the all-type CDF, bounds on each type's mean queue (each bin's mass
at its lower / upper edge; the mass above 32,768 s at 32,768 s / at --tail-s), and the start
latency that acme-kalos uses (min_s, median_s, sigma: fitted on the all-type CDF at 4, 8 and 16 s
only, a queue of k s read as a latency below k + 0.5 s).

usage: scripts/acme_queue_cdf.py QUEUE_PDF TREEMAP_PDF [--tail-s 86400]
  (e.g. after `git show 6d6ac9c:figure/cdf_job_duration_queue.pdf > q.pdf` in a clone of AcmeTrace)
"""
import argparse
import math
import re
import statistics
import sys
import zlib

TAB10 = {"Eval": (0.121569, 0.466667, 0.705882), "Pretrain": (1, 0.498039, 0.054902),
         "SFT": (0.172549, 0.627451, 0.172549), "MLLM": (0.839216, 0.152941, 0.156863),
         "Debug": (0.580392, 0.403922, 0.741176), "Other": (0.54902, 0.337255, 0.294118)}
PASTEL = {"Eval": (0.631373, 0.788235, 0.956863), "Pretrain": (1, 0.705882, 0.509804),
          "SFT": (0.552941, 0.898039, 0.631373), "MLLM": (1, 0.623529, 0.607843),
          "Debug": (0.815686, 0.733333, 1), "Other": (0.870588, 0.733333, 0.607843)}
X = [2 ** k for k in range(16)]


def content(path):
    data = open(path, "rb").read()
    best = b""
    for m in re.finditer(rb"stream\r?\n", data):
        end = data.find(b"endstream", m.end())
        try:
            z = zlib.decompress(data[m.end():end])
        except zlib.error:
            continue
        best = max(best, z, key=len)
    return best.decode("latin1").split()


def nearest(table, rgb):
    return min(table, key=lambda k: sum((a - b) ** 2 for a, b in zip(table[k], rgb or (0, 0, 0))))


def polylines(tokens):
    """(clip rect, stroke colour, points) of every stroked path, tracking q/Q state."""
    nums, pts, clip, color, stack, out, rect = [], [], None, None, [], [], None
    for w in tokens:
        try:
            nums.append(float(w))
            continue
        except ValueError:
            pass
        if w == "re":
            rect = nums[-4:]
        elif w == "W":
            clip = tuple(rect)
        elif w == "RG":
            color = tuple(nums[-3:])
        elif w == "m":
            pts = [tuple(nums[-2:])]
        elif w == "l":
            pts.append(tuple(nums[-2:]))
        elif w == "S":
            out.append((clip, color, pts))
            pts = []
        elif w == "q":
            stack.append((clip, color))
        elif w == "Q":
            clip, color = stack.pop() if stack else (None, None)
        nums = []
    return out


def queue_cdfs(path):
    """{panel y origin: {type: [F(2^k) in %]}} for the two queueing panels (16-point lines)."""
    panels = {}
    for clip, color, pts in polylines(content(path)):
        if len(pts) != 16 or clip is None:
            continue
        x0, y0, w, h = clip
        ys = [-0.5 + (p[1] - y0) / h * 101.3 for p in pts]
        panels.setdefault(y0, {})[nearest(TAB10, color)] = [min(100.0, max(0.0, y)) for y in ys]
    return [panels[k] for k in sorted(panels, reverse=True)]  # top (Seren) first


def type_shares(path):
    """[(Seren shares), (Kalos shares)]: rectangle areas of the job-count panels (left column)."""
    nums, pts, col, rects = [], [], None, []
    for w in content(path):
        try:
            nums.append(float(w))
            continue
        except ValueError:
            pass
        if w == "rg":
            col = tuple(nums[-3:])
        elif w == "m":
            pts = [tuple(nums[-2:])]
        elif w == "l":
            pts.append(tuple(nums[-2:]))
        elif w in ("f", "B", "b", "f*"):
            if len(pts) >= 4 and col is not None:
                xs, ys = [p[0] for p in pts], [p[1] for p in pts]
                rects.append((nearest(PASTEL, col), min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)))
            pts = []
        nums = []
    # The count panels are the left column (x < half the page); the legend's small patches and
    # the frame (the largest rectangle, the panel background) are dropped.
    out = []
    for lo, hi in ((150, 305), (0, 160)):  # (legend patches sit above y = 305)
        cells = [r for r in rects if r[1] < 320 and lo <= r[2] < hi and r[3] < 315 and r[3] * r[4] > 30]
        area = {}
        for name, _, _, w, h in cells:
            area[name] = area.get(name, 0) + w * h
        total = sum(area.values())
        out.append({k: v / total for k, v in area.items()})
    return out


def mean_bounds(cdf, tail_s):
    lo = hi = prev = px = 0.0
    for x, f in zip(X, cdf):
        p = (f - prev) / 100
        lo += p * px
        hi += p * x
        prev, px = f, x
    rest = (100 - prev) / 100
    return lo + rest * X[-1], hi + rest * tail_s


def fit_latency(pooled):
    """Shifted lognormal through F(4) = 0, F(8), F(16) of the all-type CDF (queue k s = latency < k + 0.5)."""
    nd = statistics.NormalDist()
    shift = 4.5
    z8, z16 = nd.inv_cdf(pooled[3] / 100), nd.inv_cdf(pooled[4] / 100)
    sigma = (math.log(16.5 - shift) - math.log(8.5 - shift)) / (z16 - z8)
    mu = math.log(16.5 - shift) - z16 * sigma
    return shift, shift + math.exp(mu), sigma


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("queue_pdf")
    ap.add_argument("treemap_pdf")
    ap.add_argument("--tail-s", type=float, default=86400, help="assumed mean of the mass above 32,768 s (upper bound)")
    a = ap.parse_args()
    for name, cdfs, shares in zip(("Seren", "Kalos"), queue_cdfs(a.queue_pdf), type_shares(a.treemap_pdf)):
        print(f"## {name}\n\n| type | share of GPU jobs | " + " | ".join(f"<= {x}" for x in X) + " | mean queue (s) |")
        print("|---|---:|" + "---:|" * len(X) + "---|")
        pooled = [0.0] * len(X)
        lo_all = hi_all = 0.0
        for t, cdf in cdfs.items():
            w = shares.get(t, 0)
            lo, hi = mean_bounds(cdf, a.tail_s)
            lo_all += w * lo
            hi_all += w * hi
            pooled = [p + w * f for p, f in zip(pooled, cdf)]
            print(f"| {t} | {w:.3f} | " + " | ".join(f"{f:.1f}" for f in cdf) + f" | {lo:,.0f} … {hi:,.0f} |")
        print(f"| all | 1 | " + " | ".join(f"{f:.1f}" for f in pooled) + f" | {lo_all:,.0f} … {hi_all:,.0f} |\n")
        if name == "Kalos":
            m, med, s = fit_latency(pooled)
            print(f"start latency fitted on F(4), F(8), F(16): min_s = {m}, median_s = {med:.2f}, sigma = {s:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
