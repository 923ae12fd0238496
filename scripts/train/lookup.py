"""Lookup rows: the tool block's retrieval in miniature, mixed into the induction steps.

Copying (induction.py) formed, yet tool names stayed at chance: a call needs more than copying
what followed an earlier occurrence. In the block a tool's name comes before its description, so
the model has to find the description the query matches and emit the name written before it (the
description's tokens can look back at their name; the name cannot look ahead). A lookup row
trains exactly that, in the chat layout, with nothing to memorise:

  sinks   BOS <|im_start|>user\\n<tools>[{"name":N1,"description":D1},...,{"name":NK,...}]</tools>
  turns   \\n<|im_start|>user\\n Di<|im_end|>\\n<|im_start|>assistant\\n<tool_call>[{"name":"Ni"}]
          </tool_call><|im_end|>   (again and again, for twice the window)

Names (needle_data.nonsense_name) and descriptions (two to four nonsense words) are fresh in every
row, K is 3 to 8, and the query repeats its description's words. Loss weight 1 on the name's
tokens, 0 on the rest. After the first few turns the block lies beyond the window: the name can
then come only from the sinks, at their folded positions, or from a recent turn that called the
same tool.
"""

from needle_data import compact, nonsense_name, nonsense_word


def lookup_row(rng, tok, window):
    sp, frag = tok.specials, tok.encode_fragment
    tools = [{"name": nonsense_name(rng),
              "description": " ".join(nonsense_word(rng) for _ in range(rng.randint(2, 4)))}
             for _ in range(rng.randint(3, 8))]
    ids = [tok.id("<s>"), sp["<|im_start|>"]] + frag("user\n")
    ids += [sp["<tools>"]] + frag(compact(tools)) + [sp["</tools>"]]
    sink = [True] * len(ids)
    weight = [0.0] * len(ids)

    def add(part, part_weight=0.0):
        ids.extend(part)
        weight.extend([part_weight] * len(part))
        sink.extend([False] * len(part))

    block = len(ids)
    while len(ids) < block + 2 * window:
        tool = rng.choice(tools)
        add(frag("\n") + [sp["<|im_start|>"]] + frag("user\n") + frag(tool["description"], False) +
            [sp["<|im_end|>"]] + frag("\n") + [sp["<|im_start|>"]] + frag("assistant\n") +
            [sp["<tool_call>"]] + frag('[{"name":"', False))
        add(frag(tool["name"], False), 1.0)
        add(frag('"}]', False) + [sp["</tool_call>"], sp["<|im_end|>"]])
    return ids, weight, sink
