"""Exact title matches first: a title typed or pasted finds its paper in keyword and hybrid.

The embedding of a title is often nearer other papers on its topic than its own paper's
title and abstract: on the 10k bench directory MiniLM put a paper first for its own title
for 49% of 400 titles, and hybrid fusion (semantic weight 0.6, title boost 1.25) for 53%,
where keyword BM25 did for 98%. Like Solr's phrase fields and Typesense's
``prioritize_exact_match``, the papers whose title holds the query's free text as a phrase
come first; only when a few do, since a phrase in many titles ("neural networks") names a
topic, not a paper. Among them a paper whose whole title is the query comes first (as
Typesense's exact match outranks a prefix): BM25 put "Tool Attention Is All You Need: ..."
before "Attention Is All You Need" at 663k papers, and 4 of 150 random titles second so.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

import tantivy

from papersift.core.accents import accented
from papersift.engine.lexical import LexicalIndex
from papersift.engine.lexical_schema import STOP_WORDS, name_analyzer
from papersift.engine.query import ParsedQuery
from papersift.engine.ranking import Ranking
from papersift.engine.store import PaperStore

# Two words or more may be (part of) a title: "Costly Collaborations" was the 10th hybrid hit
# on the demo for its own paper's title; a phrase that many titles hold ("dark matter",
# "neural networks") is a topic, which the limit (``[search] title_phrase_max``) leaves
# alone. Two of the words must be indexed: "the of quantum" is one word of a title, not a
# phrase from it. From three words (before session 37) the rule missed two-word title
# phrases; blind judgments of the 7 of 16 two-word demo queries it changes: relevant in the
# hybrid top ten 49 -> 52, none fewer (bench/RESULTS.md).
MIN_WORDS = 2
MIN_INDEXED = 2
# A two-word phrase one of whose words this many titles hold or fewer is looked for: the
# phrase search walks the rarer word's titles, and for "language models" (14,046 and 61,165
# titles at 663k papers) cost 0.9 ms, where a topic that common changes nothing unless a
# paper's whole title is the query. Three words or more are always looked for, as before.
TWO_WORD_TITLES = 2000

_local = threading.local()  # an analyser is borrowed mutably while it runs: one per thread


def title_phrase(parsed: ParsedQuery) -> str | None:
    """The query's free text (unsigned or required, unfielded words and phrases) as one
    title phrase, or None when it has fewer than ``MIN_WORDS`` words or ``MIN_INDEXED``
    that are not stop words."""
    text = " ".join(c.text for c in parsed.clauses if c.field is None and c.sign != "-")
    text = " ".join(text.replace("\\", " ").replace('"', " ").split())
    words = re.findall(r"\w+", text.lower())
    indexed = [w for w in words if w not in STOP_WORDS]
    return text if len(words) >= MIN_WORDS and len(indexed) >= MIN_INDEXED else None


def title_matches(
    lex: LexicalIndex,
    store: PaperStore,
    parsed: ParsedQuery,
    restrict: tantivy.Query | None,
    limit: int,
) -> tuple[list[int], list[int]]:
    """Docids of the papers that ``restrict`` allows (the filters and the query's signed,
    author and category clauses; None: all) whose title holds the free text of ``parsed`` as a
    phrase, and those of them whose whole title is that text (``same_words``). When more
    than ``limit`` papers hold the phrase (a topic), only those whose whole title it is, if
    ``limit`` or fewer. Such a paper matches the whole query too."""
    text = title_phrase(parsed) if limit > 0 else None
    if text is None or (len(text.split()) == 2 and common_pair(lex, text)):
        return [], []
    phrase, errors = lex.parse(f'ti:"{text}"')
    if errors:
        return [], []
    # Not intersected with the query's own (OR) clauses: seeking through that union cost
    # 0.85 ms of a 10 ms keyword query at 663k papers; the selective phrase alone is cheap.
    # Scored by the phrase alone, the shortest titles holding it come first: a whole title
    # scores highest (unless a title holds the phrase twice).
    docids, scores, total = lex.search(lex.combine(phrase, restrict), limit + 1)
    if not docids:
        return [], []
    # A topic: only the best scored can be whole titles, and only they are read.
    best = scores[0]
    checked = (
        docids if total <= limit else [d for d, s in zip(docids, scores, strict=True) if s >= best]
    )
    titles = store.titles(checked)
    whole = [d for d in checked if d in titles and same_words(titles[d], text)]
    if total <= limit:
        return docids, whole
    return (whole, whole) if len(whole) <= limit else ([], [])


def common_pair(lex: LexicalIndex, text: str) -> bool:
    """Whether both words of the two-word ``text`` are each in more than
    ``TWO_WORD_TITLES`` titles (a topic: ``TWO_WORD_TITLES``)."""
    searcher = lex.searcher()
    terms = lex.analyzer("ti").analyze(text)
    return bool(terms) and min(searcher.doc_freq("ti", t) for t in terms) > TWO_WORD_TITLES


def same_words(title: str, text: str) -> bool:
    """Whether ``title`` is ``text`` but for case, punctuation, TeX accents and accents (the
    title field's analysis without its stop words and stemming: "Graph Attention Network"
    is not "Graph Attention Networks")."""
    fold: tantivy.TextAnalyzer | None = getattr(_local, "fold", None)
    if fold is None:
        fold = _local.fold = name_analyzer()  # the simple tokenizer, lowercased, ASCII
    return bool(fold.analyze(accented(title)) == fold.analyze(text))


def titles_first(ranking: Ranking, titles: Sequence[int], whole: Sequence[int]) -> Ranking:
    """``ranking`` with the papers of ``titles`` first, those of ``whole`` (whose whole title
    is the query) before the others, each group in ``ranking``'s order; one ``ranking``
    lacks follows its group's others with score 0."""
    return ranking.put_first(titles).put_first(whole)


def put_first(
    ranked: list[tuple[int, float]], first: list[int], whole: Sequence[int] = ()
) -> list[tuple[int, float]]:
    """``ranked`` with the papers of ``first`` moved to the front in their ``ranked`` order,
    those of ``whole`` before the others; one that ``ranked`` lacks follows its group with
    score 0 (``titles_first`` on pairs)."""
    if not first:
        return ranked
    return titles_first(Ranking.from_pairs(ranked), first, whole).pairs()
