"""Checks model.py's chunked session attention against the contract, key by key.

For every query q and key k the reference applies keep(q, k) = k <= q && (q - k < W || sink(k))
and scores a sink j of S at distance min(q - p_j, W + S - 1 - j), a window key at q - k
(memory-architecture.md sections 2 and 5). Sinks are not a prefix here (BOS, then a block after a
gap), as in a rendered conversation. Also checks that sinks=False is the plain sliding window.

  python3 scripts/train/test_session_mask.py
"""

import math

import blas_setup  # noqa: F401  (before torch: OpenBLAS picks its kernels as it loads)
import torch

from model import Config, NeedleNano, SessionLayout, apply_rope, rope_angles

WINDOW = 8
LENGTH = 120  # several blocks past the point where every sink distance folds


def reference_attention(att, x, sink_flags, window, use_sinks):
    c = att.c
    hd, rep = c.head_dim, c.n_head // c.n_kv
    T = x.shape[0]
    q = att.wq(x).view(T, c.n_head, hd)
    k = att.wk(x).view(T, c.n_kv, hd)
    v = att.wv(x).view(T, c.n_kv, hd)
    sinks = [p for p in range(T) if sink_flags[p] and use_sinks]
    out = torch.zeros(T, c.n_head, hd)
    zero_cos, zero_sin = rope_angles(torch.tensor(0), hd, c.rope_base)
    for qp in range(T):
        for h in range(c.n_head):
            scores, values = [], []
            for kp in range(qp + 1):
                if kp in sinks:
                    j = sinks.index(kp)
                    distance = min(qp - kp, window + len(sinks) - 1 - j)
                elif qp - kp < window:
                    distance = qp - kp
                else:
                    continue
                cos, sin = rope_angles(torch.tensor(distance), hd, c.rope_base)
                key = apply_rope(k[kp, h // rep], zero_cos, zero_sin)
                scores.append(apply_rope(q[qp, h], cos, sin) @ key / math.sqrt(hd))
                values.append(v[kp, h // rep])
            weights = torch.softmax(torch.stack(scores), 0)
            out[qp, h] = (weights[:, None] * torch.stack(values)).sum(0)
    return att.wo(out.reshape(T, -1))


def main():
    torch.manual_seed(0)
    config = Config(vocab=50, d=32, n_layer=1, n_head=4, n_kv=2, ff=64)
    att = NeedleNano(config).blocks[0].attn
    is_sink = torch.zeros(2, LENGTH, dtype=torch.bool)
    is_sink[0, 0] = True
    is_sink[0, 3:9] = True
    is_sink[1, 0] = True
    is_sink[1, 5:7] = True
    x = torch.randn(2, LENGTH, config.d)
    cos, sin = rope_angles(torch.arange(LENGTH), config.head_dim, config.rope_base)
    worst = 0.0
    with torch.no_grad():
        for use_sinks in (True, False):
            out = att(x, SessionLayout(is_sink, WINDOW, use_sinks), cos, sin)
            for row in range(2):
                ref = reference_attention(att, x[row], is_sink[row], WINDOW, use_sinks)
                worst = max(worst, float((ref - out[row]).abs().max()))
    print("largest difference from the per-key reference: %.2e" % worst)
    assert worst < 1e-5, "chunked session attention differs from the contract"


if __name__ == "__main__":
    main()
