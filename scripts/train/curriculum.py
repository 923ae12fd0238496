"""A staged lookup curriculum: reading a pinned tool block, learnt one step at a time.

Conversations gave the reading path little signal (a query often shares no word with its tool's
description; pool names let the model choose by name alone), and the lookup rows of lookup.py
started at the hardest form. These stages start where a small model can learn the lookup and make
it harder only once it is learnt (gated on the stage's own accuracy, train_stages.py). Every tool
set is random-ID: names are fresh nonsense in every block, so only the block says which to call.

  L1  2-3 tools, each described by one real word, names with distinct first tokens, the block in
      the window; queries "which tool: WORD".
  L2  2-8 tools, descriptions of 2-4 words; the query shares exactly one word with the right
      description and none with the others (its other words are in no description).
  L3  L2's blocks pinned as sinks and queries running past the window, so that most queries reach
      the block only through the sinks, at their folded distances (model.py's session mask).
  L4  L3 with the query's shared word replaced by its synonym from SYNONYMS.

Rows have a fixed length (no padding):
  L1, L2  (256 tokens, one window) BOS, then episodes until the row is full:
            <tools>[{"name":"N1","description":"D1"},...]</tools>
            <|im_start|> which tool: Q<tool_call>[{"name":"Ni"}]</tool_call>    (K - 1 queries)
  L3, L4  (512 tokens, window 64) BOS and one block as sinks, then queries to the row's end.
  The rest of a row that no whole episode or query fits is filler words, unweighted.

Loss weight 1 on the name's tokens of a query that only the block can answer: its tool was not
asked within the window before it (a repeat could copy the earlier answer), and the window does
not show every other tool of the block asked (the last one would follow by elimination). The same
queries are the stage's scored ones (stage_accuracy).

`name_first` chooses the order of a tool's keys: {"name","description"} (the engine's rendering
of a schema today) or {"description","name"}, which makes the lookup one hop (find the word, copy
what follows it), as an induction head does.
"""

import random

from needle_data import compact, nonsense_name

STAGES = ["L1", "L2", "L3", "L4"]
ROW_TOKENS = {"L1": 256, "L2": 256, "L3": 512, "L4": 512}
SINK_WINDOW = 64  # the window of the sink stages; L1 and L2 keep each row in one window

# Real English words that are one token in needle-nano's vocabulary (checked by word_pool()).
WORDS = """
light lights lock door photo album robot email mail invoice search flights room people team
sentiment volume money alarm record review move exchange target temperature convert share value
help unit turn enable label guest right shopping music mood inbox close price quote sound switch
event notes wind budget image picture morning coffee city apples milk bread cheese flour butter
honey salt garage garden kitchen office basement attic porch balcony cellar bedroom study camera
museum lake forest beach mountains snow water boat road clock drive store secret browser novel
poem joke paint colour summer autumn weather climate cabin dinner lunch meeting concert birthday
holiday project report schedule message network power gallery seat launch heading distance
address vendor seller supplier dentist yoga pasta lemons eggs tomato yogurt coach audio
""".split()

# Query word -> description word (L4). Each side appears in one pair only.
SYNONYMS = {
    "warm": "temperature", "lamp": "light", "cash": "money", "snapshot": "photo", "song": "music",
    "letter": "email", "buy": "shopping", "feeling": "sentiment", "loud": "volume",
    "wake": "alarm", "bill": "invoice", "plane": "flights", "gate": "door", "tidy": "robot",
    "noon": "lunch", "evening": "dinner", "cost": "price", "rain": "weather", "car": "garage",
    "flower": "garden", "cook": "kitchen", "desk": "office", "video": "camera", "art": "museum",
    "swim": "lake", "tree": "forest", "sand": "beach", "ski": "snow", "drink": "water",
    "sail": "boat", "time": "clock", "book": "novel", "rhyme": "poem", "funny": "joke",
    "party": "birthday", "trip": "holiday", "deadline": "project", "text": "message",
    "wifi": "network", "battery": "power",
}
FILLER_PREFIX = "which tool:"


def word_pool(tok):
    """The words of WORDS that are one token (all of them in the shipped vocabulary), minus the
    description sides of SYNONYMS, which L4 keeps for itself."""
    single = [w for w in WORDS if len(tok.encode_fragment(w, False)) == 1]
    return [w for w in single if w not in SYNONYMS.values()]


class StageRows:
    """Rows of one stage: ids, loss weights, sink flags and the scored queries' answer spans."""

    def __init__(self, tok, name_first=True):
        self.tok = tok
        self.name_first = name_first
        self.sp = tok.specials
        self.words = word_pool(tok)
        self.synonym_words = [w for w in SYNONYMS.values()]

    # -- pieces of a row --------------------------------------------------------------------

    def tools(self, rng, stage):
        """[(name, description words)] with distinct first name tokens and distinct words."""
        count = rng.randint(2, 3) if stage == "L1" else rng.randint(2, 8)
        words = self.synonym_words if stage == "L4" else self.words
        chosen, firsts, used = [], set(), set()
        while len(chosen) < count:
            name = nonsense_name(rng)
            first = self.tok.encode_fragment(name, False)[0]
            if first in firsts:
                continue
            size = 1 if stage == "L1" else rng.randint(2, 4)
            if stage == "L4":
                # One synonym-table word per description, the rest plain words.
                described = [rng.choice([w for w in words if w not in used])]
                described += rng.sample([w for w in self.words if w not in used], size - 1)
            else:
                described = rng.sample([w for w in words if w not in used], size)
            firsts.add(first)
            used.update(described)
            chosen.append((name, described))
        return chosen

    def block_ids(self, tools):
        entries = []
        for name, words in tools:
            description = " ".join(words)
            entry = {"name": name, "description": description} if self.name_first else \
                {"description": description, "name": name}
            entries.append(entry)
        return [self.sp["<tools>"]] + self.tok.encode_fragment(compact(entries), False) + \
            [self.sp["</tools>"]]

    def query_words(self, rng, stage, tools, index):
        """The words of a query for tools[index]: one word shared with its description (or its
        synonym in L4), and up to two words found in no description."""
        described = tools[index][1]
        if stage == "L4":
            reverse = {v: k for k, v in SYNONYMS.items()}
            shared = next(reverse[w] for w in described if w in reverse)
        else:
            shared = rng.choice(described) if stage != "L1" else described[0]
        if stage == "L1":
            return [shared]
        in_block = {w for _, words in tools for w in words}
        others = [w for w in self.words if w not in in_block]
        words = [shared] + rng.sample(others, rng.randint(0, 2))
        rng.shuffle(words)
        return words

    def query_ids(self, words, name):
        """(ids, start, end): the query and its call, [start, end) the name's tokens."""
        frag = self.tok.encode_fragment
        ids = [self.sp["<|im_start|>"]] + frag(FILLER_PREFIX + " " + " ".join(words)) + \
            [self.sp["<tool_call>"]] + frag('[{"name":"', False)
        start = len(ids)
        ids += frag(name, False)
        end = len(ids)
        ids += frag('"}]', False) + [self.sp["</tool_call>"]]
        return ids, start, end

    # -- rows -------------------------------------------------------------------------------

    def row(self, rng, stage, blank=False):
        """One row: dict(ids, weight, sink, window, scored) where scored lists, for each scored
        query, (position of its name's first token, the right first token, every first token
        of the block's names, whether the block is beyond the window there).

        blank: the block's descriptions replaced by words that no query uses, so the right name
        cannot be found (a model that reads then scores chance, 1/K)."""
        length = ROW_TOKENS[stage]
        pinned = stage in ("L3", "L4")
        window = SINK_WINDOW if pinned else length
        row = {"ids": [self.tok.id("<s>")], "sink": [True], "weight": [0.0], "scored": [],
               "window": window}
        while self.episode(rng, stage, blank, row, length) and not pinned:
            pass
        while len(row["ids"]) < length:
            self.add(row, self.tok.encode_fragment(rng.choice(self.words)))
        for key in ("ids", "sink", "weight"):
            del row[key][length:]
        return row

    @staticmethod
    def add(row, part, weight=0.0, sink=False):
        row["ids"].extend(part)
        row["weight"].extend([weight] * len(part))
        row["sink"].extend([sink] * len(part))

    def episode(self, rng, stage, blank, row, length):
        """Appends a block and its queries to the row; False when no block and query fit.

        In the window (L1, L2) an episode asks K-1 distinct tools of its K, so that every query
        is scored. Pinned (L3, L4), queries run to the end of the row with tools drawn at random;
        one is scored when its tool was not asked within the window before it and the window
        does not show every other tool asked (which would give the answer by elimination)."""
        pinned = stage in ("L3", "L4")
        window = row["window"]
        tools = self.tools(rng, stage)
        count = len(tools)
        queries = rng.sample(range(count), count - 1) if not pinned else \
            [rng.randrange(count) for _ in range(length // 8)]
        asked_words = [self.query_words(rng, stage, tools, i) for i in queries]
        block = self.block_ids(self.blanked(rng, tools, asked_words) if blank else tools)
        rendered = [self.query_ids(words, tools[i][0]) for i, words in zip(queries, asked_words)]
        if len(row["ids"]) + len(block) + len(rendered[0][0]) > length:
            return False
        self.add(row, block, sink=pinned)
        block_end = len(row["ids"])
        firsts = [self.tok.encode_fragment(name, False)[0] for name, _ in tools]
        answered = []  # (position of the name, tool) of this episode's queries so far
        for index, (ids, start, end) in zip(queries, rendered):
            if len(row["ids"]) + len(ids) > length:
                break
            at = len(row["ids"]) + start
            visible = {tool for pos, tool in answered if at - pos < window}
            fresh = index not in visible and len(visible) < count - 1
            answered.append((at, index))
            self.add(row, ids[:start])
            self.add(row, ids[start:end], 1.0 if fresh else 0.0)
            self.add(row, ids[end:])
            if fresh:
                row["scored"].append((at, firsts[index], firsts, at - block_end >= window))
        return True

    def blanked(self, rng, tools, asked_words):
        """The tools with every description word replaced by a word no query of theirs uses."""
        used = {w for _, words in tools for w in words} | {w for q in asked_words for w in q}
        spare = [w for w in self.words if w not in used]
        return [(name, rng.sample(spare, len(words))) for name, words in tools]
