"""Sorted by date, a two-word query's keyword matches hold the words near each other while
enough papers do.

In relevance order a paper holding both words far apart ranks below those that hold them in
the title, or often: BM25 sorts it out. Sorted by date nothing does. At 663k papers of every
field "community detection" listed, newest first, benchmarks of code-mixed instructions and
papers on audio scam detection: 0 of the newest ten about community detection (blind
judgments, bench/RESULTS.md, session 36), though 1,259 of its 1,703 matches hold the words
within two places of each other. So in a list sorted by date or citations a query of two
free words needs them at most ``SLOP`` words apart in one field (a title, an abstract, the
authors' names: "Geoffrey Hinton"), in either order ("detection of communities", "community
structure detection"), while at least
``[search] match_all_sorted_from`` papers (the filters aside) hold them so; with fewer (a
name and a topic, "Hinton dropout"), the list is as before. Elasticsearch's
``match_phrase`` with ``slop`` draws the same line.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product

import tantivy

from papersift.engine.lexical import LexicalIndex
from papersift.engine.match import KeywordQuery

SLOP = 2  # words between or moved, as Lucene counts a phrase's slop


def near_query(lex: LexicalIndex, first: Sequence[str], second: Sequence[str]) -> tantivy.Query:
    """Papers holding a spelling of ``first`` and one of ``second`` (a word's spellings:
    ``engine.umlauts``) at most ``SLOP`` apart, in either order, in one of the default
    fields (title and abstract stemmed, as the words are searched)."""
    a_s, b_s = ([w.replace('"', " ").replace("\\", " ") for w in ws] for ws in (first, second))
    phrases = [f'"{a} {b}"~{SLOP} "{b} {a}"~{SLOP}' for a, b in product(a_s, b_s)]
    return lex.parse(" ".join(phrases))[0]


def near_words(
    lex: LexicalIndex, kq: KeywordQuery, every_from: int
) -> tuple[tantivy.Query, tantivy.Query] | None:
    """(the strict matches, the condition they add) of a two-word query whose two words
    ``every_from`` papers hold near each other, the filters aside; else None (0: never)."""
    if every_from <= 0 or kq.query is None or len(kq.free) != 2 or kq.required != 2:
        return None
    first, second = kq.spellings
    if not first or not second:  # a phrase, an OR group, a hyphenated word
        return None
    near = near_query(lex, first, second)
    strict = tantivy.Query.boolean_query([
        (tantivy.Occur.Must, kq.query),
        (tantivy.Occur.Must, tantivy.Query.const_score_query(near, 0.0)),
    ])  # fmt: skip
    return (strict, near) if lex.count(strict) >= every_from else None
