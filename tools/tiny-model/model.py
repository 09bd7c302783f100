"""The tiny llama: RMSNorm, RoPE on consecutive pairs (ggml's LLAMA rope mode), SwiGLU, tied embeddings."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIG = dict(vocab=4096, dim=256, layers=4, heads=4, ffn=704, ctx=1024, eps=1e-5, rope_base=10000.0)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(ctx, head_dim, base):
    inv = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    ang = torch.arange(ctx, dtype=torch.float64)[:, None] * inv[None, :]
    return torch.cos(ang).float(), torch.sin(ang).float()


def apply_rope(x, cos, sin):
    # x: (B, H, T, D); pairs (x[2i], x[2i+1]); cos/sin: (T, D/2) or (B, 1, T, D/2)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    c, s = cos, sin
    r0 = x0 * c - x1 * s
    r1 = x0 * s + x1 * c
    return torch.stack((r0, r1), dim=-1).flatten(-2)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c['dim']
        self.heads = c['heads']
        self.attn_norm = RMSNorm(d, c['eps'])
        self.wq = nn.Linear(d, d, bias=False)
        self.wk = nn.Linear(d, d, bias=False)
        self.wv = nn.Linear(d, d, bias=False)
        self.wo = nn.Linear(d, d, bias=False)
        self.ffn_norm = RMSNorm(d, c['eps'])
        self.w_gate = nn.Linear(d, c['ffn'], bias=False)
        self.w_up = nn.Linear(d, c['ffn'], bias=False)
        self.w_down = nn.Linear(c['ffn'], d, bias=False)

    def forward(self, x, cos, sin, mask):
        B, T, D = x.shape
        H = self.heads
        h = self.attn_norm(x)
        q = (self.wq(h) * (D // H) ** -0.5).view(B, T, H, D // H).transpose(1, 2)
        k = self.wk(h).view(B, T, H, D // H).transpose(1, 2)
        v = self.wv(h).view(B, T, H, D // H).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        att = q @ k.transpose(-1, -2) + mask
        o = (att.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D)
        x = x + self.wo(o)
        h = self.ffn_norm(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


class TinyLlama(nn.Module):
    def __init__(self, c=CONFIG):
        super().__init__()
        self.c = dict(c)
        self.embed = nn.Embedding(c['vocab'], c['dim'])
        self.blocks = nn.ModuleList(Block(c) for _ in range(c['layers']))
        self.norm = RMSNorm(c['dim'], c['eps'])
        cos, sin = rope_tables(c['ctx'], c['dim'] // c['heads'], c['rope_base'])
        self.register_buffer('cos', cos, persistent=False)
        self.register_buffer('sin', sin, persistent=False)
        self.register_buffer('mask', torch.full((c['ctx'], c['ctx']), float('-inf')).triu(1), persistent=False)
        nn.init.normal_(self.embed.weight, std=0.02)
        for blk in self.blocks:
            for lin in (blk.wq, blk.wk, blk.wv, blk.w_gate, blk.w_up):
                nn.init.normal_(lin.weight, std=0.02)
            for lin in (blk.wo, blk.w_down):
                nn.init.normal_(lin.weight, std=0.02 / math.sqrt(2 * c['layers']))

    def forward(self, ids, doc=None):
        """ids: (B, T). doc: optional (B, T) document numbers of packed rows: attention stays inside a document
        and positions restart at each document's first token."""
        B, T = ids.shape
        x = self.embed(ids)
        if doc is None:
            cos, sin, mask = self.cos[:T], self.sin[:T], self.mask[:T, :T]
        else:
            start = torch.zeros_like(doc)
            change = torch.ones_like(doc, dtype=torch.bool)
            change[:, 1:] = doc[:, 1:] != doc[:, :-1]
            idx = torch.arange(T, device=doc.device).expand(B, T)
            start = torch.where(change, idx, torch.zeros_like(idx)).cummax(dim=1).values
            pos = idx - start
            cos, sin = self.cos[pos].unsqueeze(1), self.sin[pos].unsqueeze(1)
            same = doc.unsqueeze(2) == doc.unsqueeze(1)
            mask = self.mask[:T, :T].unsqueeze(0).masked_fill(~same, float('-inf')).unsqueeze(1)
        for blk in self.blocks:
            x = blk(x, cos, sin, mask)
        return self.norm(x) @ self.embed.weight.t()
