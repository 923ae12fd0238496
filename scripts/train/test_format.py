"""Checks that render() (ids built piece by piece, with sink and loss flags) equals the encoding of
render_text() (the whole text, special tokens parsed), and that the sinks are exactly the tool
block as the engine pins it: every token from BOS through </tools>.

  python3 scripts/train/test_format.py WORK_DIR/tokenizer.json
"""

import sys

import needle_data
import needle_format
from spm_tokenizer import Tokenizer


def main():
    tok = Tokenizer.load(sys.argv[1])
    gen = needle_data.ConversationGenerator(99, "train")
    for index in range(50):
        conv = gen.generate(index)
        rendered = needle_format.render(conv, tok)
        assert rendered.ids == tok.encode(needle_format.render_text(conv)), index
        block_end = rendered.ids.index(tok.id("</tools>")) + 1
        assert rendered.sink == [1] * block_end + [0] * (len(rendered.ids) - block_end), index
        assert rendered.ids[0] == tok.id("<s>"), index
        assert len(rendered.turn_spans) == len(conv["turns"]), index
    print("50 conversations: render() equals the encoded text; sinks are BOS through </tools>")


if __name__ == "__main__":
    main()
