"""Orrery from Python: traces, clusters, simulations with pandas results, and scheduling
policies written in Python (docs/python.md).

    import orrery
    trace = orrery.generate("helios-venus", days=2, seed=1)
    runs = orrery.simulate(trace, orrery.Cluster.default(), policies=["fifo", "sjf"])
    runs["fifo"].jobs.head()
"""
import json
import os

import numpy as np
import pandas as pd

from . import _orrery
from ._orrery import Cluster, JobView, OrreryError, Trace, diagnose, plan, progress

__all__ = ["Cluster", "JobView", "OrreryError", "Policy", "Preempt", "Results", "Run", "Start", "Trace", "diagnose", "generate",
           "inspect", "load_trace", "plan", "progress", "simulate"]

def _plan_search(model="gpt-neo-2.7b", pool="", global_batch=0, objective="throughput", max_cost=0.0,
                 min_throughput=0.0, exhaustive=False):
    """The best parallel plan for training ``model`` on a pool of GPUs described by Sailor's
    published profiles, as ``orrery plan search --json`` gives it (docs/design/planner.md):
    ``pool`` reads ``"sailor:A100-40=16,V100-16=32"`` (``TYPE=COUNT[@ZONE]``); ``objective`` is
    ``"throughput"`` or ``"cost"``, with an optional budget (``max_cost``, $ per iteration) and
    floor (``min_throughput``, iterations per second). Returns a dict: pp, dp, micro_batch,
    num_micro, iter_s, iters_per_s, cost_per_iter, gpus_used, stages (gpu, zone, tp, layers,
    peak_gib), evaluated, search_s. A bad pool or model raises OrreryError with the CLI's message."""
    return json.loads(plan.search_json(model, pool, int(global_batch), objective, float(max_cost),
                                       float(min_throughput), bool(exhaustive)))


plan.search = _plan_search

# The canonical trace's columns (docs/formats/trace.md); a DataFrame needs the first three.
_REQUIRED = ("submit", "duration", "gpus")
_COLUMNS = ("id", "source_id", "user", "vc", "name", "submit", "duration", "walltime", "start", "end", "gpus",
            "gpu_milli", "gpu_types", "nodes", "cpu_milli", "mem_mib", "state")
_INT_COLUMNS = ("submit", "duration", "walltime", "start", "end", "gpus", "gpu_milli", "nodes", "cpu_milli",
                "mem_mib")
_DEFAULTS = {"gpu_milli": 1000, "nodes": 0, "cpu_milli": 0, "mem_mib": 0, "state": "UNKNOWN"}


class Policy:
    """A scheduling policy written in Python: the order of each virtual cluster's queue and,
    optionally, admission, placement and whole decisions.

    Override ``priority(job, now)``: it is called once each time a job enters the queue (at
    submit, and again after a preemption or a requeue) and returns a number, or a pair of
    numbers compared in turn; the smallest runs first, and jobs of equal priority keep their
    submission order, as in the built-in policies. ``job`` is a :class:`JobView`: what a live
    scheduler knows of the job, never its true duration.

    Optional methods (a policy that does not define one costs nothing for it):
      ``admit(job, cluster)``: at submission; True or None admits, False or a reason string
      refuses the job for good (it is reported rejected). ``cluster`` is a ClusterView of the
      job's virtual cluster (``vc``, ``vc_gpus``, ``vc_free_gpus``, ``vc_nodes``,
      ``max_node_gpus``, ``gpus``).
      ``place(job, free_nodes)``: where a whole-GPU job runs. ``free_nodes`` is
      ``{node id: free GPUs}`` of its virtual cluster; return ``{node id: GPUs}`` summing to
      ``job.gpus``, or None when it should wait. Fractional and CPU-only jobs go to the run's
      placer.
      ``cycle(view)``: the decisions of one virtual cluster at one decision time, in place of
      the queue walk: a list of :class:`Start` and :class:`Preempt`, applied in order. ``view``
      (a CycleView) shows ``now``, ``vc``, ``total_gpus``, ``free_gpus``, ``free_nodes``,
      ``pending`` (queue order), ``running`` (by start time) and ``wake(t)``, which asks for
      another cycle at time t. A start needs the job's GPUs free (after the preemptions before
      it); when the placer finds no nodes for it all the same (fragmentation) the job stays
      pending. Starting a running job, preempting a pending one, naming a job twice or a job
      that is neither pending nor running in the virtual cluster ends the run with an
      OrreryError, as an exception does.

    Class attributes:
      ``estimator``: a duration estimator spec ("walltime", "oracle", "user-stats", ...;
      docs/policies.md) whose estimate ``job.estimate`` shows; "" (default) for none.
      ``blocking``: True (default) stops each queue walk at the first job that does not fit
      (head-of-line blocking, like fifo and sjf); False lets later jobs start around it.
      ``interval``: seconds between decisions (0, the default: at every arrival and completion).
      ``restart_overhead``: what a preemption costs the preempted job, "helios" (default: 7 s
      for 1 GPU, 30 s up to 8, 60 s above) or "lucid" (40 s up to 8 GPUs, 60 s above).
      ``name``: the policy's name in the results (default: the class name).
    """

    estimator = ""
    blocking = True
    interval = 0
    restart_overhead = "helios"
    name = None

    def priority(self, job, now):
        """Queue order of ``job`` at time ``now`` (s): smaller first. Default: submit time."""
        return job.submit


class Start:
    """A decision of ``Policy.cycle``: start pending ``job`` (a JobView of the cycle's view, or a
    job id) on the GPUs the placer (or the policy's ``place``) chooses."""

    __slots__ = ("job",)

    def __init__(self, job):
        self.job = job

    def __repr__(self):
        return f"Start({self.job!r})"


class Preempt:
    """A decision of ``Policy.cycle``: stop running ``job`` (a JobView or a job id) and queue it
    again; it keeps the service it received and pays the policy's restart overhead."""

    __slots__ = ("job",)

    def __init__(self, job):
        self.job = job

    def __repr__(self):
        return f"Preempt({self.job!r})"


def _int_column(df, col, n):
    if col not in df.columns:
        return pd.array([_DEFAULTS.get(col)] * n if col in _DEFAULTS else [pd.NA] * n, dtype="Int64")
    values = pd.to_numeric(df[col], errors="coerce")
    bad = values.notna() & (values != np.floor(values))
    if bad.any() or (values.isna() & df[col].notna()).any():
        row = int(np.argmax((bad | (values.isna() & df[col].notna())).to_numpy()))
        raise OrreryError(f"DataFrame column {col!r}, row {row}: expected a whole number, got {df[col].iloc[row]!r}")
    if col in _REQUIRED and values.isna().any():
        raise OrreryError(f"DataFrame column {col!r}, row {int(np.argmax(values.isna().to_numpy()))}: empty")
    return values.astype("Int64")


def _trace_from_frame(df, name):
    missing = [c for c in _REQUIRED if c not in df.columns]
    if missing:
        raise OrreryError(f"DataFrame has no column {missing[0]!r} (required: {', '.join(_REQUIRED)}; "
                          "docs/formats/trace.md)")
    df = df.reset_index(drop=True)
    n = len(df)
    out = pd.DataFrame({"id": np.arange(n)})
    for col in _COLUMNS[1:]:
        if col in _INT_COLUMNS:
            out[col] = _int_column(df, col, n)
        elif col in df.columns:
            out[col] = df[col].astype(object).where(df[col].notna(), "")
        else:
            out[col] = _DEFAULTS.get(col, "")
    out = out.sort_values("submit", kind="stable").reset_index(drop=True)
    out["id"] = np.arange(n)
    text = "#orrery-trace v1\n#origin=python\n#epoch_unix=\n" + out.to_csv(index=False, na_rep="", lineterminator="\n")
    return _orrery.trace_from_canonical(text, name)


def load_trace(source, format="auto"):
    """A trace from a file (any format ``orrery import`` reads; ``format`` "auto" detects it)
    or from a DataFrame with the canonical trace's columns (docs/formats/trace.md; ``submit``,
    ``duration`` and ``gpus`` required, the others optional). A DataFrame's rows are ordered by
    submit time (stable); ``job_id`` in the results is the row's index in that order."""
    if isinstance(source, pd.DataFrame):
        return _trace_from_frame(source, "<DataFrame>")
    return _orrery.load_trace_file(os.fspath(source), format)


def generate(preset="helios-venus", days=None, jobs=None, load=None, seed=1):
    """A synthetic trace of a preset (``orrery generate --preset``): ``days`` or ``jobs`` sets
    its size, ``load`` its offered load; the same seed gives the same trace."""
    return _orrery.generate(preset, days=days or 0.0, jobs=jobs or 0, load=load or 0.0, seed=seed)


def _toml_value(v):
    return f'"{v}"' if isinstance(v, str) else str(int(v))


def _cluster_from_frame(nodes, name="python"):
    """A cluster from a DataFrame of nodes: one row per node or node group, with columns
    ``vc`` and ``gpus`` (required), ``count`` (nodes in the row, default 1), ``gpu_type``,
    ``cpu_milli`` and ``mem_mib`` (optional): each row is a ``[[node_group]]`` of
    docs/formats/cluster.md."""
    missing = [c for c in ("vc", "gpus") if c not in nodes.columns]
    if missing:
        raise OrreryError(f"nodes DataFrame has no column {missing[0]!r} (required: vc, gpus; "
                          "optional: count, gpu_type, cpu_milli, mem_mib)")
    lines = [f"name = {_toml_value(str(name))}"]
    for row in nodes.itertuples(index=False):
        r = row._asdict()
        lines.append("[[node_group]]")
        lines.append(f"count = {_toml_value(r.get('count', 1))}")
        for key in ("vc", "gpus", "gpu_type", "cpu_milli", "mem_mib"):
            if key in r and not pd.isna(r[key]):
                lines.append(f"{key} = {_toml_value(str(r[key]) if key in ('vc', 'gpu_type') else r[key])}")
    return Cluster.from_toml_text("\n".join(lines) + "\n", "<nodes DataFrame>")


Cluster.from_frame = staticmethod(_cluster_from_frame)


def inspect(files):
    """The launch schema of each launch script or config (`orrery inspect --json`, no LLM
    backend; docs/formats/inspect.md): ``files`` is a path, a list of paths, or a dict of
    name → text. One dict per file, in order; a file that references another of them
    (``--deepspeed ds_config.json``) has its settings merged in."""
    if isinstance(files, dict):
        pairs = [(str(k), v) for k, v in files.items()]
    else:
        paths = [files] if isinstance(files, (str, os.PathLike)) else list(files)
        pairs = []
        for p in paths:
            with open(p, encoding="utf-8", errors="replace") as f:
                pairs.append((os.fspath(p), f.read()))
    return [json.loads(t) for t in _orrery.inspect_texts(pairs)]


class Run:
    """One policy's run: ``jobs``, ``attempts`` and ``timeseries`` DataFrames with the columns of
    jobs.csv, attempts.csv and timeseries.csv (docs/formats/sim-output.md, attempts.md; empty
    fields are NaN or None) and ``summary``, the run's summary.json entry as a dict."""

    def __init__(self, raw):
        self.policy = raw["policy"]
        self.summary = json.loads(raw["summary"])
        self._raw = raw
        self._frames = {}

    def _frame(self, key):
        if key not in self._frames:
            self._frames[key] = pd.DataFrame(self._raw[key])
        return self._frames[key]

    @property
    def jobs(self):
        return self._frame("jobs")

    @property
    def attempts(self):
        return self._frame("attempts")

    @property
    def timeseries(self):
        return self._frame("timeseries")

    def __repr__(self):
        return f"Run({self.policy!r}, {len(self._raw['jobs']['job_id'])} jobs)"


class Results:
    """The runs of one simulate() call, in policy order: index by position or policy name. With
    one policy, ``jobs``, ``attempts``, ``timeseries`` and ``summary`` are that run's."""

    def __init__(self, runs):
        self.runs = runs

    def __len__(self):
        return len(self.runs)

    def __iter__(self):
        return iter(self.runs)

    def __getitem__(self, key):
        if isinstance(key, str):
            for r in self.runs:
                if r.policy == key:
                    return r
            raise KeyError(f"no run of policy {key!r} (runs: {', '.join(r.policy for r in self.runs)})")
        return self.runs[key]

    def _only(self):
        if len(self.runs) != 1:
            raise ValueError(f"{len(self.runs)} runs: pick one, e.g. results[{self.runs[0].policy!r}]")
        return self.runs[0]

    jobs = property(lambda self: self._only().jobs)
    attempts = property(lambda self: self._only().attempts)
    timeseries = property(lambda self: self._only().timeseries)
    summary = property(lambda self: self._only().summary)


def simulate(trace, cluster=None, policies=("fifo",), seed=1, threads=0, placer="consolidate", sample_interval=60):
    """Simulates ``trace`` on ``cluster`` (default: the embedded Helios Venus cluster) under each
    policy: a built-in spec ("fifo", "tiresias:preset=lucid", ...; docs/policies.md), a Python
    policy "py:module.Class", or a :class:`Policy` instance. Runs use up to ``threads`` cores
    (0 = all); the same inputs and seed give the same results. Raises OrreryError with the
    CLI's message on bad input, and when a Python policy raises (the message names the job,
    the exception and where it was raised)."""
    if isinstance(trace, pd.DataFrame):
        trace = load_trace(trace)
    if cluster is None:
        cluster = Cluster.default()
    if isinstance(policies, (str, Policy)):
        policies = [policies]
    raw = _orrery.simulate(trace, cluster, list(policies), seed=seed, threads=threads, placer=placer,
                           sample_interval=sample_interval)
    return Results([Run(r) for r in raw])
