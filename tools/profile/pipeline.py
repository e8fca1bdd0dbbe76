"""Pipeline parallelism for the profiler: the GPT's blocks split uniformly over the ranks of the
group (embedding on the first, final LayerNorm + head + loss on the last), micro-batches run in
the 1F1B order (warm-up forwards, one-forward-one-backward, cool-down backwards), activations and
their gradients passed with point-to-point isend/recv (NCCL on GPUs, gloo on the CPU)."""
import torch
import torch.distributed as dist
import torch.nn as nn

import gpt


class Stage(nn.Module):
    def __init__(self, h, L, heads, rank, world, ckpt, device):
        super().__init__()
        per, extra = divmod(L, world)
        n = per + (1 if rank >= world - extra else 0)
        self.first, self.last = rank == 0, rank == world - 1
        self.wte = nn.Embedding(gpt.VOCAB, h, device=device) if self.first else None
        self.blocks = nn.ModuleList(gpt.Block(h, heads, ckpt, device=device) for _ in range(n))
        self.ln_f = nn.LayerNorm(h, device=device) if self.last else None
        self.lm_head = nn.Linear(h, gpt.VOCAB, bias=False, device=device) if self.last else None

    def forward(self, x):
        if self.first:
            x = self.wte(x)
        for b in self.blocks:
            x = b(x)
        return self.lm_head(self.ln_f(x)) if self.last else x


def schedule(rank, world, micro):
    """1F1B order of 'F'/'B' for one rank."""
    warm = min(world - rank - 1, micro)
    order = ["F"] * warm
    for _ in range(micro - warm):
        order += ["F", "B"]
    return order + ["B"] * warm


def train_step(stage, opt, batches, targets, h, device, rank, world):
    """One optimizer step over len(batches) micro-batches; returns the last stage's mean loss."""
    dtype = torch.float32  # the residual stream stays fp32 under autocast
    pending, sends, losses = [], [], []
    f_i = 0
    for op in schedule(rank, world, len(batches)):
        if op == "F":
            if stage.first:
                inp = batches[f_i]
            else:
                inp = torch.empty(batches[f_i].shape + (h,), device=device, dtype=dtype)
                dist.recv(inp, rank - 1)
                inp.requires_grad_(True)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
                out = stage(inp)
                if stage.last:
                    out = gpt.loss_fn(out, targets[f_i]) / len(batches)
                    losses.append(out.detach())
            if not stage.last:
                sends.append(dist.isend(out.detach().contiguous(), rank + 1))
            pending.append((inp, out))
            f_i += 1
        else:
            inp, out = pending.pop(0)
            if stage.last:
                out.backward()
            else:
                g = torch.empty_like(out)
                dist.recv(g, rank + 1)
                out.backward(g)
            if not stage.first:
                sends.append(dist.isend(inp.grad.contiguous(), rank - 1))
    for s in sends:
        s.wait()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return float(sum(losses)) if losses else None
