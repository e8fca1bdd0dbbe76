"""Python policies on the 1M-job scale run (docs/benchmarks.md, "Python policies"): a
priority-only Python policy against the built-in fifo, through the module.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_policy_bench.py [JOBS]
"""
import os
import sys
import time

import orrery

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


class SubmitOrder(orrery.Policy):
    """FIFO written in Python: one call per queue entry."""

    def priority(self, job, now):
        return job.submit


def main():
    jobs = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    trace = orrery.generate("scale", jobs=jobs, seed=1)
    cluster = orrery.Cluster.from_toml(os.path.join(SOURCE, "configs/scale-1024x8.toml"))
    for policy in ("fifo", SubmitOrder()):
        t0 = time.perf_counter()
        runs = orrery.simulate(trace, cluster, policy, threads=1)
        wall = time.perf_counter() - t0
        name = runs[0].policy
        finished = int((runs[0].jobs["status"] == "finished").sum())
        print(f"{name}: {len(trace)} jobs ({finished} finished) in {wall:.2f} s = {len(trace) / wall:,.0f} jobs/s")


if __name__ == "__main__":
    main()
