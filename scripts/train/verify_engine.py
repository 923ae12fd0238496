"""Checks an exported GGUF against PyTorch and Sinkscope's C++ engine.

1. Tokenizer: `sinkscope-cli tokenize` gives the ids the Python tokenizer gives, on queries, tool
   blocks and calls from generated conversations.
2. Logits: one conversation runs through the engine's Session (tool block pinned as sinks, kv
   window W, f32 KV, streaming positions) and through the PyTorch model under the same mask; the
   largest logit difference and the greedy agreement are printed, and the engine's greedy
   prediction is scored on every turn's call (teacher forcing, as evaluate.py does).

3. With --reference FILE: writes PyTorch's side of (2) for Sinkscope's own test suite
   (tests/eval/test_needle_nano.cpp): the tokens, their sink flags, the window, every position's
   greedy token with its margin over the runner-up, and the 16 largest logits at every 16th
   position.

  python3 verify_engine.py --work-dir DIR --gguf FILE --build BUILD_DIR [--window 96]
                           [--reference tests/data/needle-nano/reference.json]
                           [--record-eval tests/data/needle-nano/eval-ci.json]

4. With --record-eval FILE: runs `sinkscope-cli eval-tools` on the CI-sized suites
   (tests/data/tools-eval) and records the figures that tests/eval/test_needle_nano.cpp expects again.
"""

import argparse
import json
import os
import subprocess
import tempfile

import numpy as np
import blas_setup  # noqa: F401  (before torch: OpenBLAS picks its kernels as it loads)
import torch

import needle_data
import needle_format
from evaluate import load_model
from export_gguf import WEIGHT_TYPES, round_trip
from model import SessionLayout, pad_to_window
from spm_tokenizer import Tokenizer

HERE = os.path.dirname(os.path.abspath(__file__))


def check_tokenizer(cli, gguf, tok, convs):
    texts = []
    for conv in convs:
        texts.append(needle_data.compact(conv["tools"]))
        for turn in conv["turns"][:6]:
            texts.append(turn["query"])
            if turn["answers"]:
                texts.append(needle_data.compact(turn["answers"]))
    mismatches = 0
    for text in texts:
        out = json.loads(subprocess.run([cli, "tokenize", "--model", gguf, "--text", text],
                                        check=True, capture_output=True, text=True).stdout)
        engine_ids = out["ids"] if "ids" in out else out["tokens"]
        if engine_ids != tok.encode(text, add_bos=True, parse_special=False):
            mismatches += 1
            print("tokenizer mismatch on %r" % text)
    print("tokenizer: %d texts, %d mismatches" % (len(texts), mismatches))
    return mismatches == 0


def engine_logits(build, gguf, rendered, window, vocab):
    exe = os.path.join(tempfile.gettempdir(), "needle_engine_logits")
    # Every part library of the engine (engine/CMakeLists.txt), linked as one group so that their
    # order does not matter, and ICU, which the tokenizer's character classes come from.
    engine = os.path.join(build, "engine")
    parts = sorted(os.listdir(os.path.join(engine, "part-includes")))
    includes = ["-I" + os.path.join(engine, "part-includes", part) for part in parts]
    libraries = [os.path.join(engine, "libsinkscope_%s.a" % part) for part in parts
                 if os.path.exists(os.path.join(engine, "libsinkscope_%s.a" % part))]
    subprocess.run(["g++", "-std=c++20", "-O2", *includes, os.path.join(HERE, "engine_logits.cpp"),
                    "-Wl,--start-group", *libraries, "-Wl,--end-group", "-licuuc", "-lpthread",
                    "-o", exe], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        tokens = os.path.join(tmp, "tokens.txt")
        with open(tokens, "w") as f:
            f.write("".join("%d %d\n" % p for p in zip(rendered.ids, rendered.sink)))
        out = os.path.join(tmp, "logits.f32")
        subprocess.run([exe, gguf, tokens, out, str(window)], check=True)
        return np.fromfile(out, dtype=np.float32).reshape(len(rendered.ids), vocab)


def write_reference(path, rendered, window, logits, weight_type, every=16, top=16):
    """PyTorch's logits for Sinkscope's test: compact enough to keep in the repository."""
    order = np.argsort(-logits, axis=1)
    rows = np.arange(len(logits))
    margin = logits[rows, order[:, 0]] - logits[rows, order[:, 1]]
    checked = sorted(set(range(0, len(logits), every)) | {len(logits) - 1})
    reference = {
        "window": window,
        "positions": "streaming",
        "kv_bits": 32,
        "weights": weight_type,
        "tokens": [int(t) for t in rendered.ids],
        "sink": [int(s) for s in rendered.sink],
        "greedy": [int(t) for t in order[:, 0]],
        "greedy_margin": [round(float(m), 5) for m in margin],
        "top_logits": [{"position": p,
                        "ids": [int(t) for t in order[p, :top]],
                        "values": [round(float(logits[p, t]), 5) for t in order[p, :top]]}
                       for p in checked],
    }
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(reference, f, separators=(",", ":"))
        f.write("\n")


CI_RUNS = [("preset-domains", "on"), ("preset-domains", "off"), ("heldout-domains", "on")]
RECORDED = ["conversations", "turns", "exact_match", "exact_match_first", "exact_match_late",
            "call_exact_match", "call_names_match", "no_call_accuracy"]


def record_eval(cli, gguf, path):
    """eval-tools' figures on the CI-sized suites, for Sinkscope's test to expect again."""
    suites = os.path.join(HERE, "../../tests/data/tools-eval")
    figures = {}
    for suite, sinks in CI_RUNS:
        out = subprocess.run([cli, "eval-tools", "--model", gguf, "--suite",
                              os.path.join(suites, suite + ".jsonl"), "--sinks", sinks, "--json"],
                             check=True, capture_output=True, text=True).stdout
        report = json.loads(out[out.index("{"):])
        figures["%s sinks %s" % (suite, sinks)] = {k: report[k] for k in RECORDED}
        print("eval-tools %s, sinks %s: exact match %.3f" % (suite, sinks, report["exact_match"]))
    with open(path, "w") as f:
        json.dump(figures, f, indent=1)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--gguf", required=True)
    ap.add_argument("--checkpoint", default="latest.pt")
    ap.add_argument("--build", required=True, help="a CMake build folder of Sinkscope")
    ap.add_argument("--window", type=int, default=96)
    ap.add_argument("--turns", type=int, default=12)
    ap.add_argument("--type", default="f32", choices=sorted(WEIGHT_TYPES),
                    help="the GGUF's weight type: PyTorch runs on the weights rounded to it")
    ap.add_argument("--reference", default="", help="also write PyTorch's logits here (JSON)")
    ap.add_argument("--record-eval", default="",
                    help="also record eval-tools' figures on the CI-sized suites here (JSON)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    tok = Tokenizer.load(os.path.join(args.work_dir, "tokenizer.json"))
    gen = needle_data.ConversationGenerator(4321, "eval", min_turns=args.turns,
                                            max_turns=args.turns)
    convs = [gen.generate(i) for i in range(3)]
    cli = os.path.join(args.build, "app/cli/sinkscope-cli")
    check_tokenizer(cli, args.gguf, tok, convs)
    if args.record_eval:
        record_eval(cli, args.gguf, args.record_eval)

    conv = convs[0]
    r = needle_format.render(conv, tok)
    ref = engine_logits(args.build, args.gguf, r, args.window, tok.size)
    model = load_model(os.path.join(args.work_dir, args.checkpoint))
    round_trip(model, args.type)
    ids = torch.tensor([pad_to_window(r.ids, args.window)])
    sink = torch.tensor([pad_to_window(r.sink, args.window)], dtype=torch.bool)
    with torch.no_grad():
        ours = model(ids, SessionLayout(sink, args.window))[0, :len(r.ids)].numpy()
    if args.reference:
        write_reference(args.reference, r, args.window, ours, args.type)
    diff = np.abs(ours - ref)
    print("logits: %d positions (%d sinks, window %d): max |diff| %.2e, mean %.2e, "
          "greedy agreement %.4f" % (len(r.ids), sum(r.sink), args.window, diff.max(), diff.mean(),
                                    (ours.argmax(1) == ref.argmax(1)).mean()))
    for pos in (0, len(r.ids) // 2, len(r.ids) - 1):
        print("  position %d: engine %s  torch %s" % (pos, np.round(ref[pos, :4], 4),
                                                      np.round(ours[pos, :4], 4)))
    pred = ref.argmax(1)
    print("engine greedy, turn by turn (1 = the expected call or no-call, exactly):")
    marks = []
    for turn, (start, end) in zip(conv["turns"], r.turn_spans):
        if turn["answers"]:
            marks.append(int((pred[start - 1:end - 1] == np.array(r.ids[start:end])).all()))
        else:
            marks.append(int(pred[start - 1] != tok.specials["<tool_call>"]))
        if len(marks) <= 2 or len(marks) == len(r.turn_spans):
            call = pred[start - 1:end - 1] if turn["answers"] else pred[start - 1:start + 8]
            print("  turn %d: expected %s\n          engine   %s" % (
                len(marks), needle_data.compact(turn["answers"]) if turn["answers"] else turn["reply"],
                tok.decode(call.tolist()).strip()))
    print("  %s" % marks)


if __name__ == "__main__":
    main()
