#!/usr/bin/env python3
"""The project's profiler: measures a GPU type for the training-job planner and writes the
profile file (docs/formats/gpu-profile.md) plus measured training steps in the format of
calibration.csv. One process per GPU; under torchrun (WORLD_SIZE > 1) it also measures the
collectives and the distributed strategies. Works on the CPU (gloo) with --quick for tests.

  python3 tools/profile/profile_gpu.py --out OUT [--quick] [--steps SPEC ...] [--no-micro]
  torchrun --nproc-per-node 8 tools/profile/profile_gpu.py --out OUT --collectives --steps ...

A step SPEC is strategy:model:seq:batch:ckpt, e.g. single:350M:2048:1:0.
Keep NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1 set."""
import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import bench  # noqa: E402
import collectives  # noqa: E402
import steps  # noqa: E402

MiB = 2 ** 20
FULL_HIDDEN = (768, 1024, 2048, 2560, 4096, 5120)
FULL_TOKENS = (2048, 8192, 32768)
FULL_SDPA = [(b, nh, s, hd) for (nh, hd) in ((12, 64), (16, 64), (16, 128), (32, 80), (32, 128), (40, 128))
             for s in (2048, 8192) for b in (1, 4)] + [(1, 12, 32768, 64), (1, 16, 32768, 64)]
QUICK_HIDDEN, QUICK_TOKENS, QUICK_SDPA = (64,), (32,), [(1, 4, 32, 16)]


def parse_step(spec):
    st, model, s, b, ck = spec.split(":")
    if st not in steps.STRATEGIES:
        raise SystemExit(f"profile_gpu: unknown strategy '{st}' in --steps {spec} (expected {', '.join(steps.STRATEGIES)})")
    return st, model, int(s), int(b), bool(int(ck))


def no_multicast():
    for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"):
        want = "0" if k == "NCCL_NVLS_ENABLE" else "1"
        if os.environ.get(k) != want:
            os.environ[k] = want


def setup():
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if torch.cuda.is_available():
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
    else:
        device = torch.device("cpu")
    if "WORLD_SIZE" in os.environ:  # launched by torchrun (also with one process)
        import torch.distributed as dist
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    return device, rank, world


def micro(device, quick, log):
    hid, tok, sd = (QUICK_HIDDEN, QUICK_TOKENS, QUICK_SDPA) if quick else (FULL_HIDDEN, FULL_TOKENS, FULL_SDPA)
    t0 = time.time()
    gemm = bench.gemm_table(device, hid, tok, budget_s=0.002 if quick else 0.02, vocab=256 if quick else gpt_vocab())
    log(f"gemm: {len(gemm)} shapes in {time.time() - t0:.1f}s")
    t0 = time.time()
    sdpa = bench.sdpa_table(device, sd)
    log(f"sdpa: {len(sdpa)} shapes in {time.time() - t0:.1f}s")
    bw = bench.copy_bandwidth(device, (4 * MiB) if quick else (2048 * MiB))
    host = bench.host_op_cost(device, 200 if quick else 4000)
    layers = [bench.layer_profile(device, h, max(1, h // 64 if h < 2048 else h // 128), 1, 32 if quick else 2048)
              for h in hid]
    return gemm, sdpa, bw, host, layers


def gpt_vocab():
    import gpt
    return gpt.VOCAB


def gpu_info(device):
    if device.type == "cuda":
        p = torch.cuda.get_device_properties(device)
        return p.name, p.total_memory / 2 ** 30
    return "cpu", 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true", help="tiny shapes (CPU tests)")
    ap.add_argument("--no-micro", action="store_true")
    ap.add_argument("--collectives", action="store_true")
    ap.add_argument("--coll-max-mib", type=int, default=1024)
    ap.add_argument("--steps", nargs="*", default=[])
    ap.add_argument("--gpu-name", default="")
    ap.add_argument("--peak-tflops", type=float, default=989.4)
    a = ap.parse_args()
    no_multicast()
    device, rank, world = setup()
    os.makedirs(a.out, exist_ok=True)
    log = (lambda m: print(f"[{time.strftime('%H:%M:%S')}] {m}", flush=True)) if rank == 0 else (lambda m: None)
    name, mem_gib = gpu_info(device)
    profile = {"format": "orrery-gpu-profile", "version": 1, "gpu": a.gpu_name or name.replace("NVIDIA ", ""),
               "memory_gib": mem_gib or 1.0, "peak_bf16_tflops": a.peak_tflops, "membw_GBps": 1.0,
               "gpus_per_node": max(world, torch.cuda.device_count() if device.type == "cuda" else 1),
               "gemm": [], "sdpa": [], "collectives": [], "layers": [],
               "provenance": {"tool": "tools/profile/profile_gpu.py", "torch": torch.__version__,
                              "cuda": torch.version.cuda, "host": platform.node(), "world": world,
                              "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                              "env": {k: os.environ.get(k, "") for k in ("NCCL_NVLS_ENABLE",
                                      "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS")}}}
    if not a.no_micro:
        gemm, sdpa, bw, host, layers = micro(device, a.quick, log)
        profile.update(gemm=gemm, sdpa=sdpa, membw_GBps=bw / 1e9)
        profile["provenance"]["host_op_s_measured"] = host
        profile["provenance"]["layer_profiles"] = layers
        log(f"copy {bw / 1e9:.0f} GB/s, host op {host * 1e6:.1f} us")
    if a.collectives and world > 1:
        top = 1 if a.quick else a.coll_max_mib
        sizes = [MiB * 2 ** i for i in range(0, 31) if 2 ** i <= top]
        profile["collectives"] = collectives.measure(device, rank, world, sizes)
        log(f"collectives: {len(profile['collectives'])} rows")
    step_lines = []
    for spec in a.steps:
        st, model, s, b, ck = parse_step(spec)
        try:
            rec = steps.measure(st, model, s, b, ck, device, rank, world)
        except torch.cuda.OutOfMemoryError if device.type == "cuda" else MemoryError:
            import gpt
            h, L, heads = gpt.MODELS[model]
            rec = {"id": f"{st}|{model}|s{s}|b{b}|ck{int(ck)}", "strategy": st, "gpus": world, "model": model,
                   "N_total": gpt.n_total(h, L), "h": h, "L": L, "heads": heads, "s": s, "b": b, "ckpt": int(ck),
                   "status": "oom"}
            torch.cuda.empty_cache()
        step_lines.append(steps.csv_line(rec))
        log(f"step {rec['id']}: {rec.get('t_median_s', 'oom')} s, {rec.get('peak_alloc_net_gib', '-')} GiB")
    if rank == 0:
        with open(os.path.join(a.out, "profile.json"), "w") as f:
            json.dump(profile, f, indent=1)
        if step_lines:
            with open(os.path.join(a.out, "steps.csv"), "w") as f:
                f.write(",".join(steps.CSV_COLUMNS) + "\n" + "\n".join(step_lines) + "\n")
    import torch.distributed as dist
    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
