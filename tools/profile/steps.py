"""Whole training steps of the GPT workload under a strategy, measured the way
../shared/gpu-h200/README.md defines them (warm-up, synchronized timed steps, median; peak
allocated memory net of what was allocated before the model was built)."""
import os
import statistics
import time

import torch

import gpt

GiB = 2 ** 30
STRATEGIES = ("single", "ddp", "fsdp_full", "fsdp_grad_op", "fsdp_no_shard", "tp_mega", "ulysses", "pp")


def build(strategy, h, L, heads, ckpt, device, world, group=None):
    tp = world if strategy == "tp_mega" else 1
    sp_group = group if strategy == "ulysses" else None
    model = gpt.GPT(h, L, heads, ckpt=ckpt, tp=tp, tp_group=group if tp > 1 else None, sp_group=sp_group,
                    device=device)
    if strategy == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    elif strategy.startswith("fsdp"):
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, ShardingStrategy
        from torch.distributed.fsdp.wrap import ModuleWrapPolicy
        ss = {"fsdp_full": ShardingStrategy.FULL_SHARD, "fsdp_grad_op": ShardingStrategy.SHARD_GRAD_OP,
              "fsdp_no_shard": ShardingStrategy.NO_SHARD}[strategy]
        model = FSDP(model, auto_wrap_policy=ModuleWrapPolicy({gpt.Block}), sharding_strategy=ss,
                     device_id=device if device.type == "cuda" else None, use_orig_params=False,
                     limit_all_gathers=True)
    fused = device.type == "cuda"
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1, **({"fused": True} if fused else {}))
    return model, opt


def one_step(model, opt, x, y, device):
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
        logits = model(x)
        loss = gpt.loss_fn(logits, y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure_pipeline(model_name, s, micro, ckpt, device, rank, world, timed=5, warmup=3):
    """1F1B over `world` stages, `micro` micro-batches of one sequence each."""
    import pipeline
    h, L, heads = gpt.MODELS[model_name]
    cuda = device.type == "cuda"
    base = torch.cuda.memory_allocated(device) if cuda else 0
    torch.manual_seed(1234 + rank)
    stage = pipeline.Stage(h, L, heads, rank, world, ckpt, device)
    opt = torch.optim.AdamW(stage.parameters(), lr=1e-4, weight_decay=0.1, **({"fused": True} if cuda else {}))
    if cuda:
        torch.cuda.reset_peak_memory_stats(device)
    g = torch.Generator().manual_seed(42)
    xs = [torch.randint(0, gpt.VOCAB, (1, s), generator=g).to(device) for _ in range(micro)]
    ys = [torch.randint(0, gpt.VOCAB, (1, s), generator=g).to(device) for _ in range(micro)]
    times = []
    for i in range(warmup + timed):
        sync(device)
        t0 = time.perf_counter()
        pipeline.train_step(stage, opt, xs, ys, h, device, rank, world)
        sync(device)
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    peak = (torch.cuda.max_memory_allocated(device) - base) / GiB if cuda else 0.0
    return {"id": f"pp|{model_name}|s{s}|b{micro}|ck{int(ckpt)}", "strategy": f"dp=1,pp={world},micro={micro}",
            "gpus": world, "model": model_name, "N_total": gpt.n_total(h, L), "h": h, "L": L, "heads": heads,
            "s": s, "b": 1, "ckpt": int(ckpt), "status": "ok", "iters": timed,
            "t_median_s": statistics.median(times), "t_min_s": min(times), "t_max_s": max(times),
            "static_after_step1_gib": 0.0, "peak_alloc_net_gib": peak, "peak_reserved_net_gib": 0.0}


def measure(strategy, model_name, s, b, ckpt, device, rank=0, world=1, group=None, timed=5, warmup=3):
    if strategy == "pp":
        return measure_pipeline(model_name, s, b, ckpt, device, rank, world, timed, warmup)
    h, L, heads = gpt.MODELS[model_name]
    if strategy == "single" and world != 1:
        raise ValueError("single runs on one process")
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.empty_cache()
        base = torch.cuda.memory_allocated(device)
    torch.manual_seed(1234)
    model, opt = build(strategy, h, L, heads, ckpt, device, world, group)
    if cuda:
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
    # data-parallel ranks get different batches; TP ranks the same; Ulysses ranks their slice
    g = torch.Generator().manual_seed(42 + (rank if strategy not in ("tp_mega",) else 0))
    seq_local = s // world if strategy == "ulysses" else s
    x = torch.randint(0, gpt.VOCAB, (b, seq_local), generator=g).to(device)
    y = torch.randint(0, gpt.VOCAB, (b, seq_local), generator=g).to(device)
    times = []
    for i in range(warmup + timed):
        sync(device)
        t0 = time.perf_counter()
        one_step(model, opt, x, y, device)
        sync(device)
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    static = (torch.cuda.memory_allocated(device) - base) / GiB if cuda else 0.0
    peak = (torch.cuda.max_memory_allocated(device) - base) / GiB if cuda else 0.0
    reserved = torch.cuda.max_memory_reserved(device) / GiB if cuda else 0.0
    del model, opt
    return {"id": f"{strategy}|{model_name}|s{s}|b{b}|ck{int(ckpt)}", "strategy": strategy if strategy != "ulysses" else f"dp=1,sp={world}",
            "gpus": world, "model": model_name, "N_total": gpt.n_total(h, L), "h": h, "L": L, "heads": heads,
            "s": s, "b": b, "ckpt": int(ckpt), "status": "ok", "iters": timed,
            "t_median_s": statistics.median(times), "t_min_s": min(times), "t_max_s": max(times),
            "static_after_step1_gib": static, "peak_alloc_net_gib": peak, "peak_reserved_net_gib": reserved}


CSV_COLUMNS = ["id", "strategy", "gpus", "model", "N_total", "h", "L", "heads", "s", "b", "ckpt", "status", "iters",
               "t_median_s", "t_min_s", "t_max_s", "static_after_step1_gib", "peak_alloc_net_gib",
               "peak_reserved_net_gib"]


def csv_line(rec):
    def fmt(v):
        return f"{v:.5g}" if isinstance(v, float) else str(v)
    return ",".join(fmt(rec.get(c, "")) for c in CSV_COLUMNS)
