"""Checks the induction steps' batches (induction.py) on many steps: every weighted target of a
copy row is the token that followed an earlier occurrence of its predecessor, within the window in
window rows and only in the sinks (at least a window back) in sink rows; sinks are BOS and the
first span; every weighted span of a lookup row (lookup.py) is the name of the tool whose
description the query before it repeats, read from the pinned block; rows are padded to a multiple
of the window; about --induction-rate of the steps are induction steps; the model runs on a batch
under the session mask.

  python3 scripts/train/test_induction.py WORK_DIR/tokenizer.json
"""

import json
import sys

import blas_setup  # noqa: F401  (before torch)
import torch

import batches
import induction
from model import Config, NeedleNano, SessionLayout
from spm_tokenizer import Tokenizer

SEED = 1234
STEPS = 200


def weighted_spans(weight):
    spans, start = [], None
    for i, w in enumerate(weight + [0.0]):
        if w > 0 and start is None:
            start = i
        elif w == 0 and start is not None:
            spans.append((start, i))
            start = None
    return spans


def check_lookup_row(tok, ids, weight, sink_count):
    """Each weighted span is a tool's name; the query of its turn is that tool's description."""
    block = json.loads(tok.decode(ids[:sink_count]).split("\n", 1)[1].strip())
    descriptions = {tool["name"]: tool["description"] for tool in block}
    spans = weighted_spans(weight)
    assert len(spans) >= 2, "a lookup row asks several times"
    for start, end in spans:
        name = tok.decode(ids[start:end]).strip()
        assert name in descriptions, "the answer %r is not a pinned tool" % name
        turn = ids[:start][::-1].index(tok.specials["<tool_call>"])
        query_end = start - turn - 1
        query = tok.decode(ids[query_end - 40:query_end])
        assert descriptions[name] in query, "the query before %r is not its description" % name


def check_row(tok, ids, weight, sink, window, kind):
    length = len(ids)
    assert length % window == 0, "a row is padded to a multiple of the window"
    sinks = [i for i in range(length) if sink[i]]
    assert sinks == list(range(len(sinks))), "the sinks are the row's first tokens"
    if kind == "lookup":
        check_lookup_row(tok, ids, weight, len(sinks))
        return
    is_sink_row = kind == "sink"
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
            check_row(tok, batch["ids"][r].tolist(), batch["weight"][r].tolist(),
                      batch["sink"][r].tolist(), window, induction.ROW_KINDS[r])
    logits = model(batch["ids"], SessionLayout(batch["sink"], batch["window"]))
    assert torch.isfinite(logits).all()
    print("induction batches: %d steps of %d checked" % (len(chosen), STEPS))


if __name__ == "__main__":
    main()
