"""Highlighting skips Tantivy's snippet for a text without a query term (engine.hits): over
every title and abstract of the corpus, the snippets and the "why" equal those made with
Tantivy asked every time, and the skip does happen."""

from __future__ import annotations

import pytest

from papersift.engine.hits import Highlight, snippets
from papersift.engine.plan import make_plan
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine
from papersift.engine.why import Evidence, analysed, explain, query_words


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
