"""Search behaviour on a small real index: ranking, modes, filters, facets, sorts, paging."""

from __future__ import annotations

import itertools
from collections import Counter
from datetime import date

import numpy as np
import pytest

from papersift.core.authors import normalise_name
from papersift.core.errors import QueryError
from papersift.engine.lexical_filters import keyword_filter
from papersift.engine.results import Filters, Mode, SearchRequest, SearchResult
from papersift.engine.search import SearchEngine
from tests.search_checks import assert_consistent

MODES: tuple[Mode, ...] = ("keyword", "semantic", "hybrid")


def all_pages(engine: SearchEngine, request: SearchRequest) -> list[SearchResult]:
    first = engine.search(request)
    pages = [first]
    for page in range(2, first.pages + 1):
        pages.append(
            engine.search(
                SearchRequest(
                    request.query,
                    request.mode,
                    request.filters,
                    request.sort,
                    page,
                    request.page_size,
                )
            )
        )
    return pages


def test_exact_title_ranks_first_in_every_mode(engine: SearchEngine) -> None:
    paper = engine.paper("2401.10241")
    assert paper is not None
    for mode in MODES:
        result = engine.search(SearchRequest(paper.title, mode=mode))
        assert result.mode == mode
        assert result.hits[0].paper.arxiv_id == "2401.10241", mode


def test_title_weighs_more_than_abstract(engine: SearchEngine) -> None:
    # "parser" appears in titles and abstracts of the sample; title matches must lead.
    result = engine.search(SearchRequest("parsing", mode="keyword", page_size=5))
    assert result.total > 5
    top = result.hits[0].paper
    assert "pars" in top.title.lower()


def test_snippets_highlight_and_escape(engine: SearchEngine) -> None:
    result = engine.search(SearchRequest("translation", mode="keyword"))
    assert result.hits
    assert any("<b>" in h.title_html or "<b>" in h.abstract_html for h in result.hits)
    for h in result.hits:
        # No raw markup from the corpus survives: only our <b> tags.
        stripped = h.abstract_html.replace("<b>", "").replace("</b>", "")
        assert "<" not in stripped and ">" not in stripped


@pytest.mark.parametrize("mode", MODES)
def test_category_filter_and_archive(engine: SearchEngine, mode: Mode) -> None:
    for cat, check in (
        ("cs.CL", lambda cats: "cs.CL" in cats),
        ("cs", lambda cats: any(c.startswith("cs.") for c in cats)),
        ("cmp-lg", lambda cats: "cmp-lg" in cats),
    ):
        request = SearchRequest("language model", mode=mode, filters=Filters(categories=(cat,)))
        result = engine.search(request)
        assert result.hits, (mode, cat)
        for page in all_pages(engine, request):
            assert all(check(h.paper.categories) for h in page.hits), (mode, cat)


@pytest.mark.parametrize("mode", MODES)
def test_researcher_and_date_filters(engine: SearchEngine, mode: Mode) -> None:
    paper = engine.paper("2401.10241")
    assert paper is not None
    who = paper.authors[0].name
    request = SearchRequest("training", mode=mode, filters=Filters(researchers=(who,)))
    for page in all_pages(engine, request):
        for h in page.hits:
            assert normalise_name(who) in {a.key for a in h.paper.authors}
    lo, hi = date(2025, 1, 1), date(2025, 12, 31)
    request = SearchRequest("retrieval", mode=mode, filters=Filters(date_from=lo, date_to=hi))
    result = engine.search(request)
    assert result.hits
    for page in all_pages(engine, request):
        assert all(lo <= h.paper.published <= hi for h in page.hits)


@pytest.mark.parametrize("mode", MODES)
def test_facets_and_total_match_the_pageable_list(engine: SearchEngine, mode: Mode) -> None:
    request = SearchRequest("neural network", mode=mode, page_size=50)
    pages = all_pages(engine, request)
    hits = [h for p in pages for h in p.hits]
    ids = [h.paper.arxiv_id for h in hits]
    assert len(ids) == len(set(ids)) == pages[0].total
    years = Counter(str(h.paper.published.year) for h in hits)
    assert {f.value: f.count for f in pages[0].facets["years"]} == dict(years)
    cats = Counter(c for h in hits for c in h.paper.categories)
    for f in pages[0].facets["categories"]:
        assert cats[f.value] == f.count


@pytest.mark.parametrize("mode", MODES)
def test_sorts(engine: SearchEngine, mode: Mode) -> None:
    for sort, ok in (("newest", lambda a, b: a >= b), ("oldest", lambda a, b: a <= b)):
        request = SearchRequest("search", mode=mode, sort=sort, page_size=40)  # type: ignore[arg-type]
        dates = [h.paper.published for p in all_pages(engine, request) for h in p.hits]
        assert len(dates) > 10
        assert all(ok(a, b) for a, b in itertools.pairwise(dates)), (mode, sort)


def test_browse_without_query_is_newest_first(engine: SearchEngine) -> None:
    result = engine.search(SearchRequest("", filters=Filters(categories=("cs.DL",))))
    assert result.total > 0 and result.mode == "keyword"
    dates = [h.paper.published for h in result.hits]
    assert dates == sorted(dates, reverse=True)


def test_pagination_window(engine: SearchEngine) -> None:
    a = engine.search(SearchRequest("data", mode="keyword", page=1, page_size=10))
    b = engine.search(SearchRequest("data", mode="keyword", page=2, page_size=10))
    assert not {h.paper.arxiv_id for h in a.hits} & {h.paper.arxiv_id for h in b.hits}
    assert a.page_size == 10 and a.pages == -(-a.total // 10)
    with pytest.raises(QueryError, match="result window"):
        engine.search(SearchRequest("data", page=1000))
    with pytest.raises(QueryError):
        engine.search(SearchRequest("data", page=0))
    with pytest.raises(QueryError):
        engine.search(SearchRequest("data", page_size=10_000))


@pytest.mark.parametrize(
    "query",
    [
        "2401.10241",
        "2401.10241v2",
        "arXiv:2401.10241",
        "https://arxiv.org/abs/2401.10241v1",
        "http://arxiv.org/pdf/2401.10241.pdf",
    ],
)
def test_arxiv_id_or_url_goes_to_the_paper(engine: SearchEngine, query: str) -> None:
    result = engine.search(SearchRequest(query))
    assert result.direct is not None and result.direct.arxiv_id == "2401.10241"
    assert [h.paper.arxiv_id for h in result.hits] == ["2401.10241"]


def test_old_style_id(engine: SearchEngine) -> None:
    result = engine.search(SearchRequest("cmp-lg/9405001"))
    assert result.direct is not None and result.direct.arxiv_id == "cmp-lg/9405001"
    paper = engine.paper("cmp-lg/9405001v1")
    assert paper is not None and paper.categories[0] == "cmp-lg"


@pytest.mark.parametrize(
    "query",
    [
        '"unclosed phrase',
        "ti:",
        "foo:bar",
        "((( ]]]",
        "AND OR NOT",
        "+",
        "-",
        "***",
        "a:b:c",
        "ti:(x",
        'au:"',
        "\\",
        "cat:",
        "~2",
        "^3",
        "title:[a TO b]",
        "\x00\x01",
        "NOT",
    ],
)
def test_malformed_syntax_never_fails(engine: SearchEngine, query: str) -> None:
    for mode in MODES:
        assert_consistent(engine, engine.search(SearchRequest(query, mode=mode)))


def test_warnings_report_what_was_ignored(engine: SearchEngine) -> None:
    assert engine.search(SearchRequest('"unclosed parsing')).warnings
    assert any("foo" in w for w in engine.search(SearchRequest("foo:bar parsing")).warnings)


def test_what_cannot_be_searched_is_said(engine: SearchEngine) -> None:
    """An unknown ``cat:`` matches nothing, and a query of symbols alone lists every paper:
    each says why instead of a silent 0 or an unexplained full list."""
    r = engine.search(SearchRequest("cat:zz parsing", mode="keyword"))
    assert r.total == 0 and "no papers in category 'zz' (cat:zz)" in r.warnings
    assert not engine.search(SearchRequest("cat:cs.CL parsing", mode="keyword")).warnings
    nobody = Filters(researchers=("Nobody Atall",))
    r = engine.search(SearchRequest("parsing", mode="keyword", filters=nobody))
    assert r.total == 0 and "no papers by a researcher named 'Nobody Atall'" in r.warnings
    paper = engine.paper("2401.10241")
    assert paper is not None
    someone = Filters(researchers=(paper.authors[0].name,))
    r = engine.search(SearchRequest("", mode="keyword", filters=someone))
    assert r.total >= 1 and not r.warnings
    everything = engine.search(SearchRequest("", mode="keyword")).total
    for query in ("(((", "\U0001f600 \U0001f680"):
        r = engine.search(SearchRequest(query, mode="keyword"))
        assert r.total == everything
        assert "nothing in the query could be searched for; it was left out" in r.warnings


def test_cat_reads_an_archive_in_any_case(engine: SearchEngine) -> None:
    """``cat:CS`` is ``cat:cs``, as the category filter reads it; the warning for an unknown
    category and the search agree on which ones exist."""
    lower = engine.search(SearchRequest("cat:cs", mode="keyword"))
    upper = engine.search(SearchRequest("cat:CS", mode="keyword"))
    assert lower.total > 0 and upper.total == lower.total and not upper.warnings


def test_fielded_syntax_must_and_exclude(engine: SearchEngine) -> None:
    paper = engine.paper("2401.10241")
    assert paper is not None
    surname = paper.authors[0].name.split()[-1]
    result = engine.search(SearchRequest(f"au:{surname}", mode="keyword"))
    assert "2401.10241" in {h.paper.arxiv_id for h in result.hits}
    with_cat = engine.search(SearchRequest("language cat:cmp-lg", mode="keyword"))
    assert with_cat.total > 0
    base = engine.search(SearchRequest("language model", mode="keyword", page_size=100))
    excl = engine.search(SearchRequest("language model -speech", mode="keyword", page_size=100))
    assert excl.total < base.total
    for h in excl.hits:
        assert "speech" not in (h.paper.title + " " + h.paper.abstract).lower()
    must = engine.search(SearchRequest("+parsing +grammar", mode="keyword", page_size=100))
    for h in must.hits:
        text = (h.paper.title + " " + h.paper.abstract).lower()
        assert "pars" in text and "grammar" in text
    for mode in ("semantic", "hybrid"):
        r = engine.search(SearchRequest("language model -speech", mode=mode, page_size=100))  # type: ignore[arg-type]
        for h in r.hits:
            assert "speech" not in (h.paper.title + " " + h.paper.abstract).lower()


def test_semantic_matches_exact_cosine_under_selective_filter(engine: SearchEngine) -> None:
    """Filtered semantic search equals brute-force cosine over the allowed papers."""
    data = engine.data
    query = "grammar formalisms for natural language parsing"
    filters = Filters(categories=("cmp-lg",))
    result = engine.search(SearchRequest(query, mode="semantic", filters=filters, page_size=10))
    allowed, _, _ = data.lexical.search(keyword_filter(data.lexical, filters), 10_000)  # type: ignore[arg-type]
    qv = data.embedder.embed_query(query)
    exact = sorted(
        ((float(np.dot(qv, data.vectors.vector(d))), d) for d in allowed),
        reverse=True,  # type: ignore[arg-type]
    )[:10]
    papers = data.store.get([d for _, d in exact])
    assert [h.paper.arxiv_id for h in result.hits] == [papers[d].arxiv_id for _, d in exact]
    for hit, (score, _) in zip(result.hits, exact, strict=True):
        assert hit.score == pytest.approx(score, abs=1e-4)


def test_hybrid_reports_each_retrievers_rank(engine: SearchEngine) -> None:
    result = engine.search(SearchRequest("dependency parsing", mode="hybrid"))
    assert result.hits
    assert all(set(h.ranks) <= {"keyword", "semantic"} and h.ranks for h in result.hits)
    assert any("keyword" in h.ranks and "semantic" in h.ranks for h in result.hits)


def test_similar_papers(engine: SearchEngine) -> None:
    similar = engine.similar("2401.10241", limit=5)
    assert len(similar) == 5
    assert "2401.10241" not in {h.paper.arxiv_id for h in similar}
    scores = [h.score for h in similar]
    assert scores == sorted(scores, reverse=True)


def test_stats(engine: SearchEngine) -> None:
    stats = engine.stats()
    assert stats.papers == engine.data.store.count() > 300
    assert stats.embedded == stats.papers and stats.coverage == 1.0
    assert stats.dimension == 384
    assert sum(1 for c in stats.categories if c.value == "cmp-lg") == 1
