"""Exact match of needle-nano's calls under the session mask, in PyTorch (teacher forcing).

A turn counts as exact when the model's greedy prediction equals every token of the expected
assistant segment (<tool_call>[...]</tool_call><|im_end|>): greedy decoding would then produce
exactly that call. Off-topic turns count as right when the first predicted token is not
<tool_call>. Earlier turns are given their expected transcript, not the model's own outputs.

  python3 evaluate.py --work-dir DIR --suite FILE.jsonl [--checkpoint latest.pt] [--window 96]
"""

import argparse
import json
import os

import blas_setup  # noqa: F401  (before torch: OpenBLAS picks its kernels as it loads)
import torch

import needle_format
from model import Config, NeedleNano, SessionLayout, pad_to_window
from spm_tokenizer import Tokenizer

LATE_TURN = 30  # turns 30 and later (1-based), as eval-tools reports them


def turn_results(model, tok, conv, window, sinks=True):
    """[(turn index, is_call, exact, start position)] for one conversation."""
    r = needle_format.render(conv, tok)
    device = next(model.parameters()).device
    ids = torch.tensor([pad_to_window(r.ids, window)], device=device)
    sink = torch.tensor([pad_to_window(r.sink, window)], dtype=torch.bool, device=device)
    pred = model(ids, SessionLayout(sink, window, sinks))[0].argmax(-1)
    call_id = tok.specials["<tool_call>"]
    out = []
    for i, (turn, (start, end)) in enumerate(zip(conv["turns"], r.turn_spans)):
        if turn["answers"]:
            exact = bool((pred[start - 1:end - 1] == ids[0, start:end]).all())
        else:
            exact = int(pred[start - 1]) != call_id
        out.append((i, bool(turn["answers"]), exact, start))
    return out


def exact_match(model, tok, convs, window, sinks=True):
    rows = [t for conv in convs for t in turn_results(model, tok, conv, window, sinks)]

    def rate(selected):
        return sum(t[2] for t in selected) / len(selected) if selected else float("nan")

    late = [t for t in rows if t[0] + 1 >= LATE_TURN]
    return {"conversations": len(convs), "turns": len(rows),
            "exact_match": rate(rows),
            "exact_match_first": rate([t for t in rows if t[0] == 0]),
            "exact_match_late": rate(late),
            "late_mean_position": sum(t[3] for t in late) / len(late) if late else 0,
            "call_exact_match": rate([t for t in rows if t[1]]),
            "no_call_accuracy": rate([t for t in rows if not t[1]])}


def load_model(path):
    state = torch.load(path, map_location="cpu")
    model = NeedleNano(Config(**state["config"]))
    model.load_state_dict(state["model"])
    model.eval()
    return model


def read_suite(path, limit=None):
    with open(path) as f:
        convs = [json.loads(line) for line in f if line.strip()]
    return convs[:limit] if limit else convs


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--suite", required=True, action="append")
    ap.add_argument("--checkpoint", default="latest.pt")
    ap.add_argument("--window", type=int, default=96)
    ap.add_argument("--limit", type=int, default=0, help="conversations per suite (0: all)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    tok = Tokenizer.load(os.path.join(args.work_dir, "tokenizer.json"))
    model = load_model(os.path.join(args.work_dir, args.checkpoint))
    report = {}
    with torch.no_grad():
        for suite in args.suite:
            convs = read_suite(suite, args.limit)
            report[os.path.basename(suite)] = {
                "sinks_on": exact_match(model, tok, convs, args.window, True),
                "sinks_off": exact_match(model, tok, convs, args.window, False)}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
