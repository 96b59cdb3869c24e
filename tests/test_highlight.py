"""Highlighting without Tantivy's snippet (engine.hits, engine.highlight): a text without a
query term is skipped, and an ASCII one gets Tantivy's snippet made in Python. Over every
title and abstract of the corpus and over made-up texts, the snippets and the "why" equal
those made with Tantivy asked every time."""

from __future__ import annotations

import html
import random
import re
from collections.abc import Mapping

import pytest

from papersift.core.accents import accented
from papersift.engine import hits
from papersift.engine.highlight import MAX_CHARS, FieldTerms, query_fields, snippet_html
from papersift.engine.hits import Highlight, make_hits, snippets
from papersift.engine.plan import make_plan
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine
from papersift.engine.why import Evidence, analysed, explain, query_words, text_terms


@pytest.mark.parametrize(
    "query",
    [
        "neural machine translation",
        "parsing -grammar",  # Tantivy highlights an excluded word too
        'ti:translation "language model" OR speech',
        "+dependency parsers hoping generalization",
        'Schr\\"odinger equation',  # TeX, decoded before parsing
    ],
)
def test_skipping_tantivy_changes_no_snippet_and_no_why(engine: SearchEngine, query: str) -> None:
    plan = make_plan(engine, SearchRequest(query, mode="hybrid"), 10)
    assert plan.keyword.query is not None
    generators = engine.data.lexical.snippet_generators(plan.keyword.query)
    skipping = Highlight(*generators, analysed(plan.parsed.all_text))
    always = Highlight(*generators, None)
    evidence = Evidence(words=query_words(plan.parsed))
    store = engine.data.store
    papers = store.get(sorted(store.all_text_hashes()))
    assert len(papers) > 100
    skipped = highlighted = 0
    for paper in papers.values():
        found = skipping.found(paper)
        assert found is not None
        expected = snippets(paper, always)
        assert snippets(paper, skipping, found) == expected, paper.arxiv_id
        assert explain(evidence, paper, {}, found) == explain(evidence, paper, {})
        assert skipping.terms is not None
        skipped += not skipping.terms & found["abs"]
        highlighted += "<b>" in expected[1]
    assert skipped and highlighted  # both paths ran


def test_excluded_words_are_among_the_terms(engine: SearchEngine) -> None:
    """Tantivy highlights an excluded word, so the terms a text is checked for include it."""
    plan = make_plan(engine, SearchRequest("parsing -grammar", mode="keyword"), 10)
    assert plan.keyword.query is not None
    generators = engine.data.lexical.snippet_generators(plan.keyword.query)
    highlight = Highlight(*generators, analysed(plan.parsed.all_text))
    paper = next(
        p
        for p in engine.data.store.get(sorted(engine.data.store.all_text_hashes())).values()
        if "grammar" in p.abstract.lower() and "pars" not in p.abstract.lower()
    )
    _, abstract = snippets(paper, highlight, highlight.found(paper))
    assert "<b>grammar" in abstract.lower()


# Queries for the exact snippets: stop words, stems, hyphens, digits, phrases, field
# queries, excluded words, apostrophes, many terms.
EXACT_QUERIES = [
    "neural networks",
    "network",
    "the state of the art",
    "IL-10 cells",
    "3d point clouds 2",
    "it's a model's",
    "ti:learning abs:data",
    'ti:translation "language model" OR speech',
    '"machine translation" -statistical',
    "parsing -grammar",
    "+dependency parsers hoping generalization",
    "language models are few-shot learners",
    "speech recognition AND noise",
    "deep learning for natural language processing with transformers and attention",
    "cat:cs.CL parsing",
    "au:smith parsing",
]


def _exact(engine: SearchEngine, query: str) -> tuple[Highlight, Highlight]:
    """The highlight ``make_hits`` uses for ``query`` (exact snippets) and Tantivy's alone."""
    plan = make_plan(engine, SearchRequest(query, mode="keyword"), 10)
    assert plan.keyword.query is not None
    generators = engine.data.lexical.snippet_generators(plan.keyword.query)
    terms = analysed(plan.parsed.all_text)
    searcher = engine.data.lexical.index.searcher()
    fields = query_fields(*generators, searcher, plan.parsed.all_text, terms)
    assert fields is not None, query
    return Highlight(*generators, terms, fields), Highlight(*generators)


@pytest.mark.parametrize("query", EXACT_QUERIES)
def test_exact_snippets_equal_tantivys_on_the_corpus(engine: SearchEngine, query: str) -> None:
    exact, tantivy_only = _exact(engine, query)
    store = engine.data.store
    highlighted = 0
    for paper in store.get(sorted(store.all_text_hashes())).values():
        found = exact.found(paper)
        # As hits.snippets reads them: TeX accents as letters (found() reads them so).
        for field, text in (("ti", accented(paper.title)), ("abs", accented(paper.abstract))):
            expected = tantivy_only.html(field, text, None)
            assert exact.html(field, text, found) == expected, (paper.arxiv_id, field)
            highlighted += "<b>" in expected
    assert highlighted


# Pieces of synthetic texts: the query's words in several forms, stop words, tokens of 39
# and 40+ characters, HTML-special characters, digits, runs of space and punctuation that
# move fragment boundaries.
PIECES = [
    "network", "networks", "Networks", "NETWORK", "networking", "neural", "Neural",
    "neural-network", "parsing", "parser", "grammar", "IL-10", "10", "3d", "the", "The",
    "and", "of", "a", "is", "x" * 39, "y" * 40, "neuralx" * 6, "z" * 38 + "network",
    "&", "<b>", '"q"', "'s", "it's", "-", "(", "),", ".", "foo", "bar", "baz", "lorem",
    "ipsum", "dolor", "\n", "\t", "-" * 120, " " * 70, "w" * 80,
]  # fmt: skip


@pytest.mark.parametrize(
    "query",
    ["neural networks", "parsing -grammar network", "ti:grammar network", '"neural net" 10'],
)
def test_exact_snippets_equal_tantivys_on_made_up_texts(engine: SearchEngine, query: str) -> None:
    """Long texts where the fragment chosen matters, ties between fragments, stop words and
    dropped long tokens at a fragment's edge, leading space, & < > " '."""
    exact, tantivy_only = _exact(engine, query)
    assert exact.fields is not None
    rng = random.Random(query)
    for _ in range(1000):
        pieces = rng.choices(PIECES, k=rng.choice([3, 20, 60, 150, 400]))
        seps = rng.choices([" ", " ", " ", "", "  ", "\n"], k=len(pieces))
        text = " " * rng.choice([0, 0, 1, 4]) + "".join(
            p + s for p, s in zip(pieces, seps, strict=True)
        )
        for field in ("ti", "abs"):
            expected = tantivy_only.html(field, text, None)  # a title's, whole
            made = snippet_html(text, exact.fields[field], whole=field == "ti")
            assert made == expected, (field, text)


def test_snippet_lengths_are_those_of_the_generators(engine: SearchEngine) -> None:
    """``engine.highlight.MAX_CHARS`` is what ``LexicalIndex.snippet_generators`` sets."""
    exact, tantivy_only = _exact(engine, "network")
    assert exact.fields is not None
    for field, size in MAX_CHARS.items():
        for shift in range(2):
            text = "a" * shift + " lorem" * 400 + " network" + " ipsum" * 400
            expected = tantivy_only.html(field, text, None)
            assert abs(len(expected) - 7 - size) <= 6  # the fragment is ~size long
            assert snippet_html(text, exact.fields[field], whole=field == "ti") == expected


def test_the_first_of_equal_fragments_wins(engine: SearchEngine) -> None:
    exact, tantivy_only = _exact(engine, "network")
    assert exact.fields is not None
    filler = " lorem" * 60
    for text, shown in (
        (f"a network{filler} the network{filler}", "a <b>network</b> lorem"),
        (f"a network{filler} networks, network{filler}", "<b>networks</b>, <b>network</b>"),
    ):
        html = snippet_html(text, exact.fields["abs"])
        assert html == tantivy_only.html("abs", text, None)
        assert shown in html


def test_a_text_that_is_not_ascii_goes_to_tantivy(
    engine: SearchEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    exact, tantivy_only = _exact(engine, "neural networks")
    monkeypatch.setattr(hits, "snippet_html", None)  # fails if called
    text = "Neural networks, réseaux de neurones, and networks again"
    found = {"ti": frozenset[str](), "abs": text_terms(text, exact.roots)}
    expected = tantivy_only.html("abs", text, None)
    assert "<b>" in expected
    assert exact.html("abs", text, found) == expected


def test_make_hits_uses_the_exact_snippets(
    engine: SearchEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page's snippets equal those made with Tantivy asked for every text."""
    made: list[str] = []

    def counted(
        text: str, terms: FieldTerms, tokens: Mapping[int, str] | None = None, whole: bool = False
    ) -> str:
        made.append(text)
        return snippet_html(text, terms, tokens, whole=whole)

    monkeypatch.setattr(hits, "snippet_html", counted)
    request = SearchRequest("neural machine translation models", mode="keyword")
    plan = make_plan(engine, request, 24)
    assert plan.keyword.query is not None
    page = [(d, 1.0) for d in sorted(engine.data.store.all_text_hashes())[:60]]
    q = plan.keyword.query
    words = plan.parsed.all_text
    new = make_hits(engine.data, page, q, {}, {}, None, words)
    old = make_hits(engine.data, page, q, {}, {}, None, None)
    assert [(h.title_html, h.abstract_html) for h in new] == [
        (h.title_html, h.abstract_html) for h in old
    ]
    assert any("<b>" in h.abstract_html for h in new)
    assert made  # the exact snippets were made


def test_a_highlighted_title_is_shown_whole(engine: SearchEngine) -> None:
    """Tantivy's fragment ends where its last token does: a title ending in ")" or "?"
    lost that on the page until the rest was put back (``engine.hits.whole_title``)."""
    store = engine.data.store
    papers = store.get(sorted(store.all_text_hashes()))
    tails = {d: p for d, p in papers.items() if not p.title[-1].isalnum()}
    assert len(tails) >= 5
    for docid, paper in list(tails.items())[:30]:
        words = " ".join(re.findall(r"[A-Za-z]{5,}", paper.title)[:2])
        plan = make_plan(engine, SearchRequest(words, mode="keyword"), 24)
        assert plan.keyword.query is not None, paper.title
        for all_text in (plan.parsed.all_text, None):  # made in Python, and by Tantivy
            made = make_hits(engine.data, [(docid, 1.0)], plan.keyword.query, {}, {}, None,
                             all_text)  # fmt: skip
            shown = made[0].title_html
            assert "<b>" in shown and shown.endswith(html.escape(paper.title[-1])), shown
            assert html.unescape(re.sub("</?b>", "", shown)) == paper.title
