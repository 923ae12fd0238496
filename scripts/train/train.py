"""Trains needle-nano under the session mask, loss on the assistant's tokens (weighted, see
needle_format.LOSS_WEIGHTS), in runs that add up.

Data (batches.py): step s trains on conversations s*B .. s*B+B-1 of the training generator
(B = --batch). The curriculum grows the conversations from one turn to 40 over the first
--curriculum conversations and shrinks the share of auxiliary retrieval turns (needle_aux.py)
from --aux-start to --aux-end; --random-id-rate of the conversations name their tools with fresh
nonsense.

Schedule: warm-up, then a constant learning rate (stable), and in the last --decay-fraction of a
run's --minutes a linear decay to 10% (warmup-stable-decay). The state at the start of the decay
is kept as stable.pt; the next run resumes from it (or from latest.pt when a run stopped before
its decay), so runs add up as if the stable phase had never paused. With no state in the work
directory, a run starts from the repository's weights (--init), else from scratch.

Logs in the work directory: loss.csv (every 10 steps) and diagnostics.csv (diagnostics.py, every
--diag-minutes of training time).
"""

import argparse
import csv
import os
import time

import blas_setup  # noqa: F401  (before torch: OpenBLAS picks its kernels as it loads)
import torch
import torch.nn.functional as F

import batches
import diagnostics
import gguf_import
import needle_data
from model import Config, NeedleNano, SessionLayout
from spm_tokenizer import Tokenizer

LOSS_FIELDS = ["step", "tokens_seen", "loss", "lr", "train_seconds", "tokens_per_s", "max_turns",
               "aux_rate", "batch", "data_share"]


def autocast(device, bf16=None):
    """bfloat16 autocast, on a GPU unless told otherwise."""
    return torch.autocast(device_type="cuda" if device.startswith("cuda") else "cpu",
                          dtype=torch.bfloat16,
                          enabled=device.startswith("cuda") if bf16 is None else bf16)


def batch_loss(model, batch, device, bf16=None):
    """Weighted mean cross-entropy over the assistant tokens of the batch's conversations."""
    ids = batch["ids"].to(device, non_blocking=True)
    weight = batch["weight"].to(device, non_blocking=True)
    sink = batch["sink"].to(device, non_blocking=True)
    with autocast(device, bf16):
        logits = model(ids, SessionLayout(sink, batch["window"]))
    ce = F.cross_entropy(logits[:, :-1].float().reshape(-1, logits.shape[-1]),
                         ids[:, 1:].reshape(-1), reduction="none")
    w = weight[:, 1:].reshape(-1)
    return (ce * w).sum() / w.sum()


def learning_rate(step, run_seconds, args):
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    decay_start = args.minutes * 60 * (1 - args.decay_fraction)
    if run_seconds < decay_start:
        return args.lr
    progress = min(1.0, (run_seconds - decay_start) / (args.minutes * 60 - decay_start))
    return args.lr * (1 - 0.9 * progress)


def save_atomic(obj, path):
    tmp = path + ".tmp"
    torch.save(obj, tmp)
    os.replace(tmp, path)


def load_state(work_dir, init):
    """The state to resume from: (state dict or None, where it came from)."""
    latest, stable = os.path.join(work_dir, "latest.pt"), os.path.join(work_dir, "stable.pt")
    if os.path.exists(latest):
        state = torch.load(latest, map_location="cpu")
        if not state.get("decayed"):
            return state, latest
    if os.path.exists(stable):
        return torch.load(stable, map_location="cpu"), stable
    if init and os.path.exists(init):
        if init.endswith(".gguf"):
            return gguf_import.load_state(init), init
        return torch.load(init, map_location="cpu"), init
    return None, "scratch"


def save_weights(model, config, counters, path):
    """The repository's form of the state: fp16 weights and the counters, no optimizer (a
    resumed run warms its fresh optimizer up again)."""
    weights = {k: v.detach().cpu().to(torch.float16) for k, v in model.state_dict().items()}
    save_atomic(dict(counters, config=config.to_dict(), model=weights, weights_only=True), path)


def open_log(path, fields):
    """Appends to the CSV; a log written with fewer fields (an earlier run's) gets the new
    header, its old rows left empty in the new columns."""
    if os.path.exists(path):
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
            old_fields = rows and list(rows[0].keys())
        if old_fields and old_fields != fields:
            with open(path, "w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=fields, restval="")
                writer.writeheader()
                writer.writerows(rows)
    new = not os.path.exists(path)
    handle = open(path, "a", newline="")
    writer = csv.writer(handle)
    if new:
        writer.writerow(fields)
    return handle, writer


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--init", default="",
                    help="weights to start from when the work dir has none: the repository's fp16 "
                         "state (.pt) or a needle-nano GGUF (gguf_import.py)")
    ap.add_argument("--save-weights", default="", help="also write the stable weights here")
    ap.add_argument("--save-weights-now", action="store_true",
                    help="write the state a run would resume from to --save-weights and exit "
                         "(after a run stopped before its decay)")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--minutes", type=float, default=60, help="this run's training time")
    ap.add_argument("--decay-fraction", type=float, default=0.15)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--batch", type=int, default=1, help="conversations per step")
    ap.add_argument("--curriculum", type=int, default=8000,
                    help="conversations over which the curriculum reaches its end")
    ap.add_argument("--aux-start", type=float, default=0.35)
    ap.add_argument("--aux-end", type=float, default=0.10)
    ap.add_argument("--random-id-rate", type=float, default=0.4)
    ap.add_argument("--overlap-rate", type=float, default=0.0,
                    help="share of conversations whose descriptions name their queries' words "
                         "(word_overlap.py)")
    ap.add_argument("--clip", type=float, default=1.0,
                    help="gradient norm clipped to this (0: none); see induction.py on copying")
    ap.add_argument("--induction-rate", type=float, default=0.3,
                    help="share of steps that train copying on repeated random pieces (induction.py)")
    ap.add_argument("--d", type=int, default=192)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--heads", type=int, default=6)
    ap.add_argument("--kv-heads", type=int, default=6)
    ap.add_argument("--ff", type=int, default=384)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--workers", type=int, default=0, help="data worker processes (0: none)")
    ap.add_argument("--checkpoint-every", type=int, default=50)
    ap.add_argument("--diag-minutes", type=float, default=10)
    ap.add_argument("--packed", action="store_true",
                    help="the GPU loop (gpu_loop.py): packed fixed-shape rows, compiled step")
    ap.add_argument("--rows", type=int, default=8, help="packed rows per conversation step")
    ap.add_argument("--row-length", type=int, default=8192, help="tokens per packed row")
    ap.add_argument("--sink-capacity", type=int, default=1024,
                    help="sink slots per chunk of 128 queries (packed_attention.py)")
    ap.add_argument("--compare-seconds", type=float, default=20,
                    help="the packed loop first times the padded and the packed step this long")
    ap.add_argument("--log-every", type=int, default=50,
                    help="packed loop: steps between loss reads (each one waits for the device)")
    ap.add_argument("--no-compile", action="store_true", help="packed loop: no torch.compile")
    return ap.parse_args()


class Run:
    """What a training loop works on: the model and optimizer, the counters that make runs add
    up, the data generator, the diagnostics and the logs."""

    def __init__(self, args, fused_adamw=False):
        self.args = args
        self.tok = tok = Tokenizer.load(os.path.join(args.work_dir, "tokenizer.json"))
        state, source = load_state(args.work_dir, args.init)
        self.config = Config(**state["config"]) if state else Config(
            vocab=tok.size, d=args.d, n_layer=args.layers, n_head=args.heads, n_kv=args.kv_heads,
            ff=args.ff)
        self.model = NeedleNano(self.config).to(args.device)
        self.opt = make_optimizer(self.model, args, fused_adamw)
        self.step = self.tokens_seen = 0
        self.train_seconds = 0.0
        self.warm_from = 0
        if state:
            self.model.load_state_dict({k: v.float() for k, v in state["model"].items()})
            if "optimizer" in state:
                self.opt.load_state_dict(state["optimizer"])
            else:
                self.warm_from = state["step"]  # a fresh optimizer warms up again
            self.step = state["step"]
            self.tokens_seen, self.train_seconds = state["tokens_seen"], state["train_seconds"]
        print("from %s: step %d, %d tokens; parameters %d" % (
            source, self.step, self.tokens_seen,
            sum(p.numel() for p in self.model.parameters())), flush=True)
        self.gen = needle_data.ConversationGenerator(args.seed, "train",
                                                     random_id_rate=args.random_id_rate,
                                                     overlap_rate=args.overlap_rate)
        dev = [needle_data.ConversationGenerator(args.seed + 1, "eval", min_turns=16,
                                                 max_turns=16).generate(i) for i in range(4)]
        self.diag = diagnostics.Diagnostics(tok, dev)
        self.log, self.writer = open_log(os.path.join(args.work_dir, "loss.csv"), LOSS_FIELDS)
        self.diag_log, self.diag_writer = open_log(
            os.path.join(args.work_dir, "diagnostics.csv"), diagnostics.Diagnostics.FIELDS)

    def counters(self, decayed):
        return {"step": self.step, "tokens_seen": self.tokens_seen,
                "train_seconds": self.train_seconds, "seed": self.args.seed, "decayed": decayed}

    def checkpoint(self, path, decayed):
        weights = {k: v.detach().cpu() for k, v in self.model.state_dict().items()}
        save_atomic(dict(self.counters(decayed), config=self.config.to_dict(), model=weights,
                         optimizer=self.opt.state_dict()), path)

    def save_weights(self, path, decayed):
        save_weights(self.model, self.config, self.counters(decayed), path)

    def learning_rate(self, run_seconds):
        return learning_rate(self.step - self.warm_from, run_seconds, self.args)

    def starts_decay(self, lr, decaying):
        return lr < self.args.lr and not decaying and self.step - self.warm_from >= self.args.warmup

    def run_diagnostics(self):
        row = self.diag.measure(self.model)
        self.diag_writer.writerow([self.step, self.tokens_seen, "%.1f" % self.train_seconds] +
                                  ["%.4f" % row[f] for f in diagnostics.Diagnostics.FIELDS[3:]])
        self.diag_log.flush()
        print("diagnostics at step %d: %s" % (self.step, row), flush=True)

    def log_row(self, lr, speed, mean_loss, data_share, batch):
        # the curriculum point of the step just taken
        max_turns, aux_rate = batches.curriculum((self.step - 1) * self.args.batch,
                                                 self.args)
        self.writer.writerow([self.step, self.tokens_seen, "%.4f" % mean_loss, "%.6f" % lr,
                              "%.1f" % self.train_seconds, "%.0f" % speed, max_turns,
                              "%.3f" % aux_rate, batch, "%.3f" % data_share])
        self.log.flush()
        return max_turns, aux_rate


def make_optimizer(model, args, fused):
    decay = [p for n, p in model.named_parameters() if p.dim() == 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=args.lr, betas=(0.9, 0.95), **({"fused": True} if fused else {}))


def padded_loop(run):
    """The CPU recipe's loop (and the GPU loop's timing baseline): one padded batch per step,
    the loss read every step."""
    args, model, opt = run.args, run.model, run.opt
    stream = batches.batch_stream(run.gen, run.tok, run.step, args)
    run_seconds, next_diag, decaying = 0.0, 0.0, False
    # data_time: waiting for the next batch (rendering, or the workers falling behind the device)
    sums = {"loss": 0.0, "steps": 0, "tokens": 0, "time": 0.0, "data_time": 0.0,
            "copy_loss": 0.0, "copy_steps": 0}
    while run_seconds < args.minutes * 60:
        if run_seconds >= next_diag:
            run.run_diagnostics()
            next_diag = run_seconds + args.diag_minutes * 60
        lr = run.learning_rate(run_seconds)
        if run.starts_decay(lr, decaying):
            decaying = True
            run.checkpoint(os.path.join(args.work_dir, "stable.pt"), False)
            if args.save_weights:
                run.save_weights(args.save_weights, False)
        t0 = time.time()
        batch = next(stream)
        sums["data_time"] += time.time() - t0
        assert batch["step"] == run.step
        batch_tokens = batch["tokens"]
        for group in opt.param_groups:
            group["lr"] = lr
        model.train()
        loss = batch_loss(model, batch, args.device)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if args.clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        opt.step()
        run.step += 1
        run.tokens_seen += batch_tokens
        dt = time.time() - t0
        run.train_seconds += dt
        run_seconds += dt
        # The loss columns average the conversation steps only; induction steps are printed apart.
        kind = ("copy_loss", "copy_steps") if batch["induction"] else ("loss", "steps")
        for key, value in ((kind[0], loss.item()), (kind[1], 1), ("tokens", batch_tokens),
                           ("time", dt)):
            sums[key] += value
        if run.step % 10 == 0:
            speed = sums["tokens"] / max(sums["time"], 1e-9)
            mean_loss = sums["loss"] / max(sums["steps"], 1)
            data_share = sums["data_time"] / max(sums["time"], 1e-9)
            max_turns, aux_rate = run.log_row(lr, speed, mean_loss, data_share, args.batch)
            print("step %d tokens %d loss %.4f copy loss %.4f lr %.5f tok/s %.0f turns<=%d aux %.2f"
                  " data %.0f%%" % (run.step, run.tokens_seen, mean_loss,
                                    sums["copy_loss"] / max(sums["copy_steps"], 1), lr, speed,
                                    max_turns, aux_rate, 100 * data_share), flush=True)
            sums = dict.fromkeys(sums, 0)
        if run.step % args.checkpoint_every == 0:
            run.checkpoint(os.path.join(args.work_dir, "latest.pt"), decaying)
    run.checkpoint(os.path.join(args.work_dir, "latest.pt"), decaying)
    run.run_diagnostics()


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    if args.packed:
        import gpu_loop
        gpu_loop.main(args)
        return
    run = Run(args)
    if args.save_weights_now:
        run.save_weights(args.save_weights, False)
        return
    padded_loop(run)


if __name__ == "__main__":
    main()
