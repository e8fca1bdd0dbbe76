"""CPU tests of the profiler (Debian's python3-torch; seconds): the model matches the planner's
parameter formula, the tables have the documented fields, a training step is measured, the
collectives run over gloo with two processes, and the profile file is what `orrery plan` reads."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import bench  # noqa: E402
import gemm_sustained  # noqa: E402
import gpt  # noqa: E402
import host  # noqa: E402
import host_sweep  # noqa: E402
import infer  # noqa: E402
import steps  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CPU = torch.device("cpu")


class ModelTest(unittest.TestCase):
    def test_parameter_count_is_the_workload_formula(self):
        h, L, heads = gpt.MODELS["tiny"]
        m = gpt.GPT(h, L, heads)
        # L(12h^2 + 4h) + 2Vh + 2h = 2(12*4096 + 256) + 2*32000*64 + 128 = 4,194,944
        self.assertEqual(sum(p.numel() for p in m.parameters()), gpt.n_total(h, L))
        self.assertEqual(gpt.n_total(h, L), 4194944)

    def test_checkpointed_block_gives_the_same_gradients(self):
        torch.manual_seed(0)
        a, b = gpt.Block(32, 4), gpt.Block(32, 4, ckpt=True)
        b.load_state_dict(a.state_dict())
        x = torch.randn(2, 8, 32, requires_grad=True)
        a(x).sum().backward()
        ga = x.grad.clone()
        x.grad = None
        b(x).sum().backward()
        self.assertTrue(torch.allclose(ga, x.grad, atol=1e-5))


class TablesTest(unittest.TestCase):
    def test_gemm_rows_cover_fwd_wgrad_dgrad(self):
        rows = bench.gemm_table(CPU, (16,), (8,), budget_s=0.0005, vocab=32)
        self.assertEqual(len(rows), 15)  # 5 GEMMs x 3 layouts
        self.assertEqual({r["op"] for r in rows}, {"fwd", "wgrad", "dgrad"})
        fwd_qkv = rows[0]
        self.assertEqual((fwd_qkv["m"], fwd_qkv["k"], fwd_qkv["n"]), (8, 16, 48))
        self.assertTrue(all(r["t_s"] > 0 for r in rows))

    def test_sdpa_and_layer_profile(self):
        (row,) = bench.sdpa_table(CPU, [(1, 2, 16, 8)], budget_s=0.001)
        self.assertGreaterEqual(row["t_fwdbwd_s"], row["t_fwd_s"])
        lp = bench.layer_profile(CPU, 32, 4, 1, 16, iters=2)
        self.assertGreater(lp["fwd_s"], 0)


class StepTest(unittest.TestCase):
    def test_single_step_record_is_a_calibration_row(self):
        rec = steps.measure("single", "tiny", 16, 1, False, CPU, timed=2, warmup=1)
        self.assertEqual(rec["id"], "single|tiny|s16|b1|ck0")
        line = steps.csv_line(rec)
        self.assertEqual(len(line.split(",")), len(steps.CSV_COLUMNS))


class SustainedTest(unittest.TestCase):
    def test_apply_takes_the_mean_of_the_runs_for_rows_of_a_millisecond_or_more(self):
        shape = {"b": 1, "heads": 2, "s": 64, "head_dim": 16}
        long_row, short_row = dict(shape, t_fwd_s=1e-3, t_fwdbwd_s=3e-3), dict(shape, s=32, t_fwd_s=1e-4, t_fwdbwd_s=5e-4)
        profile = {"gpu": "X", "sdpa": [long_row, short_row]}
        runs = [{"sdpa": [dict(shape, sustained_fwd_s=1.1e-3, sustained_fwdbwd_s=3.2e-3),
                          dict(shape, s=32, sustained_fwd_s=9e-4, sustained_fwdbwd_s=9e-4)]},
                {"sdpa": [dict(shape, sustained_fwd_s=1.3e-3, sustained_fwdbwd_s=3.4e-3),
                          dict(shape, s=32, sustained_fwd_s=9e-4, sustained_fwdbwd_s=9e-4)]}]
        out = gemm_sustained.apply_sdpa(profile, runs)
        # long row: mean of 1.1 and 1.3 ms, of 3.2 and 3.4 ms; the 0.5 ms row keeps the table
        self.assertAlmostEqual(out["sdpa"][0]["t_fwd_s"], 1.2e-3)
        self.assertAlmostEqual(out["sdpa"][0]["t_fwdbwd_s"], 3.3e-3)
        self.assertEqual(out["sdpa"][1], short_row)
        self.assertEqual(profile["sdpa"][0]["t_fwd_s"], 1e-3)  # the input is not modified
        self.assertEqual(out["gpu"], "X")

    def test_apply_names_a_shape_without_a_measurement(self):
        profile = {"sdpa": [{"b": 4, "heads": 2, "s": 64, "head_dim": 16, "t_fwd_s": 1.0, "t_fwdbwd_s": 3.0}]}
        with self.assertRaisesRegex(ValueError, "b=4 heads=2 s=64 head_dim=16"):
            gemm_sustained.apply_sdpa(profile, [{"sdpa": []}])

    def test_gemm_and_attention_rows_on_the_cpu(self):
        row = gemm_sustained.gemm_row(CPU, torch.float32, 8, 16, 32, 0.001, 0)
        self.assertEqual((row["m"], row["k"], row["n"]), (8, 16, 32))
        self.assertTrue(row["burst_s"] > 0 and row["cold_s"] > 0 and row["sustained_s"] > 0)
        att = gemm_sustained.sdpa_row(CPU, torch.float32, 1, 2, 16, 8, 0.001)
        self.assertGreater(att["sustained_fwdbwd_s"], 0)


class HostSweepTest(unittest.TestCase):
    def test_per_block_cost_is_the_slope_over_the_block_count(self):
        # issue = 2 ms + 1.5 ms/block (ck0), 2 ms + 3.5 ms/block (ck1); kernels 20 + 45/block
        rows = [{"h": 64, "L": L, "ckpt": ck, "issue_s": 0.002 + L * (0.0015 if ck == 0 else 0.0035),
                 "kernels": 20 + 45 * L} for L in (2, 6) for ck in (0, 1)]
        by = {r["ckpt"]: r for r in host_sweep.per_block_slopes(rows)}
        self.assertAlmostEqual(by[0]["per_block_s"], 0.0015)
        self.assertAlmostEqual(by[1]["per_block_s"], 0.0035)
        self.assertAlmostEqual(by[1]["fixed_s"], 0.002)
        self.assertAlmostEqual(by[0]["per_block_kernels"], 45)

    def test_summary_takes_medians_and_quartiles_of_the_issue_time(self):
        # issue times 1+2, 2+2, 3+2, 10+2 s (the sum of the four phases); median 4.5, step median 2.5
        samples = [((a, 2.0, 0.0, 0.0), s) for a, s in ((1, 1), (2, 2), (3, 3), (10, 4))]
        rec = host_sweep.summarize(samples)
        self.assertEqual(rec["n"], 4)
        self.assertAlmostEqual(rec["issue_s"], 4.5)
        self.assertAlmostEqual(rec["forward_s"], 2.5)
        self.assertAlmostEqual(rec["step_s"], 2.5)
        self.assertLess(rec["issue_q1_s"], rec["issue_s"])

    def test_round_robin_sweep_measures_every_model_and_setting(self):
        subjects = [host_sweep.Subject(16, 1, 4, CPU), host_sweep.Subject(16, 2, 4, CPU)]
        out = host_sweep.sweep(subjects, rounds=1, steps=1)
        self.assertEqual(sorted(out), [(0, 0), (0, 1), (1, 0), (1, 1)])
        self.assertTrue(all(len(v) == 1 for v in out.values()))


def _fsdp_importable():
    """Debian's torch 1.13 cannot import FSDP under Python 3.11 (dataclass error in
    torch.distributed._shard); the FSDP path then runs on the GPU machine only."""
    try:
        import torch.distributed.fsdp  # noqa: F401
        return True
    except (ImportError, ValueError):
        return False


def _gloo_worker(rank, world, port, out):
    import torch.distributed as dist
    import collectives
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    rows = collectives.measure(CPU, rank, world, [4096, 65536], ops=("all_reduce", "all_gather", "send_recv"))
    # Megatron-style TP step over the same group: the two ranks agree on the loss.
    h, L, heads = gpt.MODELS["tiny"]
    torch.manual_seed(0)
    model = gpt.GPT(h, L, heads, tp=world, tp_group=None)
    x = torch.randint(0, gpt.VOCAB, (1, 8), generator=torch.Generator().manual_seed(1))
    loss = gpt.loss_fn(model(x), x)
    loss.backward()
    t = torch.tensor([loss.item()])
    dist.all_reduce(t)
    # the distributed strategies' steps over the same two ranks
    recs = [steps.measure(st, "tiny", 16, 2, False, CPU, rank, world, timed=1, warmup=1)
            for st in ("ddp", "ulysses", "pp") + (("fsdp_full",) if _fsdp_importable() else ())]
    if rank == 0:
        json.dump({"rows": rows, "loss_sum": t.item(), "loss": loss.item(), "steps": recs}, open(out, "w"))
    dist.destroy_process_group()


def _free_port():
    """A port no other process listens on now (a fixed one collides with tests run in parallel)."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class CollectivesTest(unittest.TestCase):
    def test_two_gloo_ranks(self):
        import torch.multiprocessing as mp
        out = os.path.join(tempfile.mkdtemp(), "c.json")
        mp.spawn(_gloo_worker, args=(2, _free_port(), out), nprocs=2, join=True)
        r = json.load(open(out))
        self.assertEqual({x["op"] for x in r["rows"]}, {"all_reduce", "all_gather", "send_recv"})
        self.assertTrue(all(x["world"] == 2 and x["t_s"] > 0 for x in r["rows"]))
        self.assertAlmostEqual(r["loss_sum"], 2 * r["loss"], places=4)
        self.assertEqual([x["id"] for x in r["steps"]][:3],
                         ["ddp|tiny|s16|b2|ck0", "ulysses|tiny|s16|b2|ck0", "pp|tiny|s16|b2|ck0"])
        self.assertEqual(r["steps"][2]["strategy"], "dp=1,pp=2,micro=2")
        self.assertTrue(all(x["t_median_s"] > 0 for x in r["steps"]))

    def test_one_f_one_b_order(self):
        import pipeline
        self.assertEqual(pipeline.schedule(0, 2, 3), ["F", "F", "B", "F", "B", "B"])
        self.assertEqual(pipeline.schedule(1, 2, 3), ["F", "B", "F", "B", "F", "B"])


class HostTest(unittest.TestCase):
    def test_phase_record_and_per_block_fit(self):
        r = host.measure(16, 1, 1, 4, 1, False, CPU, timed=1, warmup=0)
        # 1 block of 8 tensors (2 LayerNorms x 2 + 4 linears) + embedding + final LN (2) + head = 12
        self.assertEqual(r["param_tensors"], 12)
        self.assertTrue(all(r[f"{p}_s"] > 0 for p in host.PHASES))
        self.assertEqual(r["forward_kernels"], 0)  # no CUDA on the CPU
        # y = 2 + 3x through (1, 5), (2, 8), (4, 14)
        a, b = host.fit_line([1, 2, 4], [5, 8, 14])
        self.assertAlmostEqual(a, 2.0)
        self.assertAlmostEqual(b, 3.0)


class ProfileFileTest(unittest.TestCase):
    def test_quick_profile_is_read_by_orrery(self):
        out = tempfile.mkdtemp()
        subprocess.run([sys.executable, os.path.join(HERE, "profile_gpu.py"), "--out", out, "--quick",
                        "--steps", "single:tiny:16:1:0"], check=True, capture_output=True)
        prof = json.load(open(os.path.join(out, "profile.json")))
        self.assertEqual(prof["format"], "orrery-gpu-profile")
        self.assertGreater(len(prof["gemm"]), 0)
        binary = os.environ.get("ORRERY_BINARY")
        if binary:
            r = subprocess.run([binary, "plan", "profile", "--profile", os.path.join(out, "profile.json")],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    unittest.main()


class InferTest(unittest.TestCase):
    def test_rank_share_and_weights(self):
        # tiny: 2 layers, hidden 64, 4 heads of 16, 2 KV heads, MLP 128, vocabulary 256, untied.
        # A layer: QKV 64x(4+4)*16 = 8,192, O 64x64 = 4,096, gate/up 64x256 = 16,384, down 128x64 =
        # 8,192, two norms 128: 36,992 parameters; 2 layers + embedding and head 2·256·64 = 32,768:
        # 106,752 parameters, 4 bytes each on the CPU = 427,008 bytes.
        r = infer.Rank("tiny", 1, CPU, torch.float32)
        self.assertEqual(r.weight_bytes, 427008)
        half = infer.Rank("tiny", 2, CPU, torch.float32)
        self.assertEqual((half.a, half.k, half.f), (2, 1, 64))
        with self.assertRaises(ValueError):
            infer.Rank("tiny", 3, CPU, torch.float32)

    def test_cached_decode_equals_the_full_forward(self):
        # Decoding token t over a cache of t tokens gives the logits the causal prefill of t + 1
        # tokens gives for its last token: the cache and attention paths are the same model.
        torch.manual_seed(0)
        r = infer.Rank("tiny", 1, CPU, torch.float32)
        ids = torch.randint(0, r.v, (2, 6))
        full = r.forward(ids, infer.rope(6, r.d, 0, CPU, torch.float32), r.cache(2, 6), 0, True)
        cache = r.cache(2, 6)
        r.forward(ids[:, :5], infer.rope(5, r.d, 0, CPU, torch.float32), cache, 0, True)
        step = r.forward(ids[:, 5:], infer.rope(1, r.d, 5, CPU, torch.float32), cache, 5, False)
        self.assertTrue(torch.allclose(full, step, atol=1e-4))

    def test_quick_run_writes_every_phase(self):
        with tempfile.TemporaryDirectory() as d:
            path = infer.main(["--out", d, "--configs", "tiny:1", "tiny:2", "--quick"])
            with open(path) as f:
                rows = [line for line in f if not line.startswith("#")]
        self.assertEqual(rows[0].strip().split(","), infer.COLUMNS)
        body = [r.strip().split(",") for r in rows[1:]]
        self.assertEqual(sorted({(b[2], b[4]) for b in body}),
                         [("1", "decode"), ("1", "prefill"), ("1", "verify"), ("2", "decode"), ("2", "prefill"), ("2", "verify")])
        self.assertTrue(all(b[-1] == "ok" and float(b[8]) > 0 for b in body))
