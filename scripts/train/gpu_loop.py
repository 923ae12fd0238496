"""The GPU training loop (train.py --packed; run.py's gpu and gpu-tiny presets), written for
throughput where train.padded_loop is written for a CPU:

- packed fixed-shape rows (packed_batches.py): several whole conversations per row, the mask per
  document, every position a real token but for a few gaps, instead of rows padded to the
  longest conversation;
- attention per chunk of 128 queries (packed_attention.py): window and sink keys in one call,
  no score tensor over a row, no padding of the sinks to the batch's largest block;
- every size and index that depends on the data computed in the data workers, so that a step
  never waits for the host; the loss summed on the device and read every --log-every steps;
- logits only at the positions whose next token has a loss weight;
- torch.compile and fused AdamW where this PyTorch has them (chosen at start and printed).

It starts by timing the padded step (train.batch_loss, its loss read every step, AdamW as the
padded loop builds it) and the packed step side by side for --compare-seconds, on the same
machine and the same weights (restored afterwards), after checking that both give the same loss
on the same documents (a compiler failure on that first step leaves the step eager, printed);
printed and appended to <work>/step_timing.csv. Then it trains, with the
diagnostics every --diag-minutes and weights-only checkpoints (fp16, no optimizer state, as the
repository keeps them): latest.pt every --checkpoint-every steps and at the end, stable.pt where
the decay starts.
"""

import csv
import inspect
import os
import time

import torch

import batches
import induction
import packed_batches
from model import stack_padded
from packed_attention import HAS_SDPA, packed_loss
from train import Run, autocast, batch_loss, make_optimizer

TENSORS = ("ids", "pos", "doc", "n_sink", "chunk_sinks", "chunk_sink_valid", "loss_index",
           "loss_target", "loss_weight", "weight_sum", "window")
CHECK_DOCUMENTS = 8  # documents of the first packed batch the padded step also scores
CHECK_TOLERANCE = 0.05  # bfloat16 (test_packed_step.py: within 2e-2 on the CPU)
TIMING_STEPS = 3  # distinct conversation steps, cycled while timing
TIMING_FIELDS = ["date", "device", "torch", "attention", "compiled", "adamw", "padded_batch",
                 "padded_tokens_per_s", "packed_shape", "packed_tokens_per_s", "gain",
                 "padded_peak_gb", "packed_peak_gb", "check_padded_loss", "check_packed_loss",
                 "check_compiled_loss"]


def features(args):
    """What this PyTorch offers the loop, by detection rather than by version number."""
    cuda = args.device.startswith("cuda")
    return {"attention": "scaled_dot_product_attention" if HAS_SDPA else "by hand (no SDPA)",
            "compiled": hasattr(torch, "compile") and not args.no_compile,
            "fused_adamw": cuda and "fused" in inspect.signature(torch.optim.AdamW).parameters}


def to_device(batch, device):
    return {k: batch[k].to(device, non_blocking=True) for k in TENSORS}


def synchronize(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def peak_gb(device):
    return torch.cuda.max_memory_allocated() / 2**30 if device.startswith("cuda") else 0.0


class PackedStep:
    """One optimizer step on a packed batch; returns the loss as a device tensor (no sync).
    Compiled once per batch shape (a conversation step's, an induction step's)."""

    def __init__(self, run, compiled):
        device = run.args.device

        def loss(model, batch):
            with autocast(device):
                return packed_loss(model, batch)

        self.run = run
        self.eager_loss = loss
        self.loss = torch.compile(loss, dynamic=False) if compiled else loss

    def __call__(self, batch, lr, opt):
        for group in opt.param_groups:
            group["lr"] = lr
        self.run.model.train()
        loss = self.loss(self.run.model, batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if self.run.args.clip > 0:
            torch.nn.utils.clip_grad_norm_(self.run.model.parameters(), self.run.args.clip)
        opt.step()
        return loss.detach()


def padded_step(run, opt, batch, lr):
    """train.padded_loop's step, loss read included."""
    for group in opt.param_groups:
        group["lr"] = lr
    run.model.train()
    loss = batch_loss(run.model, batch, run.args.device)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss.item()


def timed(step, inputs, seconds, device):
    """Tokens per second of step(input) over `seconds`, the inputs cycled, after one warm-up
    pass (compilation)."""
    for item, _ in inputs:
        step(item)
    synchronize(device)
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    count = tokens = 0
    start = time.time()
    while time.time() - start < seconds:
        item, item_tokens = inputs[count % len(inputs)]
        step(item)
        count += 1
        tokens += item_tokens
    synchronize(device)
    return tokens / (time.time() - start), count


def halve(batch):
    """The padded batch with half its conversations (when the padded step runs out of memory)."""
    rows = batch["ids"].shape[0] // 2
    out = dict(batch, **{k: batch[k][:rows] for k in ("ids", "weight", "sink")})
    return dict(out, tokens=int((out["ids"] != 0).sum()))


def check_and_time(run, step, feats, lr):
    """The start of a run: the same loss from both steps on the same documents, then both steps
    timed side by side; the model's weights are restored afterwards."""
    args, device = run.args, run.args.device
    kinds = [induction.is_induction_step(args.seed, s, args.induction_rate)
             for s in range(run.step, run.step + 100)]
    steps = [run.step + i for i, k in enumerate(kinds) if not k][:TIMING_STEPS]
    induction_step = next((run.step + i for i, k in enumerate(kinds) if k), None)
    packed = [packed_batches.make_packed_batch(run.gen, run.tok, s, args) for s in steps]
    padded = [batches.make_batch(run.gen, run.tok, s, args) for s in steps]
    first = packed[0]
    docs = packed_batches.documents(first)[:CHECK_DOCUMENTS]
    alone, _, _, _ = packed_batches.pack_documents(docs, len(docs), args.row_length,
                                                   args.sink_capacity)
    alone["window"] = first["window"]
    saved = {k: v.detach().clone() for k, v in run.model.state_dict().items()}
    with torch.no_grad():
        old = batch_loss(run.model, dict(stack_padded(docs, int(first["window"])),
                                         window=int(first["window"])), device).item()
        new = step.eager_loss(run.model, to_device(alone, device)).item()
        eager = step.eager_loss(run.model, to_device(first, device)).item()
    packed_opt = make_optimizer(run.model, args, feats["fused_adamw"])
    try:  # a whole step, so that the backward compiles too; its loss is the forward's
        compiled = step(to_device(first, device), lr, packed_opt).item()
    except Exception as error:  # noqa: BLE001  (any failure of the compiler: train eager)
        if step.loss is step.eager_loss:
            raise
        print("torch.compile failed (%s: %s): the step runs eager" % (
            type(error).__name__, str(error).splitlines()[0] if str(error) else ""), flush=True)
        step.loss = step.eager_loss
        feats["compiled"] = False
        compiled = step(to_device(first, device), lr, packed_opt).item()
    print("check on %d documents: padded step loss %.5f, packed %.5f; whole first batch packed "
          "%.5f, %s %.5f" % (len(docs), old, new, eager,
                             "compiled" if feats["compiled"] else "in a step", compiled),
          flush=True)
    if abs(old - new) > CHECK_TOLERANCE or abs(eager - compiled) > CHECK_TOLERANCE:
        raise SystemExit("the packed step's loss differs from the padded step's: not training")

    half = args.compare_seconds / 2
    padded_opt = make_optimizer(run.model, args, False)
    padded_inputs = [(b, b["tokens"]) for b in padded]
    while True:
        try:
            old_speed, old_steps = timed(lambda b: padded_step(run, padded_opt, b, lr),
                                         padded_inputs, half, device)
            break
        except torch.cuda.OutOfMemoryError:
            run.model.zero_grad(set_to_none=True)
            halved = [halve(b) for b, _ in padded_inputs]
            padded_inputs = [(b, b["tokens"]) for b in halved]
            torch.cuda.empty_cache()
            print("padded step out of memory: timing %d conversations a step" %
                  padded_inputs[0][0]["ids"].shape[0], flush=True)
    old_peak = peak_gb(device)
    new_speed, new_steps = timed(lambda b: step(to_device(b, device), lr, packed_opt),
                                 [(b, b["tokens"]) for b in packed], half, device)
    new_peak = peak_gb(device)
    if induction_step is not None:  # its shape compiles here, not in the training time
        step(to_device(packed_batches.make_packed_batch(run.gen, run.tok, induction_step, args),
                       device), lr, packed_opt)
    run.model.load_state_dict(saved)
    run.model.zero_grad(set_to_none=True)
    name = torch.cuda.get_device_name() if device.startswith("cuda") else "cpu"
    shape = "%dx%d" % tuple(first["ids"].shape)
    print("step timing on %s: padded %.0f tokens/s (%d steps of %d conversations, peak %.1f GB), "
          "packed %.0f tokens/s (%d steps of %s, peak %.1f GB): %.2fx" % (
              name, old_speed, old_steps, padded_inputs[0][0]["ids"].shape[0], old_peak,
              new_speed, new_steps, shape, new_peak, new_speed / old_speed), flush=True)
    path = os.path.join(args.work_dir, "step_timing.csv")
    new_file = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        writer = csv.writer(f)
        if new_file:
            writer.writerow(TIMING_FIELDS)
        writer.writerow([time.strftime("%Y-%m-%d %H:%M"), name, torch.__version__,
                         feats["attention"], feats["compiled"],
                         "fused" if feats["fused_adamw"] else "default",
                         padded_inputs[0][0]["ids"].shape[0], "%.0f" % old_speed, shape,
                         "%.0f" % new_speed, "%.2f" % (new_speed / old_speed),
                         "%.1f" % old_peak, "%.1f" % new_peak, "%.5f" % old, "%.5f" % new,
                         "%.5f" % compiled])


def main(args):
    feats = features(args)
    print("packed loop: attention %s; torch.compile %s; AdamW %s (torch %s)" % (
        feats["attention"], "yes" if feats["compiled"] else "no",
        "fused" if feats["fused_adamw"] else "default", torch.__version__), flush=True)
    run = Run(args, fused_adamw=feats["fused_adamw"])
    if args.save_weights_now:
        run.save_weights(args.save_weights, False)
        return
    step = PackedStep(run, feats["compiled"])
    # The workers start rendering while the steps are checked and timed.
    stream = batches.batch_stream(run.gen, run.tok, run.step, args,
                                  make=packed_batches.make_packed_batch)
    if args.compare_seconds > 0:
        check_and_time(run, step, feats, run.learning_rate(0.0))
    device = args.device
    run_seconds, next_diag, decaying = 0.0, 0.0, False
    zero = torch.zeros((), device=device)
    sums = {"loss": zero, "copy_loss": zero}  # on the device, read every --log-every steps
    counts = {"steps": 0, "copy_steps": 0, "tokens": 0, "skipped": 0, "documents": 0}
    data_time, interval_start = 0.0, time.time()
    while run_seconds < args.minutes * 60:
        t0 = time.time()
        if run_seconds >= next_diag:
            synchronize(device)
            diag_start = time.time()
            run.run_diagnostics()
            next_diag = run_seconds + args.diag_minutes * 60
            interval_start += time.time() - diag_start  # not training time
            t0 += time.time() - diag_start
        lr = run.learning_rate(run_seconds)
        if run.starts_decay(lr, decaying):
            decaying = True
            run.save_weights(os.path.join(args.work_dir, "stable.pt"), False)
            if args.save_weights:
                run.save_weights(args.save_weights, False)
        wait = time.time()
        batch = next(stream)
        data_time += time.time() - wait
        assert batch["step"] == run.step
        loss = step(to_device(batch, device), lr, run.opt)
        key = "copy_loss" if batch["induction"] else "loss"
        sums[key] = sums[key] + loss
        counts["copy_steps" if batch["induction"] else "steps"] += 1
        for k in ("tokens", "skipped", "documents"):
            counts[k] += batch[k]
        run.step += 1
        run.tokens_seen += batch["tokens"]
        dt = time.time() - t0
        run.train_seconds += dt
        run_seconds += dt
        if run.step % args.log_every == 0:
            loss_sum, copy_sum = torch.stack([sums["loss"], sums["copy_loss"]]).tolist()
            elapsed = time.time() - interval_start
            speed = counts["tokens"] / max(elapsed, 1e-9)
            mean_loss = loss_sum / max(counts["steps"], 1)
            max_turns, aux_rate = run.log_row(lr, speed, mean_loss, data_time / elapsed,
                                              args.rows)
            print("step %d tokens %d loss %.4f copy loss %.4f lr %.5f tok/s %.0f turns<=%d aux "
                  "%.2f data %.0f%% documents/step %.1f skipped %d peak %.1f GB" % (
                      run.step, run.tokens_seen, mean_loss,
                      copy_sum / max(counts["copy_steps"], 1), lr, speed, max_turns, aux_rate,
                      100 * data_time / elapsed, counts["documents"] / args.log_every,
                      counts["skipped"], peak_gb(device)), flush=True)
            sums = {"loss": zero, "copy_loss": zero}
            counts = dict.fromkeys(counts, 0)
            data_time, interval_start = 0.0, time.time()
        if run.step % args.checkpoint_every == 0:
            run.save_weights(os.path.join(args.work_dir, "latest.pt"), decaying)
    run.save_weights(os.path.join(args.work_dir, "latest.pt"), decaying)
    run.run_diagnostics()
