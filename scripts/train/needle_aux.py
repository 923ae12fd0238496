"""Auxiliary retrieval turns: questions about the tool block, answered in plain text.

A call needs three skills at once: find the tool a query means, copy its name, copy its parameter
names and the query's values. These turns train the reading and copying parts alone, in the chat
layout, from the first step (Zoology's associative recall, arXiv 2312.04927; the issue's
diagnostics show copying is the first bottleneck):

  which tool:   "Which tool does this: <description>"      -> "<name>"
  parameters:   "What are the parameters of <name>?"        -> "<p1>, <p2>"
  owner:        "Which tool has a parameter called <p>?"    -> "<name>"
  enum values:  "What values can <p> of <name> take?"       -> "<v1>, <v2>, <v3>"
  copy:         "Repeat after me: <random words>"           -> "<random words>"

The answer is never a call, so the turn has no `answers`; `kind` marks it for the loss weights
(needle_format.py).
"""

import needle_data

WHICH = ["Which tool does this: {desc}", "Name the tool for this: {desc}",
         "What is the tool that does this? {desc}"]
PARAMS = ["What are the parameters of {name}?", "List the parameters of {name}.",
          "Which arguments does {name} take?"]
OWNER = ["Which tool has a parameter called {param}?", "Whose parameter is {param}?"]
ENUM = ["What values can {param} of {name} take?", "List the allowed values of {param} in {name}."]
COPY = ["Repeat after me: {text}", "Copy this: {text}", "Say exactly this: {text}"]


def random_words(rng):
    words = [needle_data.nonsense_word(rng) for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.3:
        words.insert(rng.randrange(len(words) + 1), str(rng.randint(0, 999)))
    return " ".join(words)


def aux_turn(rng, variants):
    """One auxiliary turn about this conversation's tool variants."""
    v = rng.choice(variants)
    params = [v.param_names[k] for k in v.order]
    others = {p for w in variants if w is not v for p in w.param_names.values()}
    unique = [p for p in params if p not in others]  # "owner" needs a parameter only v has
    kinds = ["which", "params", "copy"] + (["owner"] if unique else []) + (["enum"] if v.enums else [])
    kind = rng.choice(kinds)
    if kind == "which":
        query, reply = rng.choice(WHICH).format(desc=v.desc), v.name
    elif kind == "params":
        query, reply = rng.choice(PARAMS).format(name=v.name), ", ".join(params)
    elif kind == "owner":
        query, reply = rng.choice(OWNER).format(param=rng.choice(unique)), v.name
    elif kind == "enum":
        key = rng.choice(sorted(v.enums))
        query = rng.choice(ENUM).format(param=v.param_names[key], name=v.name)
        reply = ", ".join(v.schema_enum(key))
    else:
        text = random_words(rng)
        query, reply = rng.choice(COPY).format(text=text), text
    return {"query": query, "answers": [], "result": None, "reply": reply, "kind": "aux"}
