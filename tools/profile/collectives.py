"""Collective times over the process group (torch.distributed; NCCL on GPUs, gloo on the CPU):
all_reduce, all_gather, reduce_scatter, all_to_all and send/recv (ring neighbour exchange) for
message sizes from `sizes`, fp32 and bf16. `bytes` is the full (unsharded) buffer, as nccl-tests
counts it; the time is the max over ranks of each rank's median."""
import torch
import torch.distributed as dist

from bench import Timer

OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv")
MiB = 2 ** 20


def _call(op, nbytes, dtype, device, world, rank):
    es = torch.tensor([], dtype=dtype).element_size()
    n = max(world, nbytes // es // world * world)
    if op == "all_reduce":
        buf = torch.ones(n, device=device, dtype=dtype)
        return lambda i: dist.all_reduce(buf)
    if op == "all_gather":
        inp = torch.ones(n // world, device=device, dtype=dtype)
        out = [torch.empty_like(inp) for _ in range(world)]
        return lambda i: dist.all_gather(out, inp)
    if op == "reduce_scatter":
        inp = [torch.ones(n // world, device=device, dtype=dtype) for _ in range(world)]
        out = torch.empty(n // world, device=device, dtype=dtype)
        if device.type == "cpu":  # gloo has no reduce_scatter: all_reduce then keep a shard
            full = torch.ones(n, device=device, dtype=dtype)
            return lambda i: dist.all_reduce(full)
        return lambda i: dist.reduce_scatter(out, inp)
    if op == "all_to_all":
        inp = [torch.ones(n // world, device=device, dtype=dtype) for _ in range(world)]
        out = [torch.empty_like(t) for t in inp]
        if device.type == "cpu" and not hasattr(dist, "all_to_all"):
            return None
        return lambda i: dist.all_to_all(out, inp)
    if op == "send_recv":
        send = torch.ones(n, device=device, dtype=dtype)
        recv = torch.empty_like(send)
        nxt, prv = (rank + 1) % world, (rank - 1) % world

        def ring(i):
            reqs = [dist.isend(send, nxt), dist.irecv(recv, prv)]
            for r in reqs:
                r.wait()
        return ring
    raise ValueError(op)


def measure(device, rank, world, sizes, dtypes=(torch.float32, torch.bfloat16), nodes=1, ops=OPS):
    timer = Timer(device)
    rows = []
    for dtype in dtypes:
        if device.type == "cpu" and dtype == torch.bfloat16:
            continue  # gloo reduces bf16 only in recent PyTorch; the CPU path tests the logic
        for op in ops:
            for nbytes in sizes:
                try:
                    fn = _call(op, nbytes, dtype, device, world, rank)
                except RuntimeError:
                    fn = None
                if fn is None:
                    continue
                dist.barrier()
                t = timer(fn, iters=5 if nbytes >= 256 * MiB else 10, reps=3)
                worst = torch.tensor([t], dtype=torch.float64, device=device)
                dist.all_reduce(worst, op=dist.ReduceOp.MAX)
                rows.append({"op": op, "dtype": "bf16" if dtype == torch.bfloat16 else "fp32", "world": world,
                             "nodes": nodes, "bytes": float(nbytes), "t_s": float(worst.item())})
                del fn
                if device.type == "cuda":
                    torch.cuda.empty_cache()
    return rows
