"""Induction steps: batches of repeated random letter pieces, mixed in between conversation steps.

Reading a pinned tool needs an induction (copy) circuit: find where the current token occurred
before and emit what followed it. In conversations the signal for it is thin (a name is a few
tokens of a long turn), and 2.9M tokens of them left the copy diagnostic at 0%. So a share of the
steps (--induction-rate) trains it directly, in the two places a call copies from:

  window rows  BOS, a span of 32 random letter pieces, the span again and again up to 2W tokens:
               every repeat is within the window;
  sink rows    BOS and a span pinned as sinks, random filler longer than the window, the span
               again: the repeat can only copy from the sinks, at their folded positions (the
               session mask of model.py), as a call copies a name from the tool block.

Four rows of a step are window rows, one a sink row, and three are lookup rows (lookup.py), which
train finding a tool by its description and copying its name, once the copy circuit had formed. Measured from scratch on one thread (d 192,
6 layers): fixed 32-piece spans within the window start forming the circuit within 150 steps of 8
rows, as repeats of 32 random ids do (0% to 99% copy accuracy between 200K and 380K tokens), while
spans of 4 to W/2 pieces mixed half and half with sink rows stayed at chance for 280 steps; and
clipping the gradient norm at 1.0 kept the copy task at 1% after 350 steps (train.py --clip).

Loss weight 1 on each repeated token after the first of its repeat (the first is not
predictable in a sink row), 0 on the rest. A step's batch is a pure function of (seed, step),
like the conversation batches (batches.py), so a resumed run sees the same data.
"""

import random

from lookup import lookup_row
from model import stack_padded

# The rows of an induction step (a conversation step has one conversation on the CPU).
ROW_KINDS = ["window"] * 4 + ["sink"] + ["lookup"] * 3
SPAN = 32


def is_induction_step(seed, step, rate):
    return random.Random("induction/%d/%d" % (seed, step)).random() < rate


def letter_pieces(tok):
    return [i for i, p in enumerate(tok.pieces) if p.isascii() and p.isalpha()]


def window_row(rng, letters, bos, window):
    span = [rng.choice(letters) for _ in range(SPAN)]
    ids = [bos]
    while len(ids) + len(span) <= 2 * window:
        ids += span
    weight = [0.0] * (2 + len(span)) + [1.0] * (len(ids) - 2 - len(span))
    return ids, weight, [True] + [False] * (len(ids) - 1)


def sink_row(rng, letters, bos, window):
    span = [rng.choice(letters) for _ in range(rng.randint(4, 24))]
    filler = [rng.choice(letters) for _ in range(window + rng.randint(0, 32))]
    ids = [bos] + span + filler + span
    weight = [0.0] * (len(ids) - len(span) + 1) + [1.0] * (len(span) - 1)
    return ids, weight, [True] * (1 + len(span)) + [False] * (len(filler) + len(span))


def make_row(kind, rng, tok, window):
    if kind == "lookup":
        return lookup_row(rng, tok, window)
    generator = window_row if kind == "window" else sink_row
    return generator(rng, letter_pieces(tok), tok.id("<s>"), window)


def induction_rows(tok, step, window, seed):
    """The rows of an induction step: (ids, weight, sink) lists, one per ROW_KINDS entry."""
    rng = random.Random("induction-rows/%d/%d" % (seed, step))
    return [make_row(kind, rng, tok, window) for kind in ROW_KINDS]


def make_induction_batch(tok, step, window, seed):
    """The batch of an induction step, in make_batch's form (batches.py)."""
    rows = induction_rows(tok, step, window, seed)
    return dict(stack_padded(rows, window), step=step, window=window,
                tokens=sum(len(ids) for ids, _, _ in rows), induction=True)
