"""Checks the induction steps' batches (induction.py) on many steps: every weighted target is the
token that followed an earlier occurrence of its predecessor, within the window in window rows
and only in the sinks (at least a window back) in sink rows; sinks are BOS and the first span;
rows are padded to a multiple of the window; about --induction-rate of the steps are induction
steps; the model runs on a batch under the session mask.

  python3 scripts/train/test_induction.py WORK_DIR/tokenizer.json
"""

import sys

import blas_setup  # noqa: F401  (before torch)
import torch

import batches
import induction
from model import Config, NeedleNano, SessionLayout
from spm_tokenizer import Tokenizer

SEED = 1234
STEPS = 200


def check_row(ids, weight, sink, window, is_sink_row):
    length = len(ids)
    assert length % window == 0, "a row is padded to a multiple of the window"
    sinks = [i for i in range(length) if sink[i]]
    assert sinks == list(range(len(sinks))), "the sinks are the row's first tokens"
    span = len(sinks) - 1 if is_sink_row else None
    assert (span is not None and span >= 4) or len(sinks) == 1
    targets = [i for i in range(1, length) if weight[i] > 0]
    assert targets, "every row trains something"
    for i in targets:
        earlier = [j for j in range(i - 1) if ids[j] == ids[i - 1] and ids[j + 1] == ids[i]]
        assert earlier, "target %d does not follow an earlier occurrence of its predecessor" % i
        if is_sink_row:
            assert any(sink[j] and i - 1 - j >= window for j in earlier), \
                "a sink row's target must be copied from the sinks, a window or more back"
        else:
            assert any(i - 1 - j < window for j in earlier), "a window row copies within the window"


def main():
    tok = Tokenizer.load(sys.argv[1])
    args = type("Args", (), {"seed": SEED, "induction_rate": 0.3, "batch": 1, "curriculum": 8000,
                             "aux_start": 0.35, "aux_end": 0.1, "random_id_rate": 0.4})()
    chosen = [s for s in range(STEPS) if induction.is_induction_step(SEED, s, args.induction_rate)]
    assert 0.2 * STEPS < len(chosen) < 0.4 * STEPS, "about 30% of the steps: %d" % len(chosen)
    model = NeedleNano(Config(vocab=tok.size, d=32, n_layer=2, n_head=2, n_kv=2, ff=64))
    for step in chosen:
        batch = batches.make_batch(None, tok, step, args)
        assert batch["induction"] and batch["step"] == step
        window = batch["window"]
        for r in range(batch["ids"].shape[0]):
            check_row(batch["ids"][r].tolist(), batch["weight"][r].tolist(),
                      batch["sink"][r].tolist(), window,
                      is_sink_row=r >= induction.ROWS - induction.SINK_ROWS)
    logits = model(batch["ids"], SessionLayout(batch["sink"], batch["window"]))
    assert torch.isfinite(logits).all()
    print("induction batches: %d steps of %d checked" % (len(chosen), STEPS))


if __name__ == "__main__":
    main()
