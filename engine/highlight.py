"""Tantivy's snippet of an ASCII title or abstract, made without Tantivy analysing it.

Tantivy's ``SnippetGenerator`` (tantivy 0.27, through tantivy-py) tokenises and stems the
whole text for each snippet, ~40 µs an abstract. What it does with the tokens is simple:

- Its terms are the query's terms in the field that some document holds, each weighted
  ``1 / (1 + doc freq)`` (f32). A token whose analysed text is one of them is highlighted.
- The text is cut into fragments as the tokens come (stop words and tokens of 40 or more
  bytes never come: the field's analyser drops them): the first starts at 0, and the
  first token ending more than ``max_num_chars`` bytes after a fragment's start starts
  the next, at that token's start. A fragment ends where its last token ends.
- A fragment scores the f32 sum of its highlighted tokens' weights, in text order; the
  best scoring wins, the first of equals. No highlighted token: an empty snippet.
- ``to_html`` escapes ``& < > " '`` (as ``html.escape``) and wraps each highlighted token
  in ``<b>``; tokens never touch, so none are merged. The text is not trimmed.

Here only the tokens that may be query terms are analysed (``engine.why``'s roots, found
once for the "why" and the snippet) and only the few tokens at each fragment's edges are
looked at: a third of Tantivy's CPU for an abstract at 663k papers (bench/highlight_cost.py).
An ASCII text is tokenised, lowercased and measured (bytes are characters) alike by both;
any other goes to Tantivy (``engine.hits``), as does a query whose terms in a field cannot
be read off its snippet generator (``query_fields``).
"""

from __future__ import annotations

import html
import re
import struct
from array import array
from bisect import bisect_left
from collections.abc import Mapping

import tantivy

from papersift.engine.lexical_schema import STOP_WORDS
from papersift.engine.why import stem_roots, text_tokens, word_terms

# The snippet length ``LexicalIndex.snippet_generators`` sets per field (tests/test_highlight
# checks the two agree).
MAX_CHARS = {"ti": 1000, "abs": 300}
LONG = 40  # ``text_analyzer``'s ``remove_long``: tokens this long or longer are dropped

_WORD = re.compile(r"(?<![a-z0-9])[a-z0-9]+")  # a whole token of a lowercased ASCII text
_RUN = re.compile(r"[a-z0-9]+")
_SPECIAL = re.compile(r"[&<>\"']")  # what ``to_html`` escapes, as ``html.escape``
_QUERY_WORD = re.compile(r"[^\W_]+")  # a token of the simple tokenizer
_STOP_REVERSED = frozenset(w[::-1] for w in STOP_WORDS)
_F32 = struct.Struct("<f")


def _f32(x: float) -> float:
    """``x`` rounded to single precision, as Tantivy's ``Score``."""
    value: float = _F32.unpack(_F32.pack(x))[0]
    return value


class FieldTerms:
    """One field's query terms as its snippet generator holds them: term -> weight; the
    roots a token must start with to stem to one (``engine.why``); the fragment size; and
    each word met so far -> its weight (0.0: none). Made for one request: not shared."""

    __slots__ = ("_of_word", "max_chars", "roots", "weights")

    def __init__(self, weights: Mapping[str, float], max_chars: int) -> None:
        self.weights = weights
        self.max_chars = max_chars
        self.roots = stem_roots(weights)
        self._of_word = _WordWeights(weights)

    def hits(self, tokens: Mapping[int, str]) -> list[tuple[int, int, float]]:
        """(start, end, weight) of each of ``tokens`` (offset -> token) that is a term."""
        of = self._of_word
        return sorted([(at, at + len(w), weight) for at, w in tokens.items() if (weight := of[w])])


class _WordWeights(dict[str, float]):
    """Token -> the weight of its term, 0.0 if it is none; each token analysed once."""

    def __init__(self, weights: Mapping[str, float]) -> None:
        super().__init__()
        self.weights = weights

    def __missing__(self, word: str) -> float:
        terms = word_terms(word)  # a token has one term, or none
        weight = self[word] = self.weights.get(terms[0], 0.0) if terms else 0.0
        return weight


def field_terms(
    generator: tantivy.SnippetGenerator,
    searcher: tantivy.Searcher,
    field: str,
    words: Mapping[str, str],
) -> FieldTerms | None:
    """The terms of ``generator`` (for ``field``) among ``words`` (term -> a query word the
    analyser makes it of), read by asking it to highlight the words, weighted by their
    document frequency in ``searcher``; None when that cannot be read exactly."""
    max_chars = MAX_CHARS[field]
    chunks: list[list[tuple[str, str]]] = [[]]
    size = 0
    for term, word in words.items():  # one fragment each: every highlight comes back
        if chunks[-1] and size + 1 + len(word.encode()) > max_chars:
            chunks.append([])
            size = -1
        chunks[-1].append((term, word))
        size += 1 + len(word.encode())
    weights: dict[str, float] = {}
    for chunk in chunks:
        spans: dict[tuple[int, int], str] = {}  # Tantivy's offsets are in UTF-8 bytes
        at = 0
        for term, word in chunk:
            spans[(at, at + len(word.encode()))] = term
            at += len(word.encode()) + 1
        text = " ".join(word for _, word in chunk)
        snippet = generator.snippet_from_doc(tantivy.Document(**{field: text}))
        for r in snippet.highlighted():
            held = spans.get((r.start, r.end))
            if held is None:  # not one of the words: the analysers differ on it
                return None
            doc_freq = searcher.doc_freq(field, held)
            if doc_freq <= 0:  # not the generator's searcher: it has not the term
                return None
            weights[held] = _f32(1.0 / _f32(1.0 + doc_freq))
    return FieldTerms(weights, max_chars)


def query_fields(
    title: tantivy.SnippetGenerator,
    abstract: tantivy.SnippetGenerator,
    searcher: tantivy.Searcher,
    words: str,
    terms: frozenset[str],
) -> dict[str, FieldTerms] | None:
    """The ``FieldTerms`` of the title's and the abstract's generator ("ti", "abs") for a
    query built from ``words``, whose terms in any field are ``terms``; None when one
    field's cannot be read (then Tantivy makes every snippet). ``searcher``: the one the
    generators were made with (``LexicalIndex.snippet_generators``), so the weights are theirs."""
    surface: dict[str, str] = {}
    for word in _QUERY_WORD.findall(words):
        analysed = word_terms(word)
        if len(analysed) == 1:
            surface.setdefault(analysed[0], word)
    if not terms <= surface.keys():
        return None
    out = {}
    for field, generator in (("ti", title), ("abs", abstract)):
        found = field_terms(generator, searcher, field, {t: surface[t] for t in sorted(terms)})
        if found is None:
            return None
        out[field] = found
    return out


def snippet_html(
    text: str, terms: FieldTerms, tokens: Mapping[int, str] | None = None, *, whole: bool = False
) -> str:
    """Tantivy's snippet of ``text``, which must be ASCII, as HTML; "" without a term.
    ``tokens``: ``engine.why.text_tokens`` of the text for roots that include the terms'.
    ``whole``: a fragment from the text's start runs to its end (a title is shown whole;
    Tantivy's ends with its last token, before a closing bracket or question mark)."""
    low = text.lower()
    hits = terms.hits(text_tokens(low, terms.roots) if tokens is None else tokens)
    if not hits:
        return ""
    rev = low[::-1]  # to look back from a fragment's end
    start, first, end_hit, limit = _best_fragment(low, rev, hits, terms.max_chars)
    stop = len(text) if whole and start == 0 else _last_end(rev, limit)
    escape = html.escape if _SPECIAL.search(text, start, stop) else str
    out: list[str] = []
    at = start
    for token_start, token_end, _ in hits[first:end_hit]:
        out += (escape(text[at:token_start]), "<b>", text[token_start:token_end], "</b>")
        at = token_end
    out.append(escape(text[at:stop]))
    return "".join(out)


def _best_fragment(
    low: str, rev: str, hits: list[tuple[int, int, float]], size: int
) -> tuple[int, int, int, int]:
    """The fragment Tantivy picks: its start, its first and end hit (indexes in ``hits``),
    and the offset it ends by."""
    n = len(low)
    fragments = []  # each fragment that holds a hit
    start = i = 0
    while i < len(hits):
        limit = start + size
        following = _following(low, rev, limit) if limit < n else n
        k = bisect_left(hits, (following,), i)  # the first hit of the next fragment
        if k > i:
            fragments.append((start, i, k, min(limit, n)))
        start, i = following, k
    if len(fragments) == 1:
        return fragments[0]
    score = array("f", [0.0])  # Tantivy's sum, in single precision
    best_score = 0.0
    best = fragments[0]
    for fragment in fragments:
        score[0] = 0.0
        for hit in hits[fragment[1] : fragment[2]]:
            score[0] += hit[2]
        if score[0] > best_score:  # the first of equals stays
            best_score, best = score[0], fragment
    return best


def _following(low: str, rev: str, limit: int) -> int:
    """The start of the first kept token of ``low`` that ends after ``limit`` (which is
    inside ``low``), or the text's length: the next fragment's start."""
    at = limit
    if low[limit].isalnum():  # back to the start of the token holding ``limit``
        run = _RUN.match(rev, len(low) - 1 - limit)
        assert run is not None
        at = len(low) - run.end()
    while token := _WORD.search(low, at):
        word = token.group()
        if len(word) < LONG and word not in STOP_WORDS:
            return token.start()
        at = token.end()
    return len(low)


def _last_end(rev: str, limit: int) -> int:
    """The end of the last kept token that ends by ``limit``, read in the reversed text."""
    n = len(rev)
    at = n - limit
    while token := _WORD.search(rev, at):
        word = token.group()
        if len(word) < LONG and word not in _STOP_REVERSED:
            return n - token.start()
        at = token.end()
    raise AssertionError("a fragment with a highlighted token ends after it")
