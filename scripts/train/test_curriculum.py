"""Checks the staged lookup rows (curriculum.py) on many rows of every stage and both key orders:
rows have their stage's fixed length; only the pinned stages pin more than BOS, and there exactly
BOS and the block; every weighted span is the name of a tool of the block before it, the one whose
description shares a word with the query (L1: the description is that one word; L2, L3: exactly
one description shares a word; L4: the query holds the synonym of a word of exactly one); the
block's names start with distinct tokens; a scored query's tool was not asked within the window
before it; a blanked block shares no word with its queries; stage_accuracy is 1 for a model that
reads (an oracle built from the rows' own scored answers) and chance for one that cannot.

  python3 scripts/train/test_curriculum.py WORK_DIR/tokenizer.json
"""

import json
import random
import re
import sys

import curriculum
from spm_tokenizer import Tokenizer

ROWS = 60


def weighted_spans(weight):
    spans, start = [], None
    for i, w in enumerate(weight + [0.0]):
        if w > 0 and start is None:
            start = i
        elif w == 0 and start is not None:
            spans.append((start, i))
            start = None
    return spans


def last_block(tok, ids, before):
    """The tool list of the last <tools> block before position `before`."""
    opens = [i for i in range(before) if ids[i] == tok.specials["<tools>"]]
    close = ids.index(tok.specials["</tools>"], opens[-1])
    return json.loads(tok.decode(ids[opens[-1] + 1:close]).strip()), close


def query_before(tok, ids, at):
    """The words of the query whose call's name starts at `at`."""
    start = max(i for i in range(at) if ids[i] == tok.specials["<|im_start|>"])
    text = tok.decode(ids[start + 1:at])
    return re.match(r"\s*which tool:\s*(.*?)\[", text).group(1).split()


def calls(tok, ids):
    """[(position of the name, name)] of every call in the row."""
    opening = len(tok.encode_fragment('[{"name":"', False))
    found = []
    for i, token in enumerate(ids):
        if token == tok.specials["<tool_call>"] and i + opening < len(ids):
            text = tok.decode(ids[i + 1 + opening:i + 1 + opening + 16])
            if '"' in text:
                found.append((i + 1 + opening, text.split('"')[0].strip()))
    return found


def check_row(tok, stage, row, name_first):
    ids, weight, sink = row["ids"], row["weight"], row["sink"]
    assert len(ids) == len(weight) == len(sink) == curriculum.ROW_TOKENS[stage]
    pinned = stage in ("L3", "L4")
    if pinned:
        close = ids.index(tok.specials["</tools>"])
        assert sink == [True] * (close + 1) + [False] * (len(ids) - close - 1)
    else:
        assert sink == [True] + [False] * (len(ids) - 1)
    spans = weighted_spans(weight)
    assert [s for s, _ in spans] == [pos for pos, _, _, _ in row["scored"]]
    for (start, end), (pos, right, firsts, beyond) in zip(spans, row["scored"]):
        tools, close = last_block(tok, ids, start)
        keys = list(tools[0].keys())
        assert keys == (["name", "description"] if name_first else ["description", "name"])
        names = [t["name"] for t in tools]
        assert len({tok.encode_fragment(n, False)[0] for n in names}) == len(names)
        assert firsts == [tok.encode_fragment(n, False)[0] for n in names]
        name = tok.decode(ids[start:end]).strip()
        assert name in names and right == tok.encode_fragment(name, False)[0]
        words = query_before(tok, ids, start)
        if stage == "L4":
            words = [curriculum.SYNONYMS[w] for w in words if w in curriculum.SYNONYMS]
        matching = [t["name"] for t in tools if set(t["description"].split()) & set(words)]
        assert matching == [name], (stage, words, tools)
        if stage == "L1":
            assert words == [tools[names.index(name)]["description"]]
        assert beyond == (pos - close - 1 >= row["window"])
        visible = {n for p, n in calls(tok, ids) if close < p < pos and pos - p < row["window"]}
        assert name not in visible and len(visible) < len(names) - 1, (name, visible, names)


def check_blank(tok, stage, row):
    for pos, *_ in row["scored"]:
        tools, _ = last_block(tok, row["ids"], pos)
        described = {w for t in tools for w in t["description"].split()}
        words = set(query_before(tok, row["ids"], pos))
        if stage == "L4":
            words |= {curriculum.SYNONYMS[w] for w in words if w in curriculum.SYNONYMS}
        assert not described & words, (stage, described, words)


class Oracle:
    """Logits that put the scored answers first: what a model that reads would give."""

    def __init__(self, rows_by_text, vocab, reads):
        self.rows, self.vocab, self.reads = rows_by_text, vocab, reads

    def eval(self):
        pass

    def train(self):
        pass

    def __call__(self, ids, layout):
        import torch
        logits = torch.zeros(ids.shape[0], ids.shape[1], self.vocab)
        for r in range(ids.shape[0]):
            row = self.rows[tuple(ids[r].tolist())]
            for pos, right, firsts, _ in row["scored"]:
                logits[r, pos - 1, right if self.reads else firsts[0]] = 1.0
        return logits


def check_accuracy(tok, maker):
    import train_stages
    for stage in curriculum.STAGES:
        rng = random.Random("stage-eval/%s/%d" % (stage, train_stages.EVAL_SEED))
        made = [maker.row(rng, stage) for _ in range(train_stages.EVAL_ROWS)]
        by_ids = {tuple(r["ids"]): r for r in made}
        acc, chance, count = train_stages.stage_accuracy(Oracle(by_ids, tok.size, True), maker,
                                                         stage, blank=False)
        assert acc == 1.0 and count > 50, (stage, acc, count)
        guess, _, _ = train_stages.stage_accuracy(Oracle(by_ids, tok.size, False), maker, stage,
                                                  blank=False)
        assert abs(guess - chance) < 0.15, (stage, guess, chance)


def main():
    tok = Tokenizer.load(sys.argv[1])
    assert len(curriculum.word_pool(tok)) > 60
    for name_first in (True, False):
        maker = curriculum.StageRows(tok, name_first=name_first)
        for stage in curriculum.STAGES:
            rng = random.Random("test/%s/%d" % (stage, name_first))
            scored = beyond = 0
            for _ in range(ROWS):
                row = maker.row(rng, stage)
                check_row(tok, stage, row, name_first)
                check_blank(tok, stage, maker.row(rng, stage, blank=True))
                scored += len(row["scored"])
                beyond += sum(1 for s in row["scored"] if s[3])
            assert scored >= 4 * ROWS, (stage, scored)
            assert (beyond > 3 * ROWS) == (stage in ("L3", "L4")), (stage, beyond)
            print("%s %s: %d rows, %.1f scored queries a row, %.1f beyond the window" % (
                stage, "name-first" if name_first else "description-first", ROWS,
                scored / ROWS, beyond / ROWS))
    check_accuracy(tok, curriculum.StageRows(tok))
    print("ok")


if __name__ == "__main__":
    main()
