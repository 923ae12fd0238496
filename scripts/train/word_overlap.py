"""Descriptions that share a word with the queries that call their tool.

In the generated conversations a query often shares no word with its tool's description ("Is it
raining in {city}?" against "Get the weather for a city."): only 47% of (query template,
description) pairs share a token-identical content word, so reading the description to find the
tool gets little gradient and the tool's name (a pool name, or a domain prior) carries the turn.
With --overlap-rate, a conversation's descriptions name, in brackets, the content words of the
templates they share none with: "Get the weather for a city (raining, Weather)." Every template of
such a conversation's tools then shares a word with its description, token for token (the same
case; the tokenizer never merges across words).
"""

import re

# Words that say nothing of what a tool does.
STOP_WORDS = set("""a an the to of in on for at by from with and or is it its me my i you your
please what how do does get set turn can all this that be are was there here some any now make
want need let would like could should just then also""".split())


def content_words(text):
    """The words of `text` that carry meaning, in order, {slots} and stop words left out."""
    text = re.sub(r"\{[a-z_]+\}", " ", text)
    seen, words = set(), []
    for word in re.findall(r"[A-Za-z]+", text):
        if len(word) > 2 and word.lower() not in STOP_WORDS and word not in seen:
            seen.add(word)
            words.append(word)
    return words


def shares_word(template, description):
    return bool(set(content_words(template)) & set(content_words(description)))


def with_query_words(description, templates):
    """The description, with the first content word of each template that shares none with it
    named in brackets before its final stop."""
    missing = []
    for template in templates:
        if not shares_word(template, description):
            words = [w for w in content_words(template) if w not in missing]
            if words:
                missing.append(words[0])
    if not missing:
        return description
    stem = description[:-1] if description.endswith(".") else description
    return "%s (%s)." % (stem, ", ".join(missing))


def overlap_share(tools):
    """The share of (query template, description) pairs of these needle_data.Tool objects that
    share a content word."""
    pairs = [(q, d) for t in tools for q in t.queries for d in t.descs]
    return sum(shares_word(q, d) for q, d in pairs) / len(pairs)
