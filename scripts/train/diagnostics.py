"""What tells, within the first hour, whether a run is learning to read its pinned tools.

Exact match moves late and abruptly; these move first (Olsson et al. 2022 on induction heads):
  name_acc        on random-ID tool sets (names and parameters fresh nonsense per conversation),
                  turn 1: the tool name the model scores highest among the block's K names, as
                  the call grammar lets it choose (name_choice());
  name_acc_blank  the same with the block's names replaced by other fresh names: the right name
                  is then nowhere in the context, so a model that reads scores chance (1/K),
                  and one that guesses from priors scores the same with and without the block;
  chance          mean 1/K over the set;
  copy_acc        induction on repeated random tokens: BOS, 32 random letter pieces, the same 32
                  again; top-1 accuracy on the repeat's tokens after its first (chance ~ 1/1,700);
  exact_on/off    exact match (evaluate.py) on the training run's fixed dev conversations, with
                  the sinks and without them;
  lookup_acc      lookup rows (lookup.py) with a fixed seed: top-1 accuracy on the first token of
                  each answer whose tool block is beyond the window (found through the sinks
                  alone); a model that writes one of the pinned names at random scores ~1/K.
"""

import random

import torch

import evaluate
import lookup
import needle_data
import needle_format
from model import SessionLayout, pad_to_window

DEV_SEED = 4242
DEV_CONVERSATIONS = 24
COPY_SEQUENCES = 24
COPY_LENGTH = 32
LOOKUP_ROWS = 16


def random_id_dev_set():
    """Turn-1 calls on random-ID tool sets of at least two tools."""
    gen = needle_data.ConversationGenerator(DEV_SEED, "eval", random_id_rate=1.0, off_topic_rate=0,
                                            multi_rate=0, system_rate=0, min_turns=1, max_turns=1)
    convs, index = [], 0
    while len(convs) < DEV_CONVERSATIONS:
        conv = gen.generate(index)
        index += 1
        if len(conv["tools"]) >= 2:
            convs.append(conv)
    return convs


def blank_block(conv, seed):
    """The conversation with every tool renamed to fresh nonsense (the answers keep the old
    names, which are then the candidates)."""
    rng = random.Random("blank/%d" % seed)
    taken = {t["name"] for t in conv["tools"]}
    tools = []
    for tool in conv["tools"]:
        name = needle_data.nonsense_name(rng)
        while name in taken:
            name = needle_data.nonsense_name(rng)
        taken.add(name)
        tools.append(dict(tool, name=name))
    return dict(conv, tools=tools)


def name_choice(model, tok, conv, candidates, answer, window):
    """1 when `answer` scores highest among `candidates` after turn 1's '<tool_call>[{"name":"'.
    Names whose first tokens differ are told apart by that token's probability alone (one
    forward pass); only when two candidates share a first token is every candidate scored whole,
    through the quote that closes it."""
    rendered = needle_format.render(dict(conv, turns=conv["turns"][:1]), tok)
    start = rendered.turn_spans[0][0]
    prefix = rendered.ids[:start] + [tok.specials["<tool_call>"]] + tok.encode_fragment('[{"name":"')
    names = [tok.encode_fragment(name, False) for name in candidates]
    rows = [prefix] if len({n[0] for n in names}) == len(names) else [
        prefix + n + tok.encode_fragment('","', False)[:1] for n in names]
    length = max(len(r) for r in rows)
    device = next(model.parameters()).device
    ids = torch.tensor([pad_to_window(r + [0] * (length - len(r)), window) for r in rows],
                       device=device)
    sink = torch.tensor([pad_to_window(rendered.sink[:start] + [0] * (length - start), window)
                         for _ in rows], dtype=torch.bool, device=device)
    logp = torch.log_softmax(model(ids, SessionLayout(sink, window)), -1)
    if len(rows) == 1:
        scores = [float(logp[0, len(prefix) - 1, n[0]]) for n in names]
    else:
        scores = []
        for b, row in enumerate(rows):
            positions = torch.arange(len(prefix), len(row))
            scores.append(float(logp[b, positions - 1, ids[b, positions]].sum()))
    return int(candidates[max(range(len(scores)), key=scores.__getitem__)] == answer)


def name_accuracy(model, tok, convs, window, blank):
    right = 0
    for i, conv in enumerate(convs):
        candidates = [t["name"] for t in conv["tools"]]
        shown = blank_block(conv, i) if blank else conv
        right += name_choice(model, tok, shown, candidates, conv["turns"][0]["answers"][0]["name"],
                             window)
    return right / len(convs)


def greedy_predictions(model, ids, sink, window):
    """The model's top-1 next token at every position of one row under the session mask."""
    device = next(model.parameters()).device
    layout = SessionLayout(torch.tensor([pad_to_window(sink, window)], dtype=torch.bool,
                                        device=device), window)
    return model(torch.tensor([pad_to_window(ids, window)], device=device),
                 layout)[0].argmax(-1).cpu()


def copy_accuracy(model, tok):
    letters = [i for i, p in enumerate(tok.pieces) if p.isascii() and p.isalpha()]
    rng = random.Random(DEV_SEED)
    window = 2 * COPY_LENGTH + 2
    right = total = 0
    for _ in range(COPY_SEQUENCES):
        seq = [rng.choice(letters) for _ in range(COPY_LENGTH)]
        ids = [tok.id("<s>")] + seq + seq
        sink = [1] + [0] * (len(ids) - 1)
        pred = greedy_predictions(model, ids, sink, window)
        first = 1 + COPY_LENGTH + 1  # the repeat's second token: its first cannot be predicted
        right += int((pred[first - 1:len(ids) - 1] == torch.tensor(ids[first:])).sum())
        total += len(ids) - first
    return right / total


def lookup_accuracy(model, tok, window):
    rng = random.Random(DEV_SEED)
    right = total = 0
    for _ in range(LOOKUP_ROWS):
        ids, weight, sink = lookup.lookup_row(rng, tok, window)
        block = sum(sink)
        # The first token of each answer more than a window past the block.
        firsts = [i for i in range(block + window, len(ids))
                  if weight[i] > 0 and weight[i - 1] == 0]
        pred = greedy_predictions(model, ids, sink, window)
        right += sum(int(pred[i - 1]) == ids[i] for i in firsts)
        total += len(firsts)
    return right / max(total, 1)


class Diagnostics:
    FIELDS = ["step", "tokens_seen", "train_seconds", "name_acc", "name_acc_blank", "chance",
              "copy_acc", "exact_on", "exact_off", "lookup_acc"]

    def __init__(self, tok, dev_convs, window=96):
        self.tok = tok
        self.random_id = random_id_dev_set()
        self.dev = dev_convs
        self.window = window
        self.chance = sum(1 / len(c["tools"]) for c in self.random_id) / len(self.random_id)

    def measure(self, model):
        """{field: value} for the fields after train_seconds."""
        model.eval()
        with torch.no_grad():
            return {
                "name_acc": name_accuracy(model, self.tok, self.random_id, self.window, False),
                "name_acc_blank": name_accuracy(model, self.tok, self.random_id, self.window, True),
                "chance": self.chance,
                "copy_acc": copy_accuracy(model, self.tok),
                "exact_on": evaluate.exact_match(model, self.tok, self.dev, self.window)["exact_match"],
                "exact_off": evaluate.exact_match(model, self.tok, self.dev, self.window,
                                                  False)["exact_match"],
                "lookup_acc": lookup_accuracy(model, self.tok, self.window),
            }
