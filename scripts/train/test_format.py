"""Checks that render() (ids built piece by piece, with sink and loss flags) equals the encoding of
render_text() (the whole text, special tokens parsed), and that the sinks are exactly BOS and
<tools> ... </tools>.

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
        sink_ids = [i for i, s in zip(rendered.ids, rendered.sink) if s]
        assert sink_ids[0] == tok.id("<s>") and sink_ids[1] == tok.id("<tools>"), index
        assert sink_ids[-1] == tok.id("</tools>") and sink_ids.count(tok.id("</tools>")) == 1, index
        assert len(rendered.turn_spans) == len(conv["turns"]), index
    print("50 conversations: render() equals the encoded text; sinks are BOS + the tool block")


if __name__ == "__main__":
    main()
