"""Checks that render() (ids built piece by piece, with sink and loss flags) equals the encoding of
render_text() (the whole text, special tokens parsed), and that the sinks are exactly the tool
block as the engine pins it: every token from BOS through </tools>. Also on random-ID
conversations with auxiliary turns and a turn cap (the training curriculum), and that the loss
weights put full weight on every tool name of a call and none outside the assistant's turns.

  python3 scripts/train/test_format.py WORK_DIR/tokenizer.json
"""

import sys

import needle_data
import needle_format
from spm_tokenizer import Tokenizer


def check_weights(tok, conv, rendered):
    free = needle_format.LOSS_WEIGHTS["free"]
    for turn, (start, end) in zip(conv["turns"], rendered.turn_spans):
        for answer in turn["answers"]:
            name_ids = tok.encode_fragment(answer["name"], False)
            span = rendered.ids[start:end]
            at = next(i for i in range(len(span)) if span[i:i + len(name_ids)] == name_ids)
            assert rendered.loss[start + at:start + at + len(name_ids)] == [free] * len(name_ids)
    assert all(w == 0 for w in rendered.loss[:rendered.turn_spans[0][0]])


def main():
    tok = Tokenizer.load(sys.argv[1])
    plain = needle_data.ConversationGenerator(99, "train")
    curriculum = needle_data.ConversationGenerator(99, "train", random_id_rate=0.5)
    convs = [plain.generate(i) for i in range(50)]
    convs += [curriculum.generate(i, max_turns=1 + i % 12, aux_rate=0.4) for i in range(50)]
    assert any(t.get("kind") == "aux" for c in convs for t in c["turns"])
    for index, conv in enumerate(convs):
        rendered = needle_format.render(conv, tok)
        check_weights(tok, conv, rendered)
        assert rendered.ids == tok.encode(needle_format.render_text(conv)), index
        block_end = rendered.ids.index(tok.id("</tools>")) + 1
        assert rendered.sink == [1] * block_end + [0] * (len(rendered.ids) - block_end), index
        assert rendered.ids[0] == tok.id("<s>"), index
        assert len(rendered.turn_spans) == len(conv["turns"]), index
    print("%d conversations: render() equals the encoded text; sinks are BOS through </tools>; "
          "tool names carry full loss weight" % len(convs))


if __name__ == "__main__":
    main()
