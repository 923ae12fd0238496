"""Needle's chat layout (issue 4) for a whole multi-turn conversation, as token ids.

Turn 1:
  [BOS]<|im_start|>system\\n{facts}<|im_end|>\\n            (only when facts are given)
  <|im_start|>user\\n<tools>{tools}</tools>\\n{query}<|im_end|>\\n<|im_start|>assistant\\n
Later turns (the tool block is not repeated: it stays pinned as sinks):
  <|im_start|>user\\n{query}<|im_end|>\\n<|im_start|>assistant\\n
Assistant part of a turn with calls:
  <tool_call>{calls}</tool_call><|im_end|>\\n
  <|im_start|>tool\\n<tool_result>{result}</tool_result><|im_end|>\\n<|im_start|>assistant\\n
  {reply}<|im_end|>\\n
Assistant part of a turn without a call:
  {reply}<|im_end|>\\n

{tools} is the compact JSON array of the tool schemas, {calls} the compact JSON array
[{"name":...,"arguments":{...}}], {result} the compact JSON of the turn's result
(default {"status":"ok"}). Sinks: the tool block, every token from BOS to </tools> inclusive (the
system turn and turn 1's <|im_start|>user\n included), exactly what the engine's chat template
pins (engine/chat/chat_template.h), so that training sees the streaming distances the app will use.
Loss: the assistant's tokens (call or reply, through its <|im_end|>), weighted so that the signal
sits on the choices the call grammar leaves free (LOSS_WEIGHTS): whether to call, the tool's name,
the parameter names and the values; JSON punctuation and the fixed keys "name" and "arguments",
which constrained decoding writes by itself, and the few fixed reply phrases count little.
"""

from needle_data import compact
from spm_tokenizer import SPACE, runs

DEFAULT_RESULT = {"status": "ok"}

LOSS_WEIGHTS = {
    "decision": 1.0,  # <tool_call>, or the first token of a reply without a call
    "free": 1.0,      # a tool name, a parameter name, a value; an auxiliary turn's answer
    "forced": 0.1,    # what the call grammar writes by itself
    "punct": 0.25,    # JSON punctuation runs: mostly forced, but they also close the call list
    "reply": 0.2,     # the fixed reply phrases after a result or to an off-topic query
}


def call_text_spans(answers):
    """compact(answers) and the [start, end) character spans of what the model chooses in it:
    each name, each parameter name and each leaf value (a string's characters, a number)."""
    text, spans = "", []

    def free(piece):
        nonlocal text
        spans.append((len(text), len(text) + len(piece)))
        text += piece

    def value(v):
        nonlocal text
        if isinstance(v, str):
            text += '"'
            free(compact(v)[1:-1])
            text += '"'
        elif isinstance(v, list):
            text += "["
            for i, item in enumerate(v):
                text += "," if i else ""
                value(item)
            text += "]"
        elif isinstance(v, dict):
            text += "{"
            for i, (k, item) in enumerate(v.items()):
                text += ',"' if i else '"'
                free(compact(k)[1:-1])
                text += '":'
                value(item)
            text += "}"
        else:
            free(compact(v))

    text += "["
    for i, answer in enumerate(answers):
        text += ',{"name":"' if i else '{"name":"'
        free(compact(answer["name"])[1:-1])
        text += '","arguments":'
        value(answer["arguments"])
        text += "}"
    text += "]"
    assert text == compact(answers)
    return text, spans


def weighted_call_ids(tok, answers):
    """The ids of compact(answers) after <tool_call> (space prefix, as frag() encodes it) and
    one loss weight per id. Merges never cross a run (spm_tokenizer.runs), so a run's tokens
    belong wholly to one span or wholly outside it."""
    text, spans = call_text_spans(answers)
    escaped = (" " + text).replace(" ", SPACE)
    ids, weights, at = [], [], -1  # at: the run's start in `text` (the prefix space is at -1)
    for run in runs(escaped):
        run_ids = tok.encode_run(run)
        chosen = any(a < at + len(run) and at < b for a, b in spans)
        if chosen:
            w = LOSS_WEIGHTS["free"]
        elif run[0] in '{}[]":,':
            w = LOSS_WEIGHTS["punct"]
        else:
            w = LOSS_WEIGHTS["forced"]
        ids += run_ids
        weights += [w] * len(run_ids)
        at += len(run)
    return ids, weights


class Rendered:
    """Token ids [T], loss weights [T] (0 where the token is no target), sink flags [T], and for
    each turn the span [start, end) of the assistant's first segment (the call, or the reply)."""

    def __init__(self):
        self.ids = []
        self.loss = []
        self.sink = []
        self.turn_spans = []

    def add(self, ids, weight=0.0, sink=False, weights=None):
        self.ids.extend(ids)
        self.loss.extend(weights if weights is not None else [weight] * len(ids))
        self.sink.extend([int(sink)] * len(ids))

    def add_reply(self, ids, first_weight, rest_weight):
        self.add(ids, weights=[first_weight] + [rest_weight] * (len(ids) - 1))


def render(conv, tok, max_turns=None):
    sp = tok.specials
    frag = tok.encode_fragment
    r = Rendered()
    r.add([tok.id("<s>")], sink=True)
    if conv.get("system"):
        r.add([sp["<|im_start|>"]] + frag("system\n" + conv["system"]) + [sp["<|im_end|>"]] + frag("\n"),
              sink=True)
    turns = conv["turns"] if max_turns is None else conv["turns"][:max_turns]
    for i, turn in enumerate(turns):
        r.add([sp["<|im_start|>"]] + frag("user\n"), sink=i == 0)  # the query continues it
        if i == 0:
            r.add([sp["<tools>"]] + frag(compact(conv["tools"])) + [sp["</tools>"]], sink=True)
            r.add(frag("\n" + turn["query"]))
        else:
            r.add(frag(turn["query"], False))
        r.add([sp["<|im_end|>"]] + frag("\n") + [sp["<|im_start|>"]] + frag("assistant\n"))
        start = len(r.ids)
        if turn["answers"]:
            call_ids, call_weights = weighted_call_ids(tok, turn["answers"])
            r.add([sp["<tool_call>"]] + call_ids + [sp["</tool_call>"], sp["<|im_end|>"]],
                  weights=[LOSS_WEIGHTS["decision"]] + call_weights + [LOSS_WEIGHTS["forced"]] * 2)
            r.turn_spans.append((start, len(r.ids)))
            result = turn.get("result") or DEFAULT_RESULT
            r.add(frag("\n") + [sp["<|im_start|>"]] + frag("tool\n") + [sp["<tool_result>"]] +
                  frag(compact(result)) + [sp["</tool_result>"], sp["<|im_end|>"]] + frag("\n") +
                  [sp["<|im_start|>"]] + frag("assistant\n"))
            reply = turn.get("reply") or "Done."
            r.add_reply(frag(reply, False) + [sp["<|im_end|>"]], LOSS_WEIGHTS["reply"],
                        LOSS_WEIGHTS["reply"])
        else:
            reply = turn.get("reply") or "I cannot help with that."
            rest = LOSS_WEIGHTS["free" if turn.get("kind") == "aux" else "reply"]
            r.add_reply(frag(reply, False) + [sp["<|im_end|>"]], LOSS_WEIGHTS["decision"], rest)
            r.turn_spans.append((start, len(r.ids)))
        r.add(frag("\n"))
    return r


def render_text(conv):
    """The same conversation as text. Encoding it with special-token parsing gives render()'s
    ids (test_format.py checks it): this is what the C++ template must produce."""
    text = ""
    if conv.get("system"):
        text += "<|im_start|>system\n" + conv["system"] + "<|im_end|>\n"
    for i, turn in enumerate(conv["turns"]):
        tools = "<tools>" + compact(conv["tools"]) + "</tools>\n" if i == 0 else ""
        text += "<|im_start|>user\n" + tools + turn["query"] + "<|im_end|>\n<|im_start|>assistant\n"
        if turn["answers"]:
            text += ("<tool_call>" + compact(turn["answers"]) + "</tool_call><|im_end|>\n"
                     "<|im_start|>tool\n<tool_result>" + compact(turn.get("result") or DEFAULT_RESULT) +
                     "</tool_result><|im_end|>\n<|im_start|>assistant\n")
            text += (turn.get("reply") or "Done.") + "<|im_end|>\n"
        else:
            text += (turn.get("reply") or "I cannot help with that.") + "<|im_end|>\n"
    return text
