"""Trains needle-nano: one generated conversation per step, the session mask, loss on the
assistant's tokens. Resumable: `latest.pt` in the work directory holds the model, the optimiser
and the step; the data of step s is conversation s of the training generator, so a resumed run
sees exactly the data an uninterrupted one would.
"""

import argparse
import csv
import json
import math
import os
import random
import time

import torch
import torch.nn.functional as F

import evaluate
import needle_data
import needle_format
from model import Config, NeedleNano, SessionLayout, pad_to_window
from spm_tokenizer import Tokenizer

WINDOWS = [64, 80, 96, 112, 128]  # a window per conversation, drawn from these


def window_for(seed, step):
    return random.Random("window/%d/%d" % (seed, step)).choice(WINDOWS)


def batch_of(rendered, window):
    ids = torch.tensor([pad_to_window(rendered.ids, window)])
    loss = torch.tensor([pad_to_window(rendered.loss, window)], dtype=torch.bool)
    sink = torch.tensor([pad_to_window(rendered.sink, window)], dtype=torch.bool)
    return ids, loss, sink


def conversation_loss(model, rendered, window, sinks=True):
    """Mean cross-entropy over the assistant tokens of one conversation, and their count."""
    ids, loss_mask, sink = batch_of(rendered, window)
    logits = model(ids, SessionLayout(sink, window, sinks))
    targets = loss_mask[0, 1:]
    loss = F.cross_entropy(logits[0, :-1][targets], ids[0, 1:][targets])
    return loss, int(targets.sum())


def learning_rate(step, train_seconds, args):
    """Warm-up, then cosine decay to 10% over the planned steps or the time budget, whichever
    runs out first (on a shared CPU the speed is not known in advance)."""
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    progress = (step - args.warmup) / max(1, args.steps - args.warmup)
    if args.minutes:
        progress = max(progress, train_seconds / (args.minutes * 60))
    progress = min(1.0, progress)
    return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def save_atomic(obj, path):
    tmp = path + ".tmp"
    torch.save(obj, tmp)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--steps", type=int, default=4000, help="planned steps (the LR schedule)")
    ap.add_argument("--minutes", type=float, default=0,
                    help="training-time budget over all resumed runs (0: none)")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--d", type=int, default=192)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--ff", type=int, default=512)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--checkpoint-every", type=int, default=50)
    ap.add_argument("--eval-every", type=int, default=200)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    tok = Tokenizer.load(os.path.join(args.work_dir, "tokenizer.json"))
    latest = os.path.join(args.work_dir, "latest.pt")
    if os.path.exists(latest):
        state = torch.load(latest)
        config = Config(**state["config"])
    else:
        state = None
        config = Config(vocab=tok.size, d=args.d, n_layer=args.layers, n_head=args.heads,
                        n_kv=args.kv_heads, ff=args.ff)
    model = NeedleNano(config)
    decay = [p for n, p in model.named_parameters() if p.dim() == 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95))
    step, tokens_seen, train_seconds, best = 0, 0, 0.0, -1.0
    if state:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        step, tokens_seen = state["step"], state["tokens_seen"]
        train_seconds, best = state["train_seconds"], state["best"]
        print("resumed at step %d (%d tokens)" % (step, tokens_seen), flush=True)
    print("parameters: %d" % sum(p.numel() for p in model.parameters()), flush=True)

    gen = needle_data.ConversationGenerator(args.seed, "train")
    eval_gen = needle_data.ConversationGenerator(args.seed + 1, "eval", min_turns=32, max_turns=32)
    eval_convs = [eval_gen.generate(i) for i in range(4)]
    log_path = os.path.join(args.work_dir, "loss.csv")
    new_log = not os.path.exists(log_path)
    log = open(log_path, "a", newline="")
    writer = csv.writer(log)
    if new_log:
        writer.writerow(["step", "tokens_seen", "loss", "lr", "train_seconds", "tokens_per_s",
                         "eval_exact_match"])

    def checkpoint(path):
        save_atomic({"config": config.to_dict(), "model": model.state_dict(),
                     "optimizer": opt.state_dict(), "step": step, "tokens_seen": tokens_seen,
                     "train_seconds": train_seconds, "best": best, "seed": args.seed}, path)

    window_loss, window_steps, window_tokens, window_time = 0.0, 0, 0, 0.0
    while step < args.steps:
        if args.minutes and train_seconds >= args.minutes * 60:
            break
        t0 = time.time()
        window = window_for(args.seed, step)
        rendered = needle_format.render(gen.generate(step), tok)
        for group in opt.param_groups:
            group["lr"] = learning_rate(step, train_seconds, args)
        model.train()
        loss, _ = conversation_loss(model, rendered, window)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        tokens_seen += len(rendered.ids)
        dt = time.time() - t0
        train_seconds += dt
        window_loss += loss.item()
        window_steps += 1
        window_tokens += len(rendered.ids)
        window_time += dt
        exact = ""
        finishing = step == args.steps or (args.minutes and train_seconds >= args.minutes * 60)
        if step % args.eval_every == 0 or finishing:
            model.eval()
            with torch.no_grad():
                exact = evaluate.exact_match(model, tok, eval_convs, 96)["exact_match"]
            if exact >= best:
                best = exact
                checkpoint(os.path.join(args.work_dir, "best.pt"))
        if step % 10 == 0 or exact != "":
            mean_loss = window_loss / window_steps
            writer.writerow([step, tokens_seen, "%.4f" % mean_loss,
                             "%.6f" % opt.param_groups[0]["lr"], "%.1f" % train_seconds,
                             "%.0f" % (window_tokens / max(window_time, 1e-9)), exact])
            log.flush()
            print("step %d tokens %d loss %.4f tok/s %.0f %s" % (
                step, tokens_seen, mean_loss, window_tokens / max(window_time, 1e-9),
                "exact %.3f" % exact if exact != "" else ""), flush=True)
            window_loss, window_steps, window_tokens, window_time = 0.0, 0, 0, 0.0
        if step % args.checkpoint_every == 0:
            checkpoint(latest)
    checkpoint(latest)
    with open(os.path.join(args.work_dir, "train_state.json"), "w") as f:
        json.dump({"step": step, "tokens_seen": tokens_seen, "train_seconds": train_seconds,
                   "best_eval_exact_match": best, "config": config.to_dict()}, f, indent=1)


if __name__ == "__main__":
    main()
