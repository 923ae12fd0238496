"""Checks word_overlap.py and the generator's --overlap-rate: at the presets' rate at least 80% of
the calls' (query, description) pairs share a token-identical content word (against about half
without it); descriptions gain only bracketed words of their own tool's templates; and with the
option off the suites are exactly what the repository keeps (the tokenizer depends on that too).

  python3 scripts/train/test_word_overlap.py
"""

import os

import needle_data
import run
import word_overlap

SUITES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tests/data/tools-eval")

CONVERSATIONS = 300
PRESET_RATE = 0.7  # run.py's presets


def call_pairs(conv):
    """(query, description of the called tool) for every single-call turn."""
    descriptions = {t["name"]: t["description"] for t in conv["tools"]}
    return [(turn["query"], descriptions[turn["answers"][0]["name"]])
            for turn in conv["turns"] if len(turn["answers"]) == 1]


def share(gen):
    pairs = [p for i in range(CONVERSATIONS) for p in call_pairs(gen.generate(i))]
    return sum(bool(set(word_overlap.content_words(q)) & set(word_overlap.content_words(d)))
               for q, d in pairs) / len(pairs)


def main():
    plain = needle_data.ConversationGenerator(5, "train", random_id_rate=0.9)
    overlapped = needle_data.ConversationGenerator(5, "train", random_id_rate=0.9,
                                                   overlap_rate=PRESET_RATE)
    without, with_overlap = share(plain), share(overlapped)
    print("queries sharing a word with their tool's description: %.1f%% -> %.1f%%" % (
        100 * without, 100 * with_overlap))
    assert without < 0.7 and with_overlap >= 0.8, (without, with_overlap)

    tools = {t.names[0]: t for d in needle_data.DOMAINS.values() for t in d}
    assert word_overlap.overlap_share(tools.values()) < 0.6
    for index in range(CONVERSATIONS):
        a, b = plain.generate(index), overlapped.generate(index)
        assert a["turns"] == b["turns"] and len(a["tools"]) == len(b["tools"])
        for ta, tb in zip(a["tools"], b["tools"]):
            assert {k: v for k, v in ta.items() if k != "description"} == \
                {k: v for k, v in tb.items() if k != "description"}
            if ta["description"] != tb["description"]:
                stem = ta["description"].rstrip(".")
                assert tb["description"].startswith(stem + " (") and tb["description"].endswith(").")
    # Off, the suites come out as they were written (the CI-sized copies in the repository).
    for name, (seed, split, domains, _) in run.SUITES.items():
        gen = needle_data.ConversationGenerator(seed, split, domains=domains, min_turns=32,
                                                max_turns=40)
        with open(os.path.join(SUITES_DIR, name + ".jsonl")) as f:
            stored = f.read().splitlines()
        assert [run.suite_line(gen.generate(i)) for i in range(len(stored))] == stored, name
    print("ok")


if __name__ == "__main__":
    main()
