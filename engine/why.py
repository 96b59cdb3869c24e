"""Why a hit is in the results: its rank and score in each retriever, the exact-title rule,
the query words it holds (and in which fields), the filters it passed, and in hybrid mode
the two parts of its fused score.

Everything comes from what the search already holds (the ranked lists with their scores,
the plan); the only new work is finding the query words in the page's hits, with the
index's own analysers. Only the tokens that can stem to a query term are analysed (those
starting with the term less its last two letters: Porter's English stemmer only cuts
suffixes, or changes one letter, `y` to `i`, or adds an `e`), each word once per process:
analysing every abstract whole cost ~0.4 ms a hit on a loaded machine.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import tantivy

from papersift.core.accents import accented, fold_same_length
from papersift.core.paper import Paper
from papersift.engine.lexical_schema import name_analyzer, text_analyzer
from papersift.engine.query import ParsedQuery
from papersift.engine.results import Filters, Fused, Why

# The fields whose words are looked for, by the query prefix that names each alone.
FIELDS = {"ti": "title", "abs": "abstract", "au": "authors"}
MAX_WORDS = 16  # query clauses looked for (a pasted abstract has hundreds)
MAX_AUTHORS = 100  # author names looked through (a physics paper may have thousands)
WORD_CACHE = 200_000  # analysed words kept (word -> its terms); cleared when full
Words = tuple[tuple[str, str | None, frozenset[str]], ...]  # (text, field, analysed terms)
# "ti" and "abs" -> the field's terms that may be query terms (``text_terms``), when the
# caller has them already (``engine.hits``).
Found = dict[str, frozenset[str]]


_TOKEN = re.compile(r"[^\W_]+")  # a token of Tantivy's simple tokenizer, from its start
# A token that starts where the match starts (the character before is not alphanumeric:
# ``[^\W_]`` is exactly ``str.isalnum``), in any text and in an ASCII one, where the same is
# a quicker character set.
_TOKEN_AT = re.compile(r"(?<![^\W_])[^\W_]+").match
_ASCII_TOKEN_AT = re.compile(r"(?<![a-zA-Z0-9])[a-zA-Z0-9]+").match
SHORT_ROOT = 2  # roots this long or shorter get a regular expression of their own
ROOT_CACHE = 4096  # root sets' plans and short roots' expressions kept; cleared when full
_plans: dict[tuple[str, ...], tuple[tuple[str, bool], ...]] = {}  # (root, short) to look for
_short_any: dict[str, re.Pattern[str]] = {}  # a short root's tokens in any text
_short_ascii: dict[str, re.Pattern[str]] = {}  # and in an ASCII text


@dataclass(frozen=True, slots=True)
class QueryWords:
    """The query's words to look for, and the roots a token must start with to stem to
    one of their terms (the tokens worth analysing)."""

    words: Words = ()
    roots: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Evidence:
    """What one search knew when it ranked, read for each hit of the page.

    ``keyword_scores`` and ``semantic_scores`` are the lists' scores by rank (index rank-1),
    the lists the ``ranks`` of ``engine.hits.make_hits`` count in; empty when unknown."""

    keyword_scores: Sequence[float] = ()
    semantic_scores: Sequence[float] = ()
    fusion: str | None = None  # "convex" or "rrf": hybrid's method
    semantic_weight: float = 1.0  # convex: the semantic side's weight; rrf: its multiplier
    rrf_k: int = 60
    words: QueryWords = field(default_factory=QueryWords)
    filters: tuple[str, ...] = ()
    keyword_ranked: bool = True  # False: the keyword list is in date or citation order
    # The query's mean similarity to every paper and its standard deviation (``Why.standout``)
    background: tuple[float, float] | None = None


_local = threading.local()
_terms_of_word: dict[str, tuple[str, ...]] = {}  # the text analyser's output per word


def _analyzers() -> tuple[tantivy.TextAnalyzer, tantivy.TextAnalyzer]:
    """One pair per thread: an analyser is borrowed mutably while it runs."""
    pair: tuple[tantivy.TextAnalyzer, tantivy.TextAnalyzer] | None = getattr(_local, "pair", None)
    if pair is None:
        pair = _local.pair = (text_analyzer(), name_analyzer())
    return pair


def query_words(parsed: ParsedQuery) -> QueryWords:
    """The query's clauses that name words (free, ``+``, ``ti:``, ``abs:``, ``au:``; not
    excluded ones), each with its analysed terms, as the index analyses that field."""
    text, name = _analyzers()
    # (a spelling, field) -> (the clause's text, the spelling's terms)
    words: dict[tuple[str, str | None], tuple[str, frozenset[str]]] = {}
    for c in parsed.clauses:
        if c.sign == "-" or (c.field is not None and c.field not in FIELDS):
            continue
        for spelling in (c.text, *c.also):  # "Schrödinger" is "Schroedinger" (engine.umlauts)
            terms = frozenset((name if c.field == "au" else text).analyze(spelling))
            if terms and len(words) < MAX_WORDS:
                words.setdefault((spelling, c.field), (c.text, terms))
    roots = stem_roots(t for (_, f), (_, ts) in words.items() if f != "au" for t in ts)
    return QueryWords(tuple((w, f, ts) for (_, f), (w, ts) in words.items()), roots)


def stem_roots(terms: Iterable[str]) -> tuple[str, ...]:
    """What a token must start with to stem to one of ``terms`` (each less its last two
    letters; see the module docstring), sorted and without repeats."""
    return tuple(sorted({t[: max(1, len(t) - 2)] for t in terms}))


def analysed(text: str) -> frozenset[str]:
    """The terms the index's text analyser makes of ``text``."""
    return frozenset(_analyzers()[0].analyze(text))


def text_terms(text: str, roots: tuple[str, ...]) -> frozenset[str]:
    """The terms of ``text``'s tokens that may stem to a query term (``QueryWords``)."""
    out: set[str] = set()
    for word in set(text_tokens(text.lower(), roots).values()):
        out.update(word_terms(word))
    return frozenset(out)


def text_tokens(low: str, roots: tuple[str, ...]) -> dict[int, str]:
    """The tokens of the lowercased text ``low`` that start with one of ``roots``, by
    offset. A root of one or two letters, which ``str.find`` would stop at in most words,
    is looked for by an expression of its own that matches only at a token's start,
    compiled once a process (half the time for a one-letter root); a longer one by
    ``str.find``, each place it is found checked: compiling one for each new long root
    (~75 µs) would cost a request more than it saves, and one expression of all the roots
    is 8x slower."""
    tokens: dict[int, str] = {}
    written = low
    low = fold_same_length(low)  # as the index folds: "schrödinger" has the root "schroding"
    ascii_text = low.isascii()
    token_at = _ASCII_TOKEN_AT if ascii_text else _TOKEN_AT
    patterns = _short_ascii if ascii_text else _short_any
    for root, short in _root_plan(roots):
        if short:
            pattern = patterns.get(root) or _short_pattern(root, ascii_text)
            for m in pattern.finditer(low):
                tokens[m.start()] = m[0]
            continue
        at = low.find(root)
        while at != -1:
            token = token_at(low, at)
            if token:
                tokens[at] = token[0]
            at = low.find(root, at + 1)
    if low is not written:
        # The tokens as written (same offsets: one letter for one), which the analyser folds
        # as the index did: "gauß" is "gauss" to both, where one letter for one gives "gaus".
        return {at: written[at : at + len(token)] for at, token in tokens.items()}
    return tokens


def _root_plan(roots: tuple[str, ...]) -> tuple[tuple[str, bool], ...]:
    """The roots ``text_tokens`` looks for, each with whether it is short (alphanumeric,
    at most ``SHORT_ROOT`` long). A root that starts with another of ``roots`` is dropped:
    every token it starts, the other starts too. So no two roots kept start the same
    token, and with ``roots`` sorted the tokens come in the order they did when each root
    was looked for and an offset found again was skipped."""
    plan = _plans.get(roots)
    if plan is None:
        unique = tuple(dict.fromkeys(roots))
        kept = [r for r in unique if not any(r != o and r.startswith(o) for o in unique)]
        plan = tuple((r, len(r) <= SHORT_ROOT and bool(_TOKEN.fullmatch(r))) for r in kept)
        if len(_plans) >= ROOT_CACHE:
            _plans.clear()
        _plans[roots] = plan
    return plan


def _short_pattern(root: str, ascii_text: bool) -> re.Pattern[str]:
    """The tokens starting with the alphanumeric ``root``, in an ASCII text or in any: the
    root, which the search skips to, then a look back to its start (the character before
    must not be alphanumeric), then the token's rest."""
    patterns = _short_ascii if ascii_text else _short_any
    alnum = "[a-zA-Z0-9]" if ascii_text else r"[^\W_]"
    r = re.escape(root)
    if len(patterns) >= ROOT_CACHE:
        patterns.clear()
    pattern = patterns[root] = re.compile(rf"{r}(?<!{alnum}{r}){alnum}*")
    return pattern


def word_terms(word: str) -> tuple[str, ...]:
    """The text analyser's terms of one token (none for a stop word or a long one), each
    word analysed once per process."""
    terms = _terms_of_word.get(word)
    if terms is None:
        if len(_terms_of_word) >= WORD_CACHE:
            _terms_of_word.clear()
        terms = _terms_of_word[word] = tuple(_analyzers()[0].analyze(word))
    return terms


def filter_lines(filters: Filters, parsed: ParsedQuery) -> tuple[str, ...]:
    """The request's filters and the query's restricting clauses, as the page shows them."""
    lines = []
    if filters.categories:
        lines.append("category " + " or ".join(filters.categories))
    lines += [f"researcher {r}" for r in filters.researchers]
    lines += [f"researcher #{r}" for r in filters.researcher_ids]
    lines += [f"institution {i}" for i in filters.institutions]
    if filters.date_from:
        lines.append(f"published on or after {filters.date_from.isoformat()}")
    if filters.date_to:
        lines.append(f"published on or before {filters.date_to.isoformat()}")
    for c in parsed.clauses:
        if c.sign or (c.field is not None and c.field not in ("ti", "abs")):
            prefix = f"{c.field}:" if c.field else ""
            text = f'"{c.text}"' if c.phrase else c.text
            lines.append(f"{c.sign}{prefix}{text}" + (" (excluded)" if c.sign == "-" else ""))
    return tuple(lines)


def _matched(
    paper: Paper, query: QueryWords, known: Found | None = None
) -> dict[str, tuple[str, ...]]:
    """field -> the query words (clauses) all of whose terms the field holds. ``known``:
    the title's and abstract's ``text_terms`` for roots that include ``query.roots``."""
    if not query.words:
        return {}
    found: dict[str, list[str]] = {}
    terms: dict[str, frozenset[str]] = dict(known) if known is not None else {}

    def of(prefix: str) -> frozenset[str]:
        if prefix not in terms:  # analysed only when a word is looked for there
            if prefix == "au":
                names = " ".join(a.name for a in paper.authors[:MAX_AUTHORS])
                terms[prefix] = frozenset(_analyzers()[1].analyze(names))
            else:
                text = paper.title if prefix == "ti" else paper.abstract
                terms[prefix] = text_terms(accented(text), query.roots)
        return terms[prefix]

    for word, prefix, wanted in query.words:
        for f in (prefix,) if prefix else ("ti", "abs", "au"):
            if f == "au" and prefix is None and len(wanted) > 1:
                continue  # a free phrase is not looked for among the names
            if wanted <= of(f):
                found.setdefault(FIELDS[f], []).append(word)
    return {f: tuple(dict.fromkeys(ws)) for f, ws in found.items()}  # a word in two spellings


def _score(scores: Sequence[float], rank: int | None) -> float | None:
    return float(scores[rank - 1]) if rank is not None and rank <= len(scores) else None


def _normalised(scores: Sequence[float], score: float | None) -> float:
    """``score`` min-max normalised over ``scores`` (best first), as ``engine.fusion``."""
    if score is None or not scores:
        return 0.0
    hi, lo = float(scores[0]), float(scores[-1])
    return 1.0 if hi <= lo else (score - lo) / (hi - lo)


def explain(
    evidence: Evidence, paper: Paper, ranks: dict[str, int], found: Found | None = None,
    keyword_match: bool | None = None,
) -> Why:  # fmt: skip
    """Why ``paper``, with its ``ranks`` in each list, is a hit of the search of ``evidence``
    (``found``: see ``_matched``; ``keyword_match``: whether it is a keyword match)."""
    k_rank = ranks.get("keyword") if evidence.keyword_ranked else None
    s_rank = ranks.get("semantic")
    k_score = _score(evidence.keyword_scores, k_rank)
    similarity = _score(evidence.semantic_scores, s_rank)
    fused = None
    w = evidence.semantic_weight
    if evidence.fusion == "convex":
        keyword_part = (1 - w) * _normalised(evidence.keyword_scores, k_score)
        fused = Fused("convex", keyword_part, w * _normalised(evidence.semantic_scores, similarity))
    elif evidence.fusion == "rrf":
        k = evidence.rrf_k
        fused = Fused(
            "rrf",
            1 / (k + k_rank) if k_rank else 0.0,
            w / (k + s_rank) if s_rank else 0.0,
        )
    standout = None
    if similarity is not None and evidence.background is not None:
        mean, spread = evidence.background
        standout = (similarity - mean) / spread if spread > 0 else None
    return Why(
        k_rank, k_score, s_rank, similarity, "title" in ranks,
        _matched(paper, evidence.words, found), evidence.filters, fused, standout,
        keyword_match,
    )  # fmt: skip
