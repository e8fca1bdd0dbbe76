"""The orrery Python module against the CLI and the built-in policies (docs/python.md)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import orrery  # noqa: E402
import reference_policies as rp  # noqa: E402

SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.environ.get("ORRERY_SHARED_DIR", os.path.join(SOURCE, "..", "shared"))
PHILLY = os.path.join(SHARED, "traces/philly-pollux/philly.part-A.submit-before-2017-11-01.csv")
PHILLY_TOML = os.path.join(SOURCE, "configs/philly.toml")
BINARY = os.environ.get("ORRERY_BINARY", os.path.join(SOURCE, "build/orrery"))


def run_cli(*args, env=None):
    return subprocess.run([BINARY, *args], capture_output=True, text=True, env=env)


def env_with_reference_policies():
    """The environment with this folder on PYTHONPATH, so that `py:reference_policies.X` imports."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.dirname(os.path.abspath(__file__)),
                                                        os.environ.get("PYTHONPATH", "")]))


@unittest.skipUnless(os.path.exists(PHILLY), "../shared traces absent")
class PhillyPartA(unittest.TestCase):
    """Python orders give job for job the built-in policies' results on Philly part A."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.canonical = os.path.join(cls.tmp.name, "philly-a.csv")
        r = run_cli("import", "--from", "philly", PHILLY, "--out", cls.canonical)
        assert r.returncode == 0, r.stderr
        cls.trace = orrery.load_trace(cls.canonical)
        cls.cluster = orrery.Cluster.from_toml(PHILLY_TOML)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assertSameRuns(self, a, b):
        pd.testing.assert_frame_equal(a.jobs, b.jobs)
        pd.testing.assert_frame_equal(a.attempts, b.attempts)
        pd.testing.assert_frame_equal(a.timeseries, b.timeseries)
        sa, sb = dict(a.summary), dict(b.summary)
        for s in (sa, sb):
            s.pop("policy")
        self.assertEqual(sa, sb)

    def test_trace_and_cluster(self):
        self.assertEqual(len(self.trace), 52849)
        self.assertEqual(self.trace.origin, "philly")
        self.assertEqual(self.cluster.name, "philly")

    def test_fifo_and_sjf_match_the_built_in_policies(self):
        runs = orrery.simulate(self.trace, self.cluster, ["fifo", rp.Fifo(), "sjf", rp.Sjf()], threads=2)
        self.assertEqual([r.policy for r in runs], ["fifo", "py:Fifo", "sjf", "py:Sjf"])
        self.assertSameRuns(runs[0], runs[1])
        self.assertSameRuns(runs[2], runs[3])
        # The two orders differ, so the comparison above can tell them apart.
        self.assertFalse(runs[0].jobs["start"].equals(runs[2].jobs["start"]))
        self.assertEqual(int((runs[1].jobs["status"] == "finished").sum()), 52841)

    def test_two_queue_las_without_preemption_is_fifo(self):
        # A queue order alone preempts nothing, so a pending job never has attained service
        # (unless preempted before): every job stays in the first queue, and the order is FIFO.
        runs = orrery.simulate(self.trace, self.cluster, ["fifo", rp.TwoQueueLas()], threads=2)
        self.assertSameRuns(runs[0], runs[1])

    def test_las_cycle_matches_tiresias(self):
        # Python cycles that walk running and pending jobs together and preempt give the
        # built-in tiresias job for job: Lucid's two-queue setting (decisions every 60 s) and
        # the default three queues (decisions at events, wake-ups at threshold crossings).
        runs = orrery.simulate(self.trace, self.cluster, ["tiresias:preset=lucid", rp.Las(), "tiresias",
                                                          rp.ThreeQueueLas()], threads=2)
        self.assertEqual([r.policy for r in runs], ["tiresias:preset=lucid", "py:Las", "tiresias", "py:ThreeQueueLas"])
        self.assertSameRuns(runs[0], runs[1])
        self.assertSameRuns(runs[2], runs[3])
        # Both preempt, and differently: the comparisons can tell the settings apart.
        self.assertEqual(int(runs[1].jobs["preemptions"].sum()), 178)
        self.assertEqual(int(runs[3].jobs["preemptions"].sum()), 959)
        self.assertFalse(runs[1].jobs["end"].equals(runs[3].jobs["end"]))

    def test_frames_equal_the_cli_outputs(self):
        out = os.path.join(self.tmp.name, "cli")
        r = run_cli("simulate", self.canonical, "--cluster", PHILLY_TOML, "--policy", "sjf", "-q", "--out-dir", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        run = orrery.simulate(self.trace, self.cluster, "sjf")
        for name, frame in (("jobs", run.jobs), ("attempts", run.attempts), ("timeseries", run.timeseries)):
            csv = pd.read_csv(os.path.join(out, "sjf", name + ".csv"), keep_default_na=False, na_values=[""],
                              float_precision="round_trip")
            mine = frame.copy()
            for col in mine.columns:
                if mine[col].dtype == object:
                    mine[col] = mine[col].astype(object).where(mine[col].notna(), np.nan)
                    if csv[col].dtype != object:
                        csv[col] = csv[col].astype(object)
            pd.testing.assert_frame_equal(mine, csv, check_dtype=False, obj=name)

    def test_cli_runs_a_python_policy(self):
        out = os.path.join(self.tmp.name, "cli-py")
        env = env_with_reference_policies()
        r = run_cli("simulate", self.canonical, "--cluster", PHILLY_TOML, "--policy", "sjf,py:reference_policies.Sjf",
                    "-q", "--out-dir", out, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(out, "sjf", "jobs.csv"), "rb") as a, \
                open(os.path.join(out, "py_reference_policiesSjf", "jobs.csv"), "rb") as b:
            self.assertEqual(a.read(), b.read())

    def test_cli_runs_a_python_cycle(self):
        out = os.path.join(self.tmp.name, "cli-las")
        env = env_with_reference_policies()
        r = run_cli("simulate", self.canonical, "--cluster", PHILLY_TOML, "--policy",
                    "tiresias:preset=lucid,py:reference_policies.Las", "-q", "--out-dir", out, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        for name in ("jobs.csv", "attempts.csv"):
            with open(os.path.join(out, "tiresias_preset_lucid", name), "rb") as a, \
                    open(os.path.join(out, "py_reference_policiesLas", name), "rb") as b:
                self.assertEqual(a.read(), b.read(), name)

    def test_cli_reports_a_bad_decision(self):
        env = env_with_reference_policies()
        r = run_cli("simulate", self.canonical, "--cluster", PHILLY_TOML, "--policy", "py:reference_policies.StartTwice",
                    "--no-output", "-q", env=env)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("policy py:reference_policies.StartTwice: cycle(VC ", r.stderr)
        self.assertIn(": decision 1, Start(job 0): the job was already decided on in this cycle", r.stderr)
        self.assertIn("reference_policies.py:", r.stderr)

    def test_cli_reports_a_raising_policy(self):
        env = env_with_reference_policies()
        r = run_cli("simulate", self.canonical, "--cluster", PHILLY_TOML, "--policy", "fifo,py:reference_policies.Raises",
                    "--no-output", "-q", env=env)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("policy py:reference_policies.Raises: priority(job 2) raised ZeroDivisionError: division by zero "
                      "(at ", r.stderr)


class Quickstart(unittest.TestCase):
    def test_docs_quickstart_runs(self):
        with open(os.path.join(SOURCE, "docs/python.md")) as f:
            doc = f.read()
        code = doc.split("## Quickstart", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertEqual([line.split()[0] for line in lines[:3]], ["fifo", "sjf", "py:SmallFirst"])
        # The queue is loaded: shortest-first and fewest-GPUs-first wait less than FIFO.
        waits = [float(line.split()[1]) for line in lines[:3]]
        self.assertLess(waits[1], waits[0])
        self.assertLess(waits[2], waits[0])


    def test_docs_cycle_example_runs(self):
        with open(os.path.join(SOURCE, "docs/python.md")) as f:
            doc = f.read()
        section = doc.split("### Admission, placement and whole decisions", 1)[1]
        code = section.split("```python\n", 1)[1].split("```", 1)[0]
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        # The numbers the text after the example gives.
        self.assertEqual(r.stdout.splitlines(), ["fifo 6992.9 0", "py:Backfill 5530.6 75"])
        self.assertIn("It prints `fifo 6992.9 0` and `py:Backfill 5530.6 75`", section)


class Plan(unittest.TestCase):
    def test_inference_step_equals_the_cli(self):
        r = run_cli("plan", "estimate", "--phase", "decode", "--model", "qwen2.5-32b", "--batch", "64", "--context",
                    "8192", "--tp", "4", "--gpu", "h100", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        cli = json.loads(r.stdout)
        mine = orrery.plan.estimate("qwen2.5-32b", "decode", batch=64, context=8192, tp=4, gpu="h100")
        self.assertEqual(mine["step_time_s"], cli["step_time_s"])
        self.assertEqual(mine["max_batch"], cli["max_batch"])
        self.assertEqual(mine["gemm_s"], cli["breakdown"]["gemm_s"])
        self.assertTrue(mine["fits"])
        with self.assertRaisesRegex(orrery.OrreryError, "nosuch"):
            orrery.plan.estimate("nosuch-7b")

    def test_plan_search_equals_the_cli(self):
        # Sailor's profiles under ../shared: the same best plan as `orrery plan search --json`,
        # whatever the search's own wall time.
        pool = "sailor:A100-40=16,V100-16=32"
        r = run_cli("plan", "search", "--model", "opt-350m", "--pool", pool, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        cli = json.loads(r.stdout)
        mine = orrery.plan.search("opt-350m", pool)
        for key in ("model", "global_batch", "pp", "dp", "micro_batch", "num_micro", "iter_s", "cost_per_iter",
                    "gpus_used", "stages", "evaluated"):
            self.assertEqual(mine[key], cli[key], key)
        self.assertEqual(mine["model"], "opt-350m")
        self.assertLessEqual(mine["gpus_used"], 48)
        cheap = orrery.plan.search("opt-350m", pool, objective="cost")
        self.assertLessEqual(cheap["cost_per_iter"], mine["cost_per_iter"])
        with self.assertRaisesRegex(orrery.OrreryError, "TYPE=COUNT"):
            orrery.plan.search("opt-350m", "sailor:A100-40")
        with self.assertRaisesRegex(orrery.OrreryError, "--model"):
            orrery.plan.search("nosuch-7b", pool)


class Diagnose(unittest.TestCase):
    def test_log_text_equals_the_cli(self):
        log = os.path.join(SOURCE, "tests/fixtures/logs/nccl-ib-failure.log")
        r = run_cli("diagnose", log, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        cli = json.loads(r.stdout)
        with open(log) as f:
            mine = orrery.diagnose(f.read())
        self.assertEqual({k: mine[k] for k in cli}, cli)
        self.assertEqual((mine["category"], mine["subtype"], mine["suspect_node"]),
                         ("infrastructure", "network_ib", "gpu-node-07"))

    def test_progress_equals_the_cli(self):
        log = os.path.join(SOURCE, "tests/fixtures/logs/megatron-train.log")
        r = run_cli("progress", log, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        cli = json.loads(r.stdout)
        with open(log) as f:
            mine = orrery.progress(f.read())
        self.assertEqual({k: mine[k] for k in cli}, cli)
        self.assertEqual((mine["framework"], mine["step"], mine["total_steps"]), ("megatron-lm", 500, 500000))


class Inspect(unittest.TestCase):
    def test_launch_script_equals_the_cli(self):
        script = os.path.join(SOURCE, "tests/fixtures/inspect/run_qwen2-7b.sh")
        r = run_cli("inspect", script, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        cli = json.loads(r.stdout.splitlines()[0])
        self.assertEqual(orrery.inspect(script), [cli])
        with open(script) as f:
            self.assertEqual(orrery.inspect({script: f.read()}), [cli])


class BadInput(unittest.TestCase):
    def setUp(self):
        self.frame = pd.DataFrame({"submit": [0, 10, 20], "duration": [100, 50, 10], "gpus": [4, 2, 2],
                                   "user": ["a", "b", "a"], "vc": "a"})
        self.cluster = orrery.Cluster.from_toml(os.path.join(SOURCE, "tests/fixtures/explain/one-node.toml"))

    def test_frame_trace_simulates(self):
        # One 4-GPU node: job 0 holds it until 100, then jobs 1 and 2 share it (FIFO, blocking).
        run = orrery.simulate(self.frame, self.cluster, "fifo")
        self.assertEqual(list(run.jobs["run"]), [100, 50, 10])
        self.assertEqual(list(run.jobs["start"]), [0, 100, 100])
        self.assertEqual(list(run.jobs["vc"]), ["a", "a", "a"])
        # Shortest first with the oracle estimator: the same here (jobs 1 and 2 fit together).
        self.assertEqual(list(orrery.simulate(self.frame, self.cluster, rp.Sjf()).jobs["end"]), [100, 150, 110])

    def test_cluster_from_nodes_frame(self):
        nodes = pd.DataFrame({"vc": ["a", "a", "b"], "gpus": [4, 8, 2], "count": [2, 1, 3]})
        cluster = orrery.Cluster.from_frame(nodes, name="tiny")
        self.assertEqual((cluster.name, cluster.nodes, cluster.gpus), ("tiny", 6, 22))
        # The 8-GPU job fits only VC a's 8-GPU node.
        run = orrery.simulate(self.frame.assign(gpus=[8, 2, 2]), cluster, "fifo")
        self.assertEqual(list(run.jobs["status"]), ["finished"] * 3)
        self.assertEqual(list(run.jobs["start"]), [0, 10, 20])
        with self.assertRaisesRegex(orrery.OrreryError, "no column 'gpus'"):
            orrery.Cluster.from_frame(nodes.drop(columns=["gpus"]))

    def test_frame_without_a_required_column(self):
        with self.assertRaisesRegex(orrery.OrreryError, "no column 'gpus'"):
            orrery.load_trace(self.frame.drop(columns=["gpus"]))

    def test_frame_with_fractional_seconds(self):
        with self.assertRaisesRegex(orrery.OrreryError, "column 'duration', row 1: expected a whole number"):
            orrery.load_trace(self.frame.assign(duration=[100, 50.5, 10]))

    def test_policy_that_raises(self):
        with self.assertRaises(orrery.OrreryError) as cm:
            orrery.simulate(self.frame, self.cluster, rp.Raises())
        msg = str(cm.exception)
        self.assertIn("policy py:Raises", msg)
        self.assertIn("raised ZeroDivisionError: division by zero", msg)
        self.assertIn("reference_policies.py:", msg)

    def test_policy_that_returns_no_number(self):
        with self.assertRaisesRegex(orrery.OrreryError, r"returned 'soon': expected a number"):
            orrery.simulate(self.frame, self.cluster, rp.NotANumber())

    def test_cycle_preempts_at_a_threshold(self):
        # Job 0 (4 GPUs) runs from 0 and reaches 100 GPU-s at t=25: job 1 (2 GPUs, waiting in
        # the first queue since 10) preempts it and runs 25-75, with job 2 (2 GPUs) beside it
        # 25-35; job 0 restarts at 75 with its 75 s left plus Lucid's 40 s restart: ends at 190.
        runs = orrery.simulate(self.frame, self.cluster, [rp.SmallLas(), "tiresias:thresholds=100,protect=0"])
        jobs = runs[0].jobs
        self.assertEqual(list(jobs["start"]), [0, 25, 25])
        self.assertEqual(list(jobs["end"]), [190, 75, 35])
        self.assertEqual(list(jobs["preemptions"]), [1, 0, 0])
        pd.testing.assert_frame_equal(jobs, runs[1].jobs)

    def test_admit_refuses_with_a_reason(self):
        policy = rp.AtMostTwoGpus()
        jobs = orrery.simulate(self.frame, self.cluster, policy).jobs
        self.assertEqual(list(jobs["status"]), ["rejected", "finished", "finished"])
        self.assertEqual(jobs["reason"][0], "refused by the policy: 4 GPUs: at most 2 here")
        self.assertEqual(list(jobs["start"][1:]), [10, 20])
        self.assertEqual(policy.seen, ("a", 4, 4))

    def test_place_chooses_the_nodes(self):
        nodes = pd.DataFrame({"vc": ["a"], "gpus": [4], "count": [2]})
        cluster = orrery.Cluster.from_frame(nodes, name="two")
        frame = self.frame.assign(gpus=[2, 2, 1])
        built_in = orrery.simulate(frame, cluster, "fifo").attempts.sort_values("job_id")
        mine = orrery.simulate(frame, cluster, rp.LastNode()).attempts.sort_values("job_id")
        # consolidate fills node 0 first; LastNode takes the last node while it has room.
        self.assertEqual(list(built_in["nodes"]), ["a-0", "a-0", "a-1"])
        self.assertEqual(list(mine["nodes"]), ["a-1", "a-1", "a-0"])
        self.assertEqual(list(mine["start"]), [0, 10, 20])

    def test_bad_decisions_are_errors(self):
        where = r"^policy py:BadCycle: cycle\(VC a, t=(\d+)\) \(cycle defined at .*reference_policies.py:\d+\)"
        cases = {
            "raise": (0, r" raised ZeroDivisionError: division by zero \(at .*reference_policies.py:\d+ in cycle\)$"),
            "twice": (0, r": decision 1, Start\(job 0\): the job was already decided on in this cycle"),
            "no-fit": (10, r": decision 0, Start\(job 1\): the job needs 2 GPUs and VC a has 0 free$"),
            "preempt-pending": (0, r": decision 0, Preempt\(job 0\): the job is pending$"),
            "start-running": (10, r": decision 0, Start\(job 0\): the job is running$"),
            "unknown": (0, r": decision 0, Start\(job 99\): no such job is pending or running in VC a$"),
            "not-a-list": (0, r" returned 'start everything': expected a list of orrery.Start\(job\) and "
                              r"orrery.Preempt\(job\)$"),
            "not-a-decision": (0, r": decision 0 is \('start', JobView\(id=0, submit=0, gpus=4\)\): expected "
                                  r"orrery.Start\(job\) or orrery.Preempt\(job\)$"),
            "stale-view": (10, r": decision 0, Start\(a job view that is not one of this cycle's\): expected a job "
                               r"view of this cycle or a job id$"),
        }
        for mistake, (t, message) in cases.items():
            with self.subTest(mistake=mistake):
                with self.assertRaisesRegex(orrery.OrreryError, where.replace(r"(\d+)", str(t)) + message):
                    orrery.simulate(self.frame, self.cluster, rp.BadCycle(mistake))
        # The same policy without the mistake runs: the three jobs start in submit order.
        self.assertEqual(list(orrery.simulate(self.frame, self.cluster, rp.BadCycle("none")).jobs["start"]),
                         [0, 100, 100])

    def test_bad_admit_and_place_are_errors(self):
        class AdmitRaises(orrery.Policy):
            def admit(self, job, cluster):
                return {}[job.id + 7]

        class AdmitsMaybe(orrery.Policy):
            def admit(self, job, cluster):
                return 3

        class PlaceOn(orrery.Policy):
            def __init__(self, answer):
                self.answer = answer

            def place(self, job, free_nodes):
                return self.answer

        with self.assertRaisesRegex(orrery.OrreryError, r"^policy py:AdmitRaises: admit\(job 0\) raised KeyError: 7 "
                                                        r"\(at .*test_module.py:\d+ in admit\)$"):
            orrery.simulate(self.frame, self.cluster, AdmitRaises())
        with self.assertRaisesRegex(orrery.OrreryError, r"^policy py:AdmitsMaybe: admit\(job 0\) returned 3: expected "
                                                        r"True or None \(admit\), False or a reason string \(refuse\)$"):
            orrery.simulate(self.frame, self.cluster, AdmitsMaybe())
        for answer, why in (({5: 4}, "node 5 is not in the job's VC"), ({0: 2}, "2 GPUs in all, the job asks for 4"),
                            ({0: 8}, "8 GPUs on node 0, which has 4 free"), ("node 0", "expected")):
            with self.subTest(answer=answer):
                with self.assertRaisesRegex(orrery.OrreryError, r"^policy py:PlaceOn: place\(job 0\)"):
                    try:
                        orrery.simulate(self.frame, self.cluster, PlaceOn(answer))
                    except orrery.OrreryError as e:
                        self.assertIn(why, str(e))
                        raise
        # A right answer places: job 0 on node 0, then jobs 1 and 2 there at 100.
        ok = PlaceOn({0: 4})
        ok.place = lambda job, free: {0: job.gpus} if free.get(0, 0) >= job.gpus else None
        self.assertEqual(list(orrery.simulate(self.frame, self.cluster, ok).jobs["start"]), [0, 100, 100])

    def test_job_view_shows_the_request_and_expires(self):
        keeper = rp.Keeper()
        orrery.simulate(self.frame.assign(walltime=[200, None, 30]), self.cluster, keeper)
        self.assertEqual(keeper.seen, [(0, "a", "a", 200, None, 0, 0), (1, "b", "a", None, None, 0, 0),
                                       (2, "a", "a", 30, None, 0, 0)])
        with self.assertRaisesRegex(ValueError, "no longer valid"):
            keeper.kept.submit

    def test_unknown_policy_and_module(self):
        with self.assertRaisesRegex(orrery.OrreryError, "unknown policy 'nosuch'"):
            orrery.simulate(self.frame, self.cluster, "nosuch")
        with self.assertRaisesRegex(orrery.OrreryError, "ModuleNotFoundError"):
            orrery.simulate(self.frame, self.cluster, "py:no_such_module.Policy")

    def test_bad_cluster_file_has_the_cli_message(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.toml")
            with open(path, "w") as f:
                f.write("[cluster\nname = 1\n")
            with self.assertRaises(orrery.OrreryError) as cm:
                orrery.Cluster.from_toml(path)
            r = run_cli("simulate", "--generate", "helios-venus", "--days", "1", "--cluster", path, "--no-output")
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(path + ":1", str(cm.exception))
            self.assertIn(str(cm.exception), r.stderr)

    def test_same_seed_same_results(self):
        venus = orrery.Cluster.default()
        a = orrery.simulate(orrery.generate("helios-venus", days=1, seed=3), venus, ["fifo", rp.Fifo()])
        b = orrery.simulate(orrery.generate("helios-venus", days=1, seed=3), venus, ["fifo", rp.Fifo()],
                            threads=1)
        pd.testing.assert_frame_equal(a[1].jobs, b[1].jobs)
        pd.testing.assert_frame_equal(a[0].jobs, a[1].jobs)


if __name__ == "__main__":
    unittest.main()
