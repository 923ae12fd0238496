"""Checks the GPU loop's packed step (packed_batches.py, packed_attention.py) against the padded
step of train.py, which test_session_mask.py checks against the mask's formula:

1. documents with prefix sinks of many sizes (a single sink, sinks longer than a chunk, a
   document inside one chunk, documents sharing chunks, and a sink capacity small enough to force
   the packer to start a document at a chunk boundary), packed several to a row: every position's
   logits equal those of the document alone under model.SessionLayout, for windows 64 and 128,
   with grouped KV heads;
2. the loss of the packed batch equals the padded batch's (train.batch_loss) on the same
   documents, in float32 (1e-5) and in bfloat16 autocast (2e-2), and packing one document per row
   gives the same loss as several per row;
3. with a tokenizer (WORK_DIR/tokenizer.json, as run.py writes it): real steps, a conversation
   step and an induction step of make_packed_batch, against make_batch-style padded batches of
   the same documents.

  python3 scripts/train/test_packed_step.py [WORK_DIR/tokenizer.json]
"""

import itertools
import random
import sys
from types import SimpleNamespace

import blas_setup  # noqa: F401  (before torch: OpenBLAS picks its kernels as it loads)
import torch

import induction
import packed_batches
from model import Config, NeedleNano, SessionLayout, stack_padded
from packed_attention import PackedLayout, packed_loss
from train import autocast, batch_loss

VOCAB = 97


def synthetic_documents(rng):
    """(ids, weight, sink) lists: (length, sinks) chosen to cover the layout's cases."""
    shapes = [(700, 150), (300, 40), (90, 89), (260, 1), (40, 1), (420, 200), (130, 64),
              (1, 1), (520, 7)]
    docs = []
    for length, sinks in shapes:
        ids = [1] + [rng.randrange(2, VOCAB) for _ in range(length - 1)]
        weight = [0.0] * sinks + [rng.choice([0.0, 0.1, 1.0]) for _ in range(length - sinks)]
        docs.append((ids, weight, [True] * sinks + [False] * (length - sinks)))
    return docs


def padded_batch(docs, window):
    """train.py's form: the documents as rows padded to one length (batches.make_batch)."""
    return dict(stack_padded(docs, window), window=window)


def packed(docs, rows, length, capacity, window):
    tensors, tokens, count, skipped = packed_batches.pack_documents(docs, rows, length, capacity)
    assert count == len(docs) and skipped == 0, "the test's documents must all fit"
    return dict(tensors, window=torch.tensor(window))


def placements(batch, docs):
    """Row and start of each document in the packed batch (documents are numbered in order)."""
    out = []
    for number in range(len(docs)):
        row, where = torch.nonzero(batch["doc"] == number, as_tuple=True)
        out.append((int(row[0]), int(where[0])))
    return out


def check_logits(model, docs, window):
    batch = packed(docs, rows=3, length=1024, capacity=256, window=window)
    with torch.no_grad():
        logits = torch.nn.functional.linear(model.hidden(batch["ids"], PackedLayout(batch)),
                                            model.embed.weight)
        worst = 0.0
        for (ids, _, sink), (row, start) in zip(docs, placements(batch, docs)):
            alone = padded_batch([(ids, [0.0] * len(ids), sink)], window)
            ref = model(alone["ids"], SessionLayout(alone["sink"], window))[0, :len(ids)]
            worst = max(worst, float((ref - logits[row, start:start + len(ids)]).abs().max()))
    shared = int((batch["doc"][:, ::packed_batches.CHUNK] !=
                  batch["doc"][:, packed_batches.CHUNK - 1::packed_batches.CHUNK]).sum())
    print("W %d: largest logit difference from each document alone %.2e (%d chunks shared by "
          "documents)" % (window, worst, shared))
    assert shared > 0, "the test should pack documents into shared chunks"
    assert worst < 1e-4, "packed attention differs from the session mask"


def check_loss(model, docs, window, bf16, tolerance):
    with torch.no_grad(), autocast("cpu", bf16):
        old = float(batch_loss(model, padded_batch(docs, window), "cpu", bf16))
        new = float(packed_loss(model, packed(docs, 3, 1024, 256, window)))
        alone = float(packed_loss(model, packed(docs, len(docs), 1024, 1024, window)))
    print("W %d %s: padded loss %.6f, packed %.6f, one per row %.6f" % (
        window, "bf16" if bf16 else "fp32", old, new, alone))
    assert abs(old - new) < tolerance and abs(alone - new) < tolerance, "losses differ"


def check_real_steps(model, tokenizer_path):
    import needle_data
    from spm_tokenizer import Tokenizer
    tok = Tokenizer.load(tokenizer_path)
    args = SimpleNamespace(seed=1234, induction_rate=0.5, batch=4, curriculum=400, aux_start=0.35,
                           aux_end=0.1, rows=2, row_length=8192, sink_capacity=1024)
    gen = needle_data.ConversationGenerator(args.seed, "train", random_id_rate=0.4)
    kinds = {}
    for step in range(40, 80):
        batch = packed_batches.make_packed_batch(gen, tok, step, args)
        kinds.setdefault(batch["induction"], (step, batch))
        if len(kinds) == 2:
            break
    for is_induction, (step, batch) in sorted(kinds.items()):
        docs = packed_batches.documents(batch)
        rendered = induction.induction_rows(tok, step, int(batch["window"]), args.seed) \
            if is_induction else packed_batches.step_conversations(gen, tok, step, args)
        # Weights as float32 (the batch's dtype); the first token is no target of its document.
        expected = [(ids, [0.0] + torch.tensor(weight[1:]).tolist(), [bool(s) for s in sink])
                    for ids, weight, sink in itertools.islice(rendered, len(docs))]
        assert batch["skipped"] == 0 and docs == expected, "packing changed a document"
        window = int(batch["window"])
        with torch.no_grad():
            old = float(batch_loss(model, padded_batch(docs, window), "cpu"))
            new = float(packed_loss(model, batch))
        print("step %d (%s, W %d): %d documents, %d tokens in %d x %d; padded loss %.6f, packed "
              "%.6f" % (step, "induction" if is_induction else "conversations", window,
                        batch["documents"], batch["tokens"], *batch["ids"].shape, old, new))
        assert abs(old - new) < 1e-5, "losses differ on a real step"


def main():
    torch.manual_seed(0)
    model = NeedleNano(Config(vocab=VOCAB, d=32, n_layer=2, n_head=4, n_kv=2, ff=64))
    with torch.no_grad():  # weights far from the small initial ones: sharp attention, so that
        for p in model.parameters():  # a key seen wrongly moves the logits visibly
            p.mul_(8 if p.dim() == 2 else 1)
    docs = synthetic_documents(random.Random(0))
    for window in (64, 128):
        check_logits(model, docs, window)
    for window in (64, 128):
        check_loss(model, docs, window, False, 1e-5)
        check_loss(model, docs, window, True, 2e-2)
    if len(sys.argv) > 1:
        tok_model = NeedleNano(Config(vocab=2048, d=32, n_layer=2, n_head=2, n_kv=2, ff=64))
        check_real_steps(tok_model, sys.argv[1])
    print("packed step: ok")


if __name__ == "__main__":
    main()
