"""Trains the staged lookup curriculum (curriculum.py) until each stage passes its gate.

  nice -n 19 python3 scripts/train/train_stages.py --work-dir DIR --minutes 60

A step trains on rows of one stage: the current stage, or (one step in five, once past L1) an
earlier one, so that what was learnt stays. Every --eval-minutes of training time each stage
begun so far is scored on fixed rows with the block and with it blanked (stage_accuracy),
written to stages.csv, and the current stage advances when it passes its gate: accuracy at
least GATES[stage] with the block, and within 5 points of chance with it blanked (a model that
reads cannot beat chance when the descriptions are gone; one that guesses from anything else
would).

Runs add up like train.py's: the work directory's latest.pt (model, optimizer, step, tokens,
seconds, stage) is where the next run resumes; with none, --init gives the starting weights: a
stage run's state saved with --save-weights (its counters and stage go on, with a fresh
optimizer), the repository's conversation line (the default, whose copy circuit has formed), or,
with --init scratch, the shape arguments. The learning rate is constant after a warm-up: a stage's gate decides when it
ends, not a schedule.
"""

import argparse
import csv
import os
import random
import time

import blas_setup  # noqa: F401  (before torch: OpenBLAS picks its kernels as it loads)
import torch

import curriculum
import train
from model import Config, NeedleNano, SessionLayout
from spm_tokenizer import Tokenizer

GATES = {"L1": 0.90, "L2": 0.90, "L3": 0.80, "L4": 0.80}
BLANK_MARGIN = 0.05
EVAL_SEED = 777
EVAL_ROWS = 40
ROWS_PER_STEP = {"L1": 16, "L2": 16, "L3": 8, "L4": 8}  # 4,096 tokens a step
REPO_STATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "state",
                          "needle-nano-stable.pt")


def stack(rows):
    return {"ids": torch.tensor([r["ids"] for r in rows], dtype=torch.long),
            "weight": torch.tensor([r["weight"] for r in rows], dtype=torch.float),
            "sink": torch.tensor([r["sink"] for r in rows], dtype=torch.bool),
            "window": rows[0]["window"], "tokens": sum(len(r["ids"]) for r in rows)}


@torch.no_grad()
def stage_accuracy(model, maker, stage, blank, rows=EVAL_ROWS, batch=8):
    """(accuracy, chance, count): on fixed rows of the stage, the share of scored queries whose
    right name's first token the model scores highest among the block's names' first tokens (as
    the call grammar lets it choose). Pinned stages count only queries beyond the window, which
    reach the block through the sinks alone."""
    rng = random.Random("stage-eval/%s/%d" % (stage, EVAL_SEED))
    made = [maker.row(rng, stage, blank=blank) for _ in range(rows)]
    pinned = stage in ("L3", "L4")
    hits = total = 0
    chance = 0.0
    model.eval()
    for first in range(0, rows, batch):
        part = made[first:first + batch]
        b = stack(part)
        logits = model(b["ids"], SessionLayout(b["sink"], b["window"]))
        for r, row in enumerate(part):
            for pos, right, firsts, beyond in row["scored"]:
                if pinned and not beyond:
                    continue
                scores = logits[r, pos - 1, firsts]
                hits += int(firsts[int(scores.argmax())] == right)
                chance += 1.0 / len(firsts)
                total += 1
    model.train()
    return hits / max(total, 1), chance / max(total, 1), total


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work-dir", required=True, help="tokenizer.json, latest.pt, stages.csv")
    ap.add_argument("--init", default=REPO_STATE,
                    help="weights to start from when the work directory has none: a stage run's "
                         "saved state (--save-weights), the conversation line's, or 'scratch'")
    ap.add_argument("--save-weights", default="",
                    help="at the end, also write fp16 weights and counters here (no optimizer: "
                         "the repository's copy, 5 MB, that a machine without the work "
                         "directory resumes from)")
    ap.add_argument("--order", default="name-first", choices=["name-first", "description-first"],
                    help="the order of a tool's keys in the block")
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--eval-minutes", type=float, default=3)
    ap.add_argument("--d", type=int, default=192)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=6)
    ap.add_argument("--ff", type=int, default=384)
    return ap.parse_args()


def build(args, tok):
    """(model, optimizer, counters) resumed from the work directory, --init, or scratch."""
    latest = os.path.join(args.work_dir, "latest.pt")
    state, source = None, "scratch"
    if os.path.exists(latest):
        state, source = torch.load(latest, map_location="cpu"), latest
    elif args.init != "scratch":
        state, source = torch.load(args.init, map_location="cpu"), args.init
    config = Config(**state["config"]) if state else Config(
        vocab=tok.size, d=args.d, n_layer=args.layers, n_head=args.heads, n_kv=args.heads,
        ff=args.ff)
    model = NeedleNano(config)
    opt = train.make_optimizer(model, args, fused=False)
    counters = {"step": 0, "tokens_seen": 0, "train_seconds": 0.0, "stage": 0, "warm_from": 0,
                "order": args.order}
    if state:
        model.load_state_dict({k: v.float() for k, v in state["model"].items()})
        if "optimizer" in state:
            opt.load_state_dict(state["optimizer"])
        if "counters" in state:  # a stage run's state: it goes on where that run stopped
            counters.update(state["counters"])
            if "optimizer" not in state:
                counters["warm_from"] = counters["step"]  # a fresh optimizer warms up again
        else:  # the conversation line's weights
            counters["init_tokens"] = state.get("tokens_seen", 0)
    print("from %s: %s; parameters %d" % (source, counters,
                                          sum(p.numel() for p in model.parameters())), flush=True)
    return model, opt, config, counters


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    tok = Tokenizer.load(os.path.join(args.work_dir, "tokenizer.json"))
    model, opt, config, counters = build(args, tok)
    if counters["order"] != args.order:
        raise SystemExit("the work directory trains --order %s" % counters["order"])
    maker = curriculum.StageRows(tok, name_first=args.order == "name-first")
    fields = ["step", "tokens_seen", "train_seconds", "stage"]
    for stage in curriculum.STAGES:
        fields += [stage + "_acc", stage + "_blank", stage + "_chance"]
    log, writer = train.open_log(os.path.join(args.work_dir, "stages.csv"), fields)

    def checkpoint():
        weights = {k: v.detach().cpu() for k, v in model.state_dict().items()}
        train.save_atomic({"config": config.to_dict(), "model": weights,
                           "optimizer": opt.state_dict(), "counters": dict(counters)},
                          os.path.join(args.work_dir, "latest.pt"))

    def evaluate():
        row = [counters["step"], counters["tokens_seen"], "%.1f" % counters["train_seconds"],
               curriculum.STAGES[counters["stage"]]]
        report = []
        for index, stage in enumerate(curriculum.STAGES):
            if index > counters["stage"]:  # not begun: chance, and the time is the training's
                row += ["", "", ""]
                continue
            acc, chance, count = stage_accuracy(model, maker, stage, blank=False)
            blank, _, _ = stage_accuracy(model, maker, stage, blank=True)
            row += ["%.4f" % acc, "%.4f" % blank, "%.4f" % chance]
            report.append("%s %.3f/%.3f (chance %.3f, n %d)" % (stage, acc, blank, chance, count))
            if stage == curriculum.STAGES[counters["stage"]] and acc >= GATES[stage] and \
                    blank <= chance + BLANK_MARGIN and counters["stage"] < len(GATES) - 1:
                counters["stage"] += 1
                report.append("passed")
        writer.writerow(row)
        log.flush()
        print("stages at step %d (%d tokens): %s" % (counters["step"], counters["tokens_seen"],
                                                     "; ".join(report)), flush=True)

    rng = random.Random("stage-rows/%d/%d" % (args.seed, counters["step"]))
    run_seconds, next_eval = 0.0, 0.0
    sums = {"loss": 0.0, "steps": 0, "tokens": 0, "time": 0.0}
    while run_seconds < args.minutes * 60:
        if run_seconds >= next_eval:
            evaluate()
            checkpoint()
            next_eval = run_seconds + args.eval_minutes * 60
        t0 = time.time()
        current = counters["stage"]
        stage = curriculum.STAGES[current if current == 0 or rng.random() < 0.8
                                  else rng.randrange(current)]
        batch = stack([maker.row(rng, stage) for _ in range(ROWS_PER_STEP[stage])])
        lr = args.lr * min(1.0, (counters["step"] - counters["warm_from"] + 1) / args.warmup)
        for group in opt.param_groups:
            group["lr"] = lr
        loss = train.batch_loss(model, batch, "cpu")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        dt = time.time() - t0
        counters["step"] += 1
        counters["tokens_seen"] += batch["tokens"]
        counters["train_seconds"] += dt
        run_seconds += dt
        for key, value in (("loss", loss.item()), ("steps", 1), ("tokens", batch["tokens"]),
                           ("time", dt)):
            sums[key] += value
        if counters["step"] % 20 == 0:
            print("step %d tokens %d stage %s loss %.4f lr %.5f tok/s %.0f" % (
                counters["step"], counters["tokens_seen"], curriculum.STAGES[counters["stage"]],
                sums["loss"] / sums["steps"], lr, sums["tokens"] / sums["time"]), flush=True)
            sums = dict.fromkeys(sums, 0)
    evaluate()
    checkpoint()
    if args.save_weights:
        weights = {k: v.detach().cpu().to(torch.float16) for k, v in model.state_dict().items()}
        train.save_atomic({"config": config.to_dict(), "model": weights,
                           "counters": dict(counters)}, args.save_weights)


if __name__ == "__main__":
    main()
