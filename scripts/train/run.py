"""needle-nano from scratch, in one command:

  python3 scripts/train/run.py --out /tmp/needle-nano

Stages (run again, the command resumes: the tokenizer is kept, training continues from latest.pt):
  1. tokenizer:  <work>/tokenizer.json, BPE over generated training conversations
  2. suites:     evaluation suites (JSONL) in <work>/suites/, and the CI-sized ones when
                 --ci-suites DIR is given (the repository keeps them in tests/data/tools-eval/)
  3. training:   <work>/latest.pt, stable.pt, loss.csv, diagnostics.csv (train.py: runs add up;
                 a work directory without state starts from the repository's weights,
                 scripts/train/state/needle-nano-stable.pt, which each run brings up to date)
  4. evaluation: <work>/eval.json (exact match, sinks on and off)
  5. export:     <out>/needle-nano.gguf and <out>/needle-nano-loss.png
  6. (--build DIR) verify_engine.py: tokenizer and logits against Sinkscope's engine
  7. (--ship, with --build) into the repository: resources/models/needle-nano.gguf, the loss
     curve in resources/docs/, and the test data of tests/eval/test_needle_nano.cpp
     (tests/data/needle-nano/: PyTorch's logits and the CI-sized suites' eval-tools figures)

--train-only stops after stage 3 (for a short GPU loan: evaluate and export on another machine);
--no-train skips it (stages 4-7 on a work directory trained elsewhere).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import needle_data  # noqa: E402
import needle_format  # noqa: E402
import spm_tokenizer  # noqa: E402

SEED = 1234
VOCAB = 2048
TOKENIZER_CONVERSATIONS = 600


def train_tokenizer(work):
    path = os.path.join(work, "tokenizer.json")
    if os.path.exists(path):
        return
    gen = needle_data.ConversationGenerator(SEED + 100, "train")
    texts = [needle_format.render_text(gen.generate(i)) for i in range(TOKENIZER_CONVERSATIONS)]
    tok = spm_tokenizer.train(texts, VOCAB)
    tok.save(path)
    print("tokenizer: %d pieces -> %s" % (tok.size, path), flush=True)


SUITES = {
    # name: (seed, split, domains, conversations)
    "preset-domains": (SEED + 1, "eval", None, 64),
    "heldout-domains": (SEED + 2, "eval", needle_data.HELDOUT_DOMAINS, 32),
}
CI_CONVERSATIONS = 4
REPO_STATE = os.path.join(HERE, "state", "needle-nano-stable.pt")
SHIPPED_MODEL = os.path.normpath(os.path.join(HERE, "../../resources/models/needle-nano.gguf"))

# train.py arguments per preset. "cpu" is a 2.6M-parameter shape for a CPU, trained run after run
# from the repository's weights (REPO_STATE) on one or two threads, with the induction steps and the
# unclipped gradients under which its copy circuit formed (induction.py). "gpu" trains the shipped
# model's shape (12.6M parameters) on one GPU, resuming from the shipped GGUF itself, so that each
# GPU loan adds to the last (its data rendered by 14 worker processes; induction steps and
# gradients as in "cpu"; the shape arguments apply only where there is nothing to resume from)
# in the packed loop (gpu_loop.py: 8 packed rows of 8,192 tokens a conversation step, weights-only
# checkpoints every 500 steps; --batch 32 sets the curriculum's pace and the padded step it is
# timed against); "gpu-tiny" is the same code path from scratch at a toy size, to check on a CPU
# that the GPU command runs.
# Until the tool-name diagnostic leaves chance, nine conversations in ten name their tools with
# fresh nonsense (no pool name to choose by), and descriptions share a word with their queries in
# at least 80% of the calls (word_overlap.py), so that the description is what tells the tool.
READING_DATA = ["--random-id-rate", "0.9", "--overlap-rate", "0.7"]
PRESETS = {
    "cpu": ["--d", "192", "--layers", "6", "--heads", "6", "--kv-heads", "6", "--ff", "384",
            "--batch", "1", "--curriculum", "8000", "--induction-rate", "0.5", "--clip", "0",
            *READING_DATA, "--init", REPO_STATE, "--save-weights", REPO_STATE],
    "gpu": ["--d", "384", "--layers", "8", "--heads", "8", "--kv-heads", "8", "--ff", "768",
            "--batch", "32", "--workers", "14", "--curriculum", "60000", "--lr", "1.5e-3",
            "--warmup", "200", "--diag-minutes", "1", "--induction-rate", "0.5", "--clip", "0",
            "--checkpoint-every", "500", *READING_DATA, "--init", SHIPPED_MODEL,
            "--packed", "--rows", "8", "--row-length", "8192"],
    "gpu-tiny": ["--d", "32", "--layers", "2", "--heads", "2", "--kv-heads", "2", "--ff", "64",
                 "--batch", "4", "--workers", "2", "--curriculum", "400", "--warmup", "5",
                 "--diag-minutes", "0.2", "--induction-rate", "0.5", "--clip", "0",
                 "--checkpoint-every", "500", "--packed", "--rows", "2", "--row-length", "8192",
                 "--log-every", "5"],
}
DEFAULT_MINUTES = {"cpu": "110", "gpu": "6.5", "gpu-tiny": "0.5"}
# The exported weight type: the gpu shape (12.6M parameters) fits the 16 MB budget only as Q8_0.
DEFAULT_TYPE = {"cpu": "f32", "gpu": "q8_0", "gpu-tiny": "q8_0"}


def suite_line(conv):
    turns = [{"query": t["query"], "answers": t["answers"],
              "result": t.get("result") or needle_format.DEFAULT_RESULT} for t in conv["turns"]]
    out = {"tools": conv["tools"]}
    if conv.get("system"):
        out["system"] = conv["system"]
    out["turns"] = turns
    return json.dumps(out, separators=(",", ":"), ensure_ascii=False)


def write_suites(work, ci_dir):
    os.makedirs(os.path.join(work, "suites"), exist_ok=True)
    for name, (seed, split, domains, count) in SUITES.items():
        gen = needle_data.ConversationGenerator(seed, split, domains=domains, min_turns=32,
                                                max_turns=40)
        convs = [gen.generate(i) for i in range(count)]
        targets = [(os.path.join(work, "suites", name + ".jsonl"), convs)]
        if ci_dir:
            targets.append((os.path.join(ci_dir, name + ".jsonl"), convs[:CI_CONVERSATIONS]))
        for path, subset in targets:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write("".join(suite_line(c) + "\n" for c in subset))
            print("suite: %d conversations -> %s" % (len(subset), path), flush=True)


def run(script, *args):
    subprocess.run([sys.executable, os.path.join(HERE, script), *args], check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for needle-nano.gguf")
    ap.add_argument("--work-dir", default="",
                    help="tokenizer, checkpoints, logs, suites (outside git); default "
                         "~/.cache/sinkscope-train, with -PRESET appended for the gpu presets")
    ap.add_argument("--ci-suites", default="", help="also write the CI-sized suites here")
    ap.add_argument("--preset", default="cpu", choices=sorted(PRESETS),
                    help="model shape and batch: cpu (the shipped shape, resumed run after run), "
                         "gpu (a larger model in one go), gpu-tiny (the gpu path at a toy size)")
    ap.add_argument("--device", default="cpu", help="cpu, or cuda for the gpu preset")
    ap.add_argument("--minutes", default="",
                    help="this run's training time (the last 15%% decay the learning rate); "
                         "default per preset: cpu 110, gpu 6.5, gpu-tiny 0.5")
    ap.add_argument("--type", default="", choices=["", "f32", "f16", "q8_0"],
                    help="the GGUF's weight type; default per preset: cpu f32, gpu q8_0")
    ap.add_argument("--window", default="96", help="kv window for evaluation and metadata")
    ap.add_argument("--threads", default="1", help="PyTorch threads for training")
    ap.add_argument("--rows", default="",
                    help="gpu presets: packed rows of 8,192 tokens per step (gpu: 8, about 40 GB "
                         "estimated; 16 would need an H200)")
    ap.add_argument("--build", default="",
                    help="a Sinkscope CMake build folder: also check the GGUF against the engine")
    ap.add_argument("--checkpoint", default="latest.pt",
                    help="the checkpoint to evaluate and export (latest.pt: the decayed end of the "
                         "run; stable.pt: its start of decay)")
    ap.add_argument("--train-only", action="store_true",
                    help="stop after training (stages 1-3): evaluate and export elsewhere, e.g. "
                         "when a GPU machine's time is short")
    ap.add_argument("--no-train", action="store_true",
                    help="skip training (stage 3): evaluate, export and ship the work directory's "
                         "checkpoint as it is, e.g. one trained on a GPU machine")
    ap.add_argument("--ship", action="store_true",
                    help="copy the model, its loss curve and its test data into the repository")
    args = ap.parse_args()
    if not args.work_dir:
        suffix = "" if args.preset == "cpu" else "-" + args.preset
        args.work_dir = os.path.expanduser("~/.cache/sinkscope-train" + suffix)
    # PyTorch's CPU products run in OpenBLAS, whose own thread count is set only this way.
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = args.threads
    if args.ship and not args.build:
        ap.error("--ship needs --build (the test data is recorded with the engine)")
    if args.no_train and args.train_only:
        ap.error("--no-train and --train-only leave nothing to do together")
    args.type = args.type or DEFAULT_TYPE[args.preset]
    os.makedirs(args.work_dir, exist_ok=True)
    train_tokenizer(args.work_dir)
    write_suites(args.work_dir, args.ci_suites)
    if not args.no_train:
        run("train.py", "--work-dir", args.work_dir, "--device", args.device, "--threads",
            args.threads, "--minutes", args.minutes or DEFAULT_MINUTES[args.preset],
            *PRESETS[args.preset], *(["--rows", args.rows] if args.rows else []))
    if args.train_only:
        return
    suites = [os.path.join(args.work_dir, "suites", n + ".jsonl") for n in SUITES]
    eval_args = ["--work-dir", args.work_dir, "--window", args.window, "--limit", "16",
                 "--checkpoint", args.checkpoint]
    for s in suites:
        eval_args += ["--suite", s]
    with open(os.path.join(args.work_dir, "eval.json"), "w") as f:
        subprocess.run([sys.executable, os.path.join(HERE, "evaluate.py"), *eval_args],
                       check=True, stdout=f)
    os.makedirs(args.out, exist_ok=True)
    gguf = os.path.join(args.out, "needle-nano.gguf")
    run("export_gguf.py", "--work-dir", args.work_dir, "--kv-window", args.window, "--out", gguf,
        "--checkpoint", args.checkpoint, "--type", args.type)
    run("plot_loss.py", "--csv", os.path.join(args.work_dir, "loss.csv"),
        "--diagnostics", os.path.join(args.work_dir, "diagnostics.csv"),
        "--out", os.path.join(args.out, "needle-nano-loss.png"))
    if not args.build:
        return
    verify = ["--work-dir", args.work_dir, "--gguf", gguf, "--build", args.build,
              "--window", args.window, "--checkpoint", args.checkpoint, "--type", args.type]
    if args.ship:
        repo = os.path.normpath(os.path.join(HERE, "../.."))
        test_data = os.path.join(repo, "tests/data/needle-nano")
        verify += ["--reference", os.path.join(test_data, "reference.json"),
                   "--record-eval", os.path.join(test_data, "eval-ci.json")]
        shutil.copyfile(gguf, os.path.join(repo, "resources/models/needle-nano.gguf"))
        shutil.copyfile(os.path.join(args.out, "needle-nano-loss.png"),
                        os.path.join(repo, "resources/docs/needle-nano-loss.png"))
        shutil.copyfile(os.path.join(args.work_dir, "loss.csv"),
                        os.path.join(repo, "resources/docs/needle-nano-loss.csv"))
    run("verify_engine.py", *verify)


if __name__ == "__main__":
    main()
