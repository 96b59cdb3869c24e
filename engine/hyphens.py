"""Which papers hold a hyphenated query word, in relevance order and in sorted lists.

A hyphenated word is searched as its parts (``engine.query.Clause.parts``, Lucene's query
parser: "IL-10" finds papers that write "IL 10"). With each part enough, at 663k papers of
every field "SARS-CoV-2" matched 116,461 papers (any paper holding "2"), "Yang-Mills"
papers by authors named Yang, and the papers holding the word sank among them. So where a
match must hold the word (a query of up to ``match_all_up_to`` words, or a short query's
rarest word: ``engine.match``) it holds it whole: every part that is not a stop word,
anywhere, and the parts together where one of them is a number or shorter than three
letters ("GPT-4", "h-index", "SARS-CoV-2": alone such a part says nothing); or the word
written as one ("hindex"). The clause scores as its parts do and, where they may stand
apart, the papers holding them together score their phrase once more and come first. Where
a longer query needs only some of its words, either part still counts: held whole there,
SciFact's sentence-like claims lost keyword nDCG@10 0.007 (as a phrase, 0.013 in the notes
of 2026-12-03; bench/RESULTS.md, session 35).

Sorted by date or citations the parts must stand together in every case (``together``,
``engine.rarer_words``): there a loose match sits beside the best ones, not below them.
"""

from __future__ import annotations

from collections.abc import Sequence

import tantivy

from papersift.engine.lexical import LexicalIndex
from papersift.engine.lexical_schema import STOP_WORDS

SHORT = 2  # a part of at most this many characters holds the word only beside the others


def content_parts(parts: Sequence[str]) -> list[str]:
    """The parts that are not stop words, each once."""
    return [p for p in dict.fromkeys(parts) if p.lower() not in STOP_WORDS]


def tight(parts: Sequence[str]) -> bool:
    """Whether a part is a number or a letter or two ("4", "h", "IL"), which alone would
    match papers on anything."""
    return any(p.isdigit() or len(p) <= SHORT for p in content_parts(parts))


def together(lex: LexicalIndex, parts: Sequence[str]) -> tantivy.Query:
    """A hyphenated word's parts together: as a phrase (stop words keep their place, so
    "out-of-distribution" finds "out of distribution") or written as one word."""
    phrase = lex.parse(f'"{" ".join(parts)}"')[0]
    return _either([phrase, _joined(lex, parts)])


def holds(lex: LexicalIndex, parts: Sequence[str], scored: tantivy.Query) -> tantivy.Query:
    """The clause of a hyphenated word in relevance order: the papers holding it (above),
    each scored by ``scored`` (the parts, each optional, as the query parser reads them),
    so a paper that holds the word scores as it did when each part was enough."""
    words = content_parts(parts)
    clauses = [(tantivy.Occur.Should, scored)]
    if tight(parts) or len(words) < 2:
        held = together(lex, parts)
    else:
        every = [(tantivy.Occur.Must, lex.parse(f'"{w}"')[0]) for w in words]
        held = _either([tantivy.Query.boolean_query(every), _joined(lex, parts)])
        # The parts together score once more, so the papers writing the word come first.
        clauses.append((tantivy.Occur.Should, lex.parse(f'"{" ".join(parts)}"')[0]))
    held = tantivy.Query.const_score_query(held, 0.0)
    return tantivy.Query.boolean_query([(tantivy.Occur.Must, held), *clauses])


def whole_word(
    lex: LexicalIndex, alternatives: Sequence[tuple[Sequence[str] | None, tantivy.Query]]
) -> tantivy.Query:
    """A free clause whose hyphenated words (each alternative's parts, None for another
    word) are held whole (``holds``); an OR group is one clause of such alternatives."""
    held = [holds(lex, parts, q) if parts else q for parts, q in alternatives]
    return held[0] if len(held) == 1 else _either(held)


def _joined(lex: LexicalIndex, parts: Sequence[str]) -> tantivy.Query:
    """The word written as one ("hindex"), as Lucene's word-delimiter filter catenates."""
    return lex.parse(f'"{"".join(parts)}"')[0]


def _either(queries: list[tantivy.Query]) -> tantivy.Query:
    return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in queries])
