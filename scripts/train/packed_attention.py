"""The session mask on packed rows (packed_batches.py), one attention call per chunk of queries.

The mask is model.py's, per document: keep(q, k) = same document and k <= q and (q - k < W or
sink(k)), with streaming positions. A document's sinks are its first S tokens, so they all fold
at once: a query at position t of its document sees every sink at its true distance while
t < W + S, and from then on sink j at the folded distance W + S - 1 - j, which is the raw query
against the key rotated to -(W + S - 1 - j) (model.SessionLayout does the same).

Queries come in chunks of CHUNK (>= W). Chunk c attends to a fixed set of keys:
  sink slots    the sinks of every document with a query in the chunk (--sink-capacity slots,
                from packed_batches' chunk_sinks), each sink once;
  window slots  the previous chunk and its own (2 * CHUNK keys; sinks among them masked out,
                since the sink slots hold them).
One attention call scores both, without choosing per (query, sink) pair which rotation applies,
by widening the head to three parts:
  query          [q_rot, q * (1 - pre), q_rot * pre]     pre = 1 while t < W + S, else 0
  window key     [k_rot, 0, 0]                            -> q_rot . k_rot
  sink key       [0, k_fold, k_rot]                       -> the folded or the true score
scaled by sqrt(3) so that the attention's 1 / sqrt(3 hd) is the model's 1 / sqrt(hd).

The call is torch.nn.functional.scaled_dot_product_attention where PyTorch has it (2.0 on), which
never materialises the scores with its fused kernels, else the same product by hand (PyTorch
1.13, this recipe's CPU). No score tensor spans a row, and no tensor depends on the data's sizes.
"""

import math

import torch
import torch.nn.functional as F

from model import apply_rope, rope_angles
from packed_batches import CHUNK

HAS_SDPA = hasattr(F, "scaled_dot_product_attention")


def attend(q, k, v, mask):
    """q [N, H, Q, E], k [N, H, K, E], v [N, H, K, Ev], mask [N, 1, Q, K] bool (True: attend)
    -> [N, H, Q, Ev], at the scale 1 / sqrt(E)."""
    if HAS_SDPA:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    return torch.matmul(torch.softmax(scores.masked_fill(~mask, float("-inf")), -1), v)


def chunk_spans(x):
    """x [R, L, ...] -> [R, n, 2 * CHUNK, ...]: for each chunk, the previous chunk (zeros before
    the first) and its own."""
    R, L = x.shape[:2]
    n = L // CHUNK
    padded = F.pad(x.movedim(1, -1), (CHUNK, 0)).movedim(-1, 1)  # [R, L + CHUNK, ...]
    blocks = padded.reshape(R, n + 1, CHUNK, *x.shape[2:])
    return torch.cat([blocks[:, :-1], blocks[:, 1:]], 2)


def gather_rows(x, index):
    """x [R, L, ...], index [R, n, K] -> x at those positions, [R, n, K, ...]."""
    R, n, K = index.shape
    flat = index.reshape(R, n * K).view(R, n * K, *([1] * (x.dim() - 2)))
    return torch.gather(x, 1, flat.expand(R, n * K, *x.shape[2:])).view(R, n, K, *x.shape[2:])


class PackedLayout:
    """The step's masks and rotations, built on the device from a packed batch without a host
    sync (same role as model.SessionLayout, same attend and rope interface)."""

    def __init__(self, batch):
        pos, doc, n_sink = batch["pos"], batch["doc"], batch["n_sink"]
        window = batch["window"]
        R, L = pos.shape
        n = L // CHUNK
        self.pos, self.chunk_sinks = pos, batch["chunk_sinks"]
        index = torch.arange(L, device=pos.device)
        is_sink = pos < n_sink  # [R, L]
        # Window slots: [R, n, CHUNK, 2 * CHUNK].
        q_index = index.view(1, n, CHUNK, 1)
        k_index = index[::CHUNK].view(1, n, 1) - CHUNK + \
            torch.arange(2 * CHUNK, device=pos.device).view(1, 1, -1)  # [1, n, 2C]
        distance = q_index - k_index.unsqueeze(2)  # [1, n, C, 2C]
        k_doc = chunk_spans(doc + 1) - 1  # [R, n, 2C]; -1 before the row's first chunk
        q_doc = doc.view(R, n, CHUNK, 1)
        k_sink = chunk_spans(is_sink.to(torch.int8)).bool()
        window_visible = (q_doc == k_doc.unsqueeze(2)) & (distance >= 0) & \
            (distance < window) & ~k_sink.unsqueeze(2)
        # Sink slots: [R, n, CHUNK, K].
        sink_doc = gather_rows(doc, self.chunk_sinks)
        sink_visible = batch["chunk_sink_valid"].unsqueeze(2) & (sink_doc.unsqueeze(2) == q_doc) & \
            (self.chunk_sinks.unsqueeze(2) <= q_index)
        self.mask = torch.cat([sink_visible, window_visible], -1).view(R * n, 1, CHUNK, -1)
        self.pre_fold = (pos < window + n_sink).unsqueeze(-1).unsqueeze(-1)  # [R, L, 1, 1]
        self.fold_distance = window + n_sink - 1 - pos  # [R, L], meaningful at sinks

    def rope(self, head_dim, base):
        """cos, sin [R, L, 1, head_dim / 2] of the positions within each document."""
        cos, sin = rope_angles(self.pos, head_dim, base)
        return cos.unsqueeze(2), sin.unsqueeze(2)

    def attend(self, q, k, v, cos, sin, c):
        """q [R, L, H, hd], k and v [R, L, G, hd] (before RoPE) -> [R, L, H, hd]."""
        R, L, H, hd = q.shape
        n = L // CHUNK
        fcos, fsin = rope_angles(-self.fold_distance, hd, c.rope_base)
        # Rotations in the projections' dtype (bfloat16 under autocast): the widened keys below
        # are the step's largest tensors, and float32 ones would double them.
        cos, sin, fcos, fsin = (t.to(q.dtype) for t in (cos, sin, fcos.unsqueeze(2),
                                                        fsin.unsqueeze(2)))
        q_rot, k_rot = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        k_fold = apply_rope(k, fcos, fsin)
        pre = self.pre_fold.to(q.dtype)
        query = torch.cat([q_rot, q * (1 - pre), q_rot * pre], -1) * math.sqrt(3)  # [R, L, H, 3hd]
        zeros = torch.zeros_like(k_rot)
        window_keys = chunk_spans(torch.cat([k_rot, zeros, zeros], -1))  # [R, n, 2C, G, 3hd]
        sink_keys = gather_rows(torch.cat([zeros, k_fold, k_rot], -1), self.chunk_sinks)
        keys = torch.cat([sink_keys, window_keys], 2)  # [R, n, K + 2C, G, 3hd]
        values = torch.cat([gather_rows(v, self.chunk_sinks), chunk_spans(v)], 2)
        rep = H // c.n_kv

        def heads_first(x):  # [R, n, slots, heads, E] -> [R * n, H, slots, E]
            x = x.permute(0, 1, 3, 2, 4).reshape(R * n, x.shape[3], x.shape[2], x.shape[4])
            return x.repeat_interleave(rep, 1) if x.shape[1] != H else x

        out = attend(heads_first(query.view(R, n, CHUNK, H, 3 * hd)), heads_first(keys),
                     heads_first(values), self.mask)  # [R * n, H, C, hd]
        # reshape, not view: a fused kernel may return [R * n, C, H, hd] memory as [.., H, C, hd]
        return out.reshape(R, n, H, CHUNK, hd).permute(0, 1, 3, 2, 4).reshape(R, L, H, hd)


def packed_loss(model, batch):
    """Weighted mean cross-entropy of the packed batch, with logits only at its loss positions:
    the hidden states [R * L, d] gathered at loss_index [M], times the tied output [d, vocab]."""
    hidden = model.hidden(batch["ids"], PackedLayout(batch))
    picked = hidden.reshape(-1, hidden.shape[-1]).index_select(0, batch["loss_index"])
    logits = F.linear(picked, model.embed.weight)  # [M, vocab]
    ce = F.cross_entropy(logits.float(), batch["loss_target"], reduction="none")
    return (ce * batch["loss_weight"]).sum() / batch["weight_sum"]
