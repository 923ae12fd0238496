"""A llama-architecture transformer trained under Sinkscope's session mask.

Blocks: RMSNorm, attention with grouped KV heads and RoPE on adjacent pairs (x[2i], x[2i+1]),
as llama.cpp's `llama` architecture computes it, SwiGLU feed-forward, tied output.

Attention is the session's (memory-architecture.md sections 2 and 5):
  keep(q, k) = k <= q and (q - k < W or sink(k))
with streaming positions: window keys at their true distance q - k; sink j of S scored at
distance min(q - p_j, W + S - 1 - j). Only visible keys are computed: each query block of W
positions attends to itself and the previous block (the window) plus the sink keys.
"""

import math
from dataclasses import dataclass, asdict

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    vocab: int = 2048
    d: int = 192
    n_layer: int = 4
    n_head: int = 4
    n_kv: int = 2
    ff: int = 512
    rope_base: float = 10000.0
    eps: float = 1e-5
    ctx: int = 8192

    @property
    def head_dim(self):
        return self.d // self.n_head

    def to_dict(self):
        return asdict(self)


def rope_angles(positions, head_dim, base):
    """cos, sin [..., head_dim / 2] for integer positions [...]."""
    inv = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64, device=positions.device) /
                   head_dim)
    theta = positions.to(torch.float64).unsqueeze(-1) * inv
    return torch.cos(theta).float(), torch.sin(theta).float()


def apply_rope(x, cos, sin):
    """x [..., head_dim] rotated by pairs (x[2i], x[2i+1]); cos, sin broadcast to [..., hd/2]."""
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2)


class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class SessionLayout:
    """What the mask needs for one batch of rows of equal padded length T (a multiple of W).

    is_sink [B, T] bool; sink_pos [B, S] positions of each row's sinks in order (padding: 0,
    with sink_valid False); W the window; sinks=False gives the plain sliding window. attend()
    is the attention under this mask; packed_attention.PackedLayout is the same for packed rows."""

    def __init__(self, is_sink, window, sinks=True):
        self.window = window
        self.sinks = sinks
        B, T = is_sink.shape
        device = is_sink.device
        self.T = T
        self.is_sink = is_sink if sinks else torch.zeros_like(is_sink)
        counts = self.is_sink.sum(1)
        S = max(int(counts.max()), 1)
        order = torch.argsort((~self.is_sink).to(torch.int8), dim=1, stable=True)
        self.sink_pos = order[:, :S]  # [B, S]
        j = torch.arange(S, device=device)
        self.sink_valid = j.unsqueeze(0) < counts.unsqueeze(1)  # [B, S]
        pos = torch.arange(T, device=device)
        # Streaming distance of sink j: min(q - p_j, W + S_b - 1 - j)
        folded = (window + counts.unsqueeze(1) - 1 - j.unsqueeze(0))  # [B, S]
        true_dist = pos.view(1, T, 1) - self.sink_pos.unsqueeze(1)  # [B, T, S]
        self.sink_visible = (true_dist >= 0) & self.sink_valid.unsqueeze(1)  # [B, T, S]
        self.use_folded = true_dist > folded.unsqueeze(1)  # [B, T, S]
        self.folded = folded
        # First query position at which every sink is past and folded: max_j(p_j + folded_j) + 1.
        last = torch.where(self.sink_valid, self.sink_pos + folded, torch.zeros_like(folded))
        self.fold_from = min(T, int(last.max()) + 1)
        # First query position at which any sink is folded: min_j(p_j + folded_j) + 1. Before
        # it every sink is scored at its true distance (a turn-1 conversation is mostly there).
        first = torch.where(self.sink_valid, self.sink_pos + folded, torch.full_like(folded, T))
        self.fold_start = min(self.fold_from, int(first.min()) + 1)
        # Window part, in blocks of W queries against [previous block, own block] keys.
        n = T // window
        qp = pos.view(n, window, 1)
        kp = torch.cat([pos.view(n, window) - window, pos.view(n, window)], 1).view(n, 1, 2 * window)
        diff = qp - kp  # [n, W, 2W]
        base = (diff >= 0) & (diff < window) & (kp >= 0)
        key_sink = torch.cat([F.pad(self.is_sink, (window, 0))[:, :T].view(B, n, window),
                              self.is_sink.view(B, n, window)], 2)  # [B, n, 2W]
        self.window_visible = base.unsqueeze(0) & ~key_sink.unsqueeze(2)  # [B, n, W, 2W]

    def rope(self, head_dim, base):
        """cos, sin [T, head_dim / 2] of the positions 0 .. T-1 (a row is one conversation)."""
        return rope_angles(torch.arange(self.T, device=self.is_sink.device), head_dim, base)

    def attend(self, q, k, v, cos, sin, c):
        """q [B, T, H, hd], k and v [B, T, G, hd] (before RoPE); cos, sin [T, hd/2] ->
        [B, T, H, hd]."""
        B, T = q.shape[:2]
        H, hd, W = c.n_head, c.head_dim, self.window
        n = T // W
        rep = H // c.n_kv
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # [B, heads, T, hd]
        q_rot = apply_rope(q, cos, sin)
        k_rot = apply_rope(k, cos, sin)
        k_rot = k_rot.repeat_interleave(rep, 1)
        k = k.repeat_interleave(rep, 1)
        v = v.repeat_interleave(rep, 1)
        scale = 1.0 / math.sqrt(hd)

        # Window: [B, H, n, W, hd] queries against [B, H, n, 2W, hd] keys.
        qb = q_rot.view(B, H, n, W, hd)
        kb = k_rot.view(B, H, n, W, hd)
        vb = v.view(B, H, n, W, hd)
        kw = torch.cat([F.pad(kb, (0, 0, 0, 0, 1, 0))[:, :, :n], kb], 3)
        vw = torch.cat([F.pad(vb, (0, 0, 0, 0, 1, 0))[:, :, :n], vb], 3)
        sw = torch.matmul(qb, kw.transpose(-1, -2)) * scale  # [B, H, n, W, 2W]
        sw = sw.masked_fill(~self.window_visible.unsqueeze(1), float("-inf"))

        # Sinks: [B, H, T, S] at the true distance, or folded to W + S - 1 - j.
        idx = self.sink_pos.view(B, 1, -1, 1).expand(B, H, -1, hd)
        ks_true = torch.gather(k_rot, 2, idx)  # [B, H, S, hd]
        ks_raw = torch.gather(k, 2, idx)
        vs = torch.gather(v, 2, idx)
        fcos, fsin = rope_angles(-self.folded, hd, c.rope_base)  # [B, S, hd/2]
        ks_fold = apply_rope(ks_raw, fcos.unsqueeze(1), fsin.unsqueeze(1))
        # Scores of the queries from fold_start on, at the folded distances (q at position 0
        # against keys at -folded): [B, H, T - fold_start, S].
        fs, ff = self.fold_start, self.fold_from
        s_fold = torch.matmul(q[:, :, fs:], ks_fold.transpose(-1, -2)) * scale
        # Queries from fold_from on see every sink folded, and every sink is in their past.
        late = s_fold[:, :, ff - fs:].masked_fill(
            ~self.sink_valid.view(B, 1, 1, -1), float("-inf"))
        # Queries before fold_from: true distances, folded where use_folded says so.
        early = torch.matmul(q_rot[:, :, :ff], ks_true.transpose(-1, -2)) * scale
        early = torch.cat([early[:, :, :fs], torch.where(
            self.use_folded[:, fs:ff].unsqueeze(1), s_fold[:, :, :ff - fs], early[:, :, fs:])], 2)
        early = early.masked_fill(~self.sink_visible[:, :ff].unsqueeze(1), float("-inf"))
        ss = torch.cat([early, late], 2)
        S = ss.shape[-1]

        scores = torch.cat([ss.view(B, H, n, W, S), sw], -1)
        p = torch.softmax(scores, -1)
        out = torch.matmul(p[..., :S].reshape(B, H, T, S), vs) + \
            torch.matmul(p[..., S:], vw).view(B, H, T, hd)
        return out.transpose(1, 2)


class Attention(nn.Module):
    """Projections and output of one attention layer; which keys each query sees, and at which
    RoPE distance, is the layout's (SessionLayout here, packed_attention.PackedLayout for packed
    rows)."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        hd = c.head_dim
        self.wq = nn.Linear(c.d, c.n_head * hd, bias=False)
        self.wk = nn.Linear(c.d, c.n_kv * hd, bias=False)
        self.wv = nn.Linear(c.d, c.n_kv * hd, bias=False)
        self.wo = nn.Linear(c.n_head * hd, c.d, bias=False)

    def forward(self, x, layout, cos, sin):
        c = self.c
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, c.n_head, c.head_dim)
        k = self.wk(x).view(B, T, c.n_kv, c.head_dim)
        v = self.wv(x).view(B, T, c.n_kv, c.head_dim)
        return self.wo(layout.attend(q, k, v, cos, sin, c).reshape(B, T, c.n_head * c.head_dim))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attn_norm = RMSNorm(c.d, c.eps)
        self.attn = Attention(c)
        self.ffn_norm = RMSNorm(c.d, c.eps)
        self.w_gate = nn.Linear(c.d, c.ff, bias=False)
        self.w_up = nn.Linear(c.d, c.ff, bias=False)
        self.w_down = nn.Linear(c.ff, c.d, bias=False)

    def forward(self, x, layout, cos, sin):
        x = x + self.attn(self.attn_norm(x), layout, cos, sin)
        h = self.ffn_norm(x)
        return x + self.w_down(F.silu(self.w_gate(h)) * self.w_up(h))


class NeedleNano(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed = nn.Embedding(c.vocab, c.d)
        self.blocks = nn.ModuleList(Block(c) for _ in range(c.n_layer))
        self.norm = RMSNorm(c.d, c.eps)
        nn.init.normal_(self.embed.weight, std=0.02)
        for name, p in self.named_parameters():
            if name.endswith("weight") and p.dim() == 2 and "embed" not in name:
                std = 0.02 / math.sqrt(2 * c.n_layer) if name.endswith(("wo.weight", "w_down.weight")) else 0.02
                nn.init.normal_(p, std=std)

    def hidden(self, ids, layout):
        """ids [B, T] -> the final norm's output [B, T, d], before the tied output matrix."""
        cos, sin = layout.rope(self.c.head_dim, self.c.rope_base)
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x, layout, cos, sin)
        return self.norm(x)

    def forward(self, ids, layout):
        """ids [B, T] (T a multiple of the layout's window) -> logits [B, T, vocab]."""
        return F.linear(self.hidden(ids, layout), self.embed.weight)


def pad_to_window(seq, window, fill=0):
    """Pads a list to a multiple of the window."""
    extra = (-len(seq)) % window
    return list(seq) + [fill] * extra


def stack_padded(documents, window):
    """(ids, weight, sink) lists -> ids [B, T] long, weight [B, T] float, sink [B, T] bool: one
    row each, padded to the longest and then to a multiple of the window."""
    length = max(len(d[0]) for d in documents)

    def rows(index, dtype):
        return torch.tensor([pad_to_window(d[index] + [0] * (length - len(d[index])), window)
                             for d in documents], dtype=dtype)

    return {"ids": rows(0, torch.long), "weight": rows(1, torch.float), "sink": rows(2, torch.bool)}
