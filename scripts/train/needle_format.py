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
Loss: the assistant's tokens (call or reply, through its <|im_end|>).
"""

from needle_data import compact

DEFAULT_RESULT = {"status": "ok"}


class Rendered:
    """Token ids [T], loss flags [T] (1 where the token is a target), sink flags [T], and for each
    turn the span [start, end) of the assistant's first segment (the call, or the reply)."""

    def __init__(self):
        self.ids = []
        self.loss = []
        self.sink = []
        self.turn_spans = []

    def add(self, ids, loss=False, sink=False):
        self.ids.extend(ids)
        self.loss.extend([int(loss)] * len(ids))
        self.sink.extend([int(sink)] * len(ids))


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
            r.add([sp["<tool_call>"]] + frag(compact(turn["answers"])) + [sp["</tool_call>"],
                                                                         sp["<|im_end|>"]], loss=True)
            r.turn_spans.append((start, len(r.ids)))
            result = turn.get("result") or DEFAULT_RESULT
            r.add(frag("\n") + [sp["<|im_start|>"]] + frag("tool\n") + [sp["<tool_result>"]] +
                  frag(compact(result)) + [sp["</tool_result>"], sp["<|im_end|>"]] + frag("\n") +
                  [sp["<|im_start|>"]] + frag("assistant\n"))
            reply = turn.get("reply") or "Done."
            r.add(frag(reply, False) + [sp["<|im_end|>"]], loss=True)
        else:
            reply = turn.get("reply") or "I cannot help with that."
            r.add(frag(reply, False) + [sp["<|im_end|>"]], loss=True)
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
