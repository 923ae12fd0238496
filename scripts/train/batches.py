"""Training batches: step s is conversations s*B .. s*B+B-1 of the training generator, rendered,
padded to one length (a multiple of the step's window) and stacked:

  ids [B, T] long, weight [B, T] float (the loss weight of each token as a target), sink [B, T] bool

A batch is a pure function of its step, so data workers can render steps ahead in parallel
(--workers: worker w of N renders steps start+w, start+w+N, ...; the loader hands them back in
step order) and a resumed run sees the data an uninterrupted one would.
"""

import random

import torch

import induction
import needle_format
from model import stack_padded

WINDOWS = [64, 80, 96, 112, 128]  # a window per step, drawn from these


def window_for(seed, step):
    return random.Random("window/%d/%d" % (seed, step)).choice(WINDOWS)


def curriculum(index, args):
    """(turn cap, auxiliary-turn rate) of training conversation `index`: from one turn and
    --aux-start to 40 turns and --aux-end over the first --curriculum conversations."""
    progress = min(1.0, index / args.curriculum)
    return 1 + int(39 * progress), args.aux_start + (args.aux_end - args.aux_start) * progress


def make_batch(gen, tok, step, args):
    window = window_for(args.seed, step)
    if induction.is_induction_step(args.seed, step, args.induction_rate):
        return induction.make_induction_batch(tok, step, window, args.seed)
    first = step * args.batch
    rendered = [needle_format.render(gen.generate(i, *curriculum(i, args)), tok)
                for i in range(first, first + args.batch)]
    return dict(stack_padded([(r.ids, r.loss, r.sink) for r in rendered], window), step=step,
                window=window, tokens=sum(len(r.ids) for r in rendered), induction=False)


class StepBatches(torch.utils.data.IterableDataset):
    def __init__(self, gen, tok, start, args, make):
        super().__init__()
        self.gen, self.tok, self.start, self.args, self.make = gen, tok, start, args, make

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        worker, workers = (info.id, info.num_workers) if info else (0, 1)
        step = self.start + worker
        while True:
            yield self.make(self.gen, self.tok, step, self.args)
            step += workers


def batch_stream(gen, tok, start, args, make=make_batch):
    """Batches of steps start, start+1, ... in order; make(gen, tok, step, args) renders one
    (make_batch, or packed_batches.make_packed_batch for the GPU loop)."""
    dataset = StepBatches(gen, tok, start, args, make)
    if args.workers == 0:
        return iter(dataset)
    return iter(torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=args.workers,
                                            prefetch_factor=4, persistent_workers=True,
                                            pin_memory=args.device != "cpu"))
