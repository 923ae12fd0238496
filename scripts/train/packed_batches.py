"""Fixed-shape packed batches for the GPU loop (gpu_loop.py), rendered by the data workers.

A step is R rows of L tokens (--rows, --row-length; L a multiple of CHUNK): whole documents
(conversations, or the rows of an induction step) placed first-fit one after another, never
across rows. Everything that depends on the data is computed here, on a worker's CPU, so that the
step on the device has the same shapes every time and never waits for the host:

  ids [R, L] long            token ids (0 in the gaps)
  pos [R, L] long            position within its document: RoPE positions restart at 0
  doc [R, L] int32           document number within the row; each gap is a document of its own,
                             so that every query sees at least itself
  n_sink [R, L] long         its document's sink count S: a document's sinks are its first S
                             tokens (BOS through </tools>, or an induction row's pinned span)
  chunk_sinks [R, n, K] long the row positions of the sinks of every document that has a query
  chunk_sink_valid [R, n, K] in chunk c (n = L / CHUNK, K = --sink-capacity), padded with False
  loss_index [M] long        flat index r * L + t of each position whose next token has a
                             non-zero loss weight (M = LOSS_SHARE * R * L; padding: 0, weight 0)
  loss_target [M] long, loss_weight [M] float, weight_sum [] float
  window [] long             the step's window, a tensor so that the compiled step does not
                             specialise on it

Which conversations: step s renders conversations s * STRIDE, s * STRIDE + 1, ... of the training
generator, all at the curriculum point of conversation s * --batch (batches.curriculum), as many as
fit; so a step is still a pure function of s and the curriculum advances with the steps as in the
padded loop. An induction step (induction.is_induction_step) packs its eight rows into one row of
INDUCTION_LENGTH, so that the mix of steps and their tokens is the padded loop's.
"""

import numpy as np
import torch

import batches
import induction
import needle_format

CHUNK = 128  # queries per attention chunk (packed_attention.py); at least every window
assert max(batches.WINDOWS) <= CHUNK  # a chunk's window keys are the previous chunk and its own
STRIDE = 1 << 16  # conversation indices reserved per step
LOSS_SHARE = 0.5  # loss positions per token the step reserves; assistant tokens are 7-33%
# An induction step's eight rows (2,400 tokens at most, few sinks) in a smaller shape of its own.
INDUCTION_ROWS, INDUCTION_LENGTH, INDUCTION_SINK_CAPACITY = 1, 4096, 512
MISSES = 4  # a step stops rendering after this many documents in a row that did not fit


class Packer:
    """First-fit placement of whole documents into rows, within the per-chunk sink capacity and
    the step's loss capacity."""

    def __init__(self, rows, length, sink_capacity):
        assert length % CHUNK == 0
        self.rows, self.length, self.capacity = rows, length, sink_capacity
        self.loss_capacity = int(LOSS_SHARE * rows * length)
        self.fill = [0] * rows
        self.chunk_sinks = np.zeros((rows, length // CHUNK), dtype=np.int64)  # sinks per chunk
        self.placed = []  # (row, start, ids, weight, n_sink)
        self.loss_count = 0

    def place(self, ids, weight, sink):
        """Places the document, or returns False when it fits nowhere."""
        n_sink = sum(sink)
        assert all(sink[:n_sink]) and not any(sink[n_sink:]), "sinks must be a prefix"
        losses = sum(1 for w in weight[1:] if w > 0)
        if n_sink > self.capacity or self.loss_count + losses > self.loss_capacity:
            return False
        for row in range(self.rows):
            start = self.fill[row]
            # Only the document's first chunk can be shared with documents before it.
            if start % CHUNK and self.chunk_sinks[row, start // CHUNK] + n_sink > self.capacity:
                start += CHUNK - start % CHUNK
            if start + len(ids) > self.length:
                continue
            self.chunk_sinks[row, start // CHUNK:(start + len(ids) - 1) // CHUNK + 1] += n_sink
            self.fill[row] = start + len(ids)
            self.placed.append((row, start, ids, weight, n_sink))
            self.loss_count += losses
            return True
        return False

    def tensors(self):
        R, L, K, C = self.rows, self.length, self.capacity, CHUNK
        ids = np.zeros((R, L), dtype=np.int64)
        pos = np.zeros((R, L), dtype=np.int64)
        doc = np.zeros((R, L), dtype=np.int32)
        n_sink = np.zeros((R, L), dtype=np.int64)
        chunk_sinks = np.zeros((R, L // C, K), dtype=np.int64)
        chunk_count = np.zeros((R, L // C), dtype=np.int64)
        loss_index, loss_target, loss_weight = [], [], []
        taken = np.zeros((R, L), dtype=bool)
        for number, (row, start, d_ids, d_weight, d_sink) in enumerate(self.placed):
            end = start + len(d_ids)
            ids[row, start:end] = d_ids
            pos[row, start:end] = np.arange(len(d_ids))
            doc[row, start:end] = number
            n_sink[row, start:end] = d_sink
            taken[row, start:end] = True
            for c in range(start // C, (end - 1) // C + 1):
                chunk_sinks[row, c, chunk_count[row, c]:chunk_count[row, c] + d_sink] = \
                    np.arange(start, start + d_sink)
                chunk_count[row, c] += d_sink
            targets = [t for t in range(1, len(d_ids)) if d_weight[t] > 0]
            loss_index += [row * L + start + t - 1 for t in targets]
            loss_target += [d_ids[t] for t in targets]
            loss_weight += [d_weight[t] for t in targets]
        # Gaps: each maximal run of free positions is a document without sinks.
        number = len(self.placed)
        for row in range(R):
            free = np.flatnonzero(~taken[row])
            if len(free):
                runs = np.split(free, np.flatnonzero(np.diff(free) != 1) + 1)
                for run in runs:
                    doc[row, run] = number
                    pos[row, run] = np.arange(len(run))
                    number += 1
        valid = np.arange(K)[None, None, :] < chunk_count[:, :, None]
        pad = self.loss_capacity - len(loss_index)
        weights = np.array(loss_weight + [0.0] * pad, dtype=np.float32)
        return {"ids": torch.from_numpy(ids), "pos": torch.from_numpy(pos),
                "doc": torch.from_numpy(doc), "n_sink": torch.from_numpy(n_sink),
                "chunk_sinks": torch.from_numpy(chunk_sinks),
                "chunk_sink_valid": torch.from_numpy(valid),
                "loss_index": torch.tensor(loss_index + [0] * pad, dtype=torch.long),
                "loss_target": torch.tensor(loss_target + [0] * pad, dtype=torch.long),
                "loss_weight": torch.from_numpy(weights),
                "weight_sum": torch.tensor(float(weights.sum()))}


def pack_documents(documents, rows, length, sink_capacity):
    """Packs an iterable of (ids, weight, sink) lists until MISSES of them in a row do not fit:
    (the step's tensors, tokens packed, documents packed, documents left out)."""
    packer = Packer(rows, length, sink_capacity)
    misses = left_out = 0
    for ids, weight, sink in documents:
        if packer.place(ids, weight, sink):
            misses = 0
            continue
        misses += 1
        left_out += 1
        if misses == MISSES:
            break
    tokens = sum(len(p[2]) for p in packer.placed)
    return packer.tensors(), tokens, len(packer.placed), left_out - misses


def step_conversations(gen, tok, step, args):
    """The step's conversations, rendered one at a time as the packer asks for them."""
    max_turns, aux_rate = batches.curriculum(step * args.batch, args)
    for index in range(step * STRIDE, (step + 1) * STRIDE):
        r = needle_format.render(gen.generate(index, max_turns, aux_rate), tok)
        yield r.ids, r.loss, r.sink


def make_packed_batch(gen, tok, step, args):
    """Step `step`'s packed batch; `skipped` counts the documents rendered but not packed because
    no row had room left for them (or they are longer than a row, have more sinks than a chunk
    holds, or pass the loss capacity), not counting the step's last MISSES."""
    window = batches.window_for(args.seed, step)
    is_induction = induction.is_induction_step(args.seed, step, args.induction_rate)
    if is_induction:
        documents = induction.induction_rows(tok, step, window, args.seed)
        shape = INDUCTION_ROWS, INDUCTION_LENGTH, INDUCTION_SINK_CAPACITY
    else:
        documents = step_conversations(gen, tok, step, args)
        shape = args.rows, args.row_length, args.sink_capacity
    tensors, tokens, count, skipped = pack_documents(documents, *shape)
    if is_induction:
        assert count == len(induction.ROW_KINDS), "an induction row did not fit"
    return dict(tensors, window=torch.tensor(window), step=step, tokens=tokens, documents=count,
                skipped=skipped, induction=is_induction)


def documents(batch):
    """The packed (CPU) batch's documents back as (ids, weight, sink) lists, in packing order: the
    padded step's input for the same documents (the GPU loop's first check, test_packed_step)."""
    docs = []
    for number in range(batch["documents"]):
        row, where = torch.nonzero(batch["doc"] == number, as_tuple=True)
        ids = batch["ids"][row, where].tolist()
        sinks = int(batch["n_sink"][row[0], where[0]])
        docs.append((ids, [0.0] * len(ids), [True] * sinks + [False] * (len(ids) - sinks)))
    length = batch["ids"].shape[1]
    weighted = batch["loss_weight"] > 0
    for index, w in zip(batch["loss_index"][weighted].tolist(),
                        batch["loss_weight"][weighted].tolist()):
        row, t = divmod(index + 1, length)
        docs[int(batch["doc"][row, t])][1][int(batch["pos"][row, t])] = w
    return docs
