"""A SentencePiece-"llama"-compatible vocabulary, trained here by BPE.

Encoding is llama.cpp's SPM algorithm (what engine/tokenizer/tokenizer.cpp implements): special tokens cut
out of the text; every text fragment that starts the text or follows a special token gets a space
prefix; spaces become U+2581; adjacent symbols whose concatenation is a piece merge, highest score
first (ties: leftmost); symbols that are no piece fall back to <0xXX> byte tokens.

Training makes merges only inside runs of letters and inside runs of JSON punctuation, so no piece
crosses a word boundary and U+2581 and digits are never merged. A value such as `living room` or
`18.5` therefore has the same tokens in the query (`... the living room.`) as in the call
(`"room":"living room"`): the model can copy it token for token. BPE merge number r gets score
-r, so SPM's highest-score-first merging replays the merges in the order BPE learnt them.
"""

import collections
import json

SPACE = "\u2581"
UNK, BOS, EOS = 0, 1, 2
MARKERS = ["<|im_start|>", "<|im_end|>", "<tools>", "</tools>", "<tool_call>", "</tool_call>",
           "<tool_result>", "</tool_result>"]
JSON_PUNCT = set('{}[]":,')
TYPE_NORMAL, TYPE_UNKNOWN, TYPE_CONTROL, TYPE_BYTE = 1, 2, 3, 6


def char_class(c):
    if c.isascii() and c.isalpha():
        return "a"
    if c in JSON_PUNCT:
        return "p"
    return None  # never merged


def runs(escaped):
    """Splits escaped text into mergeable runs (letters, JSON punctuation) and single chars."""
    out = []
    i = 0
    while i < len(escaped):
        cls = char_class(escaped[i])
        j = i + 1
        if cls is not None:
            while j < len(escaped) and char_class(escaped[j]) == cls:
                j += 1
        out.append(escaped[i:j])
        i = j
    return out


def text_fragments(text, specials):
    """[(is_special, text)]: special markers cut out, longest first, leftmost occurrences."""
    frags = [(False, text)] if text else []
    for marker in sorted(specials, key=len, reverse=True):
        new = []
        for special, part in frags:
            if special:
                new.append((special, part))
                continue
            pieces = part.split(marker)
            for k, p in enumerate(pieces):
                if k:
                    new.append((True, marker))
                if p:
                    new.append((False, p))
        frags = new
    return frags


class Tokenizer:
    def __init__(self, pieces, scores, types):
        self.pieces = pieces
        self.scores = scores
        self.types = types
        self.index = {p: i for i, p in enumerate(pieces)}
        self.byte_ids = [self.index["<0x%02X>" % b] for b in range(256)]
        self.specials = {p: i for i, p in enumerate(pieces) if types[i] == TYPE_CONTROL and p}
        self.cache = {}

    @property
    def size(self):
        return len(self.pieces)

    def id(self, piece):
        return self.index[piece]

    def encode_run(self, run):
        cached = self.cache.get(run)
        if cached is not None:
            return cached
        symbols = list(run)
        while len(symbols) > 1:
            best, best_score = -1, None
            for k in range(len(symbols) - 1):
                pid = self.index.get(symbols[k] + symbols[k + 1])
                if pid is not None and (best_score is None or self.scores[pid] > best_score):
                    best, best_score = k, self.scores[pid]
            if best < 0:
                break
            symbols[best:best + 2] = [symbols[best] + symbols[best + 1]]
        ids = []
        for s in symbols:
            pid = self.index.get(s)
            if pid is not None:
                ids.append(pid)
            else:
                ids.extend(self.byte_ids[b] for b in s.encode("utf-8"))
        self.cache[run] = ids
        return ids

    def encode_fragment(self, text, space_prefix=True):
        """Ids of a text fragment that follows a special token (or starts the text). Without
        space_prefix: the ids of text that continues a fragment after a newline (no merge
        crosses a newline, so a fragment's ids split there)."""
        escaped = ((" " if space_prefix else "") + text).replace(" ", SPACE)
        ids = []
        for run in runs(escaped):
            ids.extend(self.encode_run(run))
        return ids

    def encode(self, text, add_bos=True, parse_special=True):
        ids = [BOS] if add_bos else []
        specials = self.specials if parse_special else {}
        for special, part in text_fragments(text, specials):
            ids.extend([self.specials[part]] if special else self.encode_fragment(part))
        return ids

    def decode(self, ids):
        out = bytearray()
        for i in ids:
            p, t = self.pieces[i], self.types[i]
            if t == TYPE_BYTE:
                out.append(int(p[3:5], 16))
            elif t == TYPE_NORMAL:
                out.extend(p.replace(SPACE, " ").encode("utf-8"))
        return out.decode("utf-8", errors="replace")

    def save(self, path):
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"pieces": self.pieces, "scores": self.scores, "types": self.types}, f,
                      ensure_ascii=False)

    @staticmethod
    def load(path):
        with open(path, encoding="utf-8") as f:
            d = json.load(f)
        return Tokenizer(d["pieces"], d["scores"], d["types"])


def train(texts, vocab_size):
    """BPE over the letter and punctuation runs of `texts` (fragments as the encoder sees them)."""
    pieces = ["<unk>", "<s>", "</s>"] + MARKERS + ["<0x%02X>" % b for b in range(256)]
    types = [TYPE_UNKNOWN, TYPE_CONTROL, TYPE_CONTROL] + [TYPE_CONTROL] * len(MARKERS) + \
        [TYPE_BYTE] * 256
    singles = [SPACE] + [chr(c) for c in range(33, 127)]
    pieces += singles
    types += [TYPE_NORMAL] * len(singles)
    scores = [0.0] * len(pieces)

    words = collections.Counter()
    for text in texts:
        for special, part in text_fragments(text, MARKERS):
            if special:
                continue
            for run in runs((" " + part).replace(" ", SPACE)):
                if len(run) > 1:
                    words[run] += 1
    corpus = [[list(w), c] for w, c in words.items()]
    known = set(pieces)
    rank = 0
    while len(pieces) < vocab_size:
        pairs = collections.Counter()
        for syms, c in corpus:
            for a, b in zip(syms, syms[1:]):
                pairs[a, b] += c
        if not pairs:
            break
        (a, b), _ = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))
        merged = a + b
        for entry in corpus:
            syms = entry[0]
            k = 0
            while k < len(syms) - 1:
                if syms[k] == a and syms[k + 1] == b:
                    syms[k:k + 2] = [merged]
                k += 1
        if merged not in known:
            rank += 1
            known.add(merged)
            pieces.append(merged)
            types.append(TYPE_NORMAL)
            scores.append(float(-rank))
    return Tokenizer(pieces, scores, types)
