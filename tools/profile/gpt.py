"""The GPT-style decoder the planner models (../shared/gpu-h200/README.md, "What a training step
is"): pre-LayerNorm blocks, bias-free QKV/Proj/FC1/FC2, causal attention, untied embedding and
head, full-logit cross-entropy. Optional Megatron-style tensor parallelism (local shards and
explicit all-reduces) and Ulysses sequence parallelism (all-to-all around attention)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 32000
MODELS = {  # name: (hidden, layers, heads)
    "125M": (768, 12, 12), "350M": (1024, 24, 16), "1.3B": (2048, 24, 16),
    "2.7B": (2560, 32, 32), "6.7B": (4096, 32, 32), "13B": (5120, 40, 40), "tiny": (64, 2, 4),
}


def n_total(h, L, V=VOCAB):
    return L * (12 * h * h + 4 * h) + 2 * V * h + 2 * h


def causal_attention(q, k, v):
    """(B, heads, S, hd) -> (B, heads, S, hd); flash attention where PyTorch has it."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    s = q.shape[-2]
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
    return scores.masked_fill(mask, float("-inf")).softmax(-1) @ v


class _AllReduceBackward(torch.autograd.Function):
    """Megatron's f: identity forward, all-reduce of the gradient backward."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        import torch.distributed as dist
        g = g.clone()
        dist.all_reduce(g, group=ctx.group)
        return g, None


class _AllReduceForward(torch.autograd.Function):
    """Megatron's g: all-reduce forward, identity backward."""

    @staticmethod
    def forward(ctx, x, group):
        import torch.distributed as dist
        y = x.clone()
        dist.all_reduce(y, group=group)
        return y

    @staticmethod
    def backward(ctx, g):
        return g, None


class _AllToAll(torch.autograd.Function):
    """Ulysses: scatter dim `scatter`, gather dim `gather` over the group (and back in backward)."""

    @staticmethod
    def forward(ctx, x, group, scatter, gather):
        import torch.distributed as dist
        ctx.group, ctx.scatter, ctx.gather = group, scatter, gather
        world = dist.get_world_size(group)
        parts = [p.contiguous() for p in x.chunk(world, dim=scatter)]
        out = [torch.empty_like(parts[0]) for _ in range(world)]
        dist.all_to_all(out, parts, group=group)
        return torch.cat(out, dim=gather)

    @staticmethod
    def backward(ctx, g):
        return _AllToAll.apply(g, ctx.group, ctx.gather, ctx.scatter), None, None, None


class Block(nn.Module):
    def __init__(self, h, heads, ckpt=False, tp=1, tp_group=None, sp_group=None, device=None):
        super().__init__()
        self.tp, self.tp_group, self.sp_group = tp, tp_group, sp_group
        self.ln1 = nn.LayerNorm(h, device=device)
        self.qkv = nn.Linear(h, 3 * h // tp, bias=False, device=device)
        self.proj = nn.Linear(h // tp, h, bias=False, device=device)
        self.ln2 = nn.LayerNorm(h, device=device)
        self.fc1 = nn.Linear(h, 4 * h // tp, bias=False, device=device)
        self.fc2 = nn.Linear(4 * h // tp, h, bias=False, device=device)
        self.head_dim = h // heads
        self.ckpt = ckpt

    def _f(self, x):
        return _AllReduceBackward.apply(x, self.tp_group) if self.tp > 1 else x

    def _g(self, x):
        return _AllReduceForward.apply(x, self.tp_group) if self.tp > 1 else x

    def _attend(self, q, k, v):
        if self.sp_group is None:
            return causal_attention(q, k, v)
        # (B, heads, S/sp, hd) -> (B, heads/sp, S, hd), attention, and back.
        q, k, v = (_AllToAll.apply(t, self.sp_group, 1, 2) for t in (q, k, v))
        return _AllToAll.apply(causal_attention(q, k, v), self.sp_group, 2, 1)

    def _forward(self, x):
        B, S, _ = x.shape
        q, k, v = self.qkv(self._f(self.ln1(x))).view(B, S, 3, -1, self.head_dim).unbind(2)
        a = self._attend(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))
        x = x + self._g(self.proj(a.transpose(1, 2).reshape(B, S, -1)))
        return x + self._g(self.fc2(F.gelu(self.fc1(self._f(self.ln2(x))))))

    def forward(self, x):
        if self.ckpt and torch.is_grad_enabled():
            from torch.utils.checkpoint import checkpoint
            return checkpoint(self._forward, x, use_reentrant=False)
        return self._forward(x)


class GPT(nn.Module):
    def __init__(self, h, L, heads, V=VOCAB, ckpt=False, tp=1, tp_group=None, sp_group=None, device=None,
                 layers=None):
        super().__init__()
        self.wte = nn.Embedding(V, h, device=device)
        n = L if layers is None else layers
        self.blocks = nn.ModuleList(Block(h, heads, ckpt, tp, tp_group, sp_group, device) for _ in range(n))
        self.ln_f = nn.LayerNorm(h, device=device)
        self.lm_head = nn.Linear(h, V, bias=False, device=device)

    def forward(self, idx):
        x = self.wte(idx)
        for b in self.blocks:
            x = b(x)
        return self.lm_head(self.ln_f(x))


def loss_fn(logits, targets):
    return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
