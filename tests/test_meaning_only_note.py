"""A hybrid list sorted by date says when most of it matches by meaning only: sorted so,
the papers that do not match the query's words are mixed in with those that do (in a corpus
on one field they can be hundreds; bench/RESULTS.md, session 27). Each hit says which it is
(``why.keyword_match``), and the search page marks those by meaning.

By default a date-sorted list keeps only close matches by meaning (``[search]
semantic_zscore_sorted``, tests/test_sorted_semantic_rule.py); the date-sorted checks here
run with that rule at the relevance rule's z-score, so every match by meaning stays."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.engine.plan import LeftOut, sorted_note
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine, open_engine
from papersift.server.app import create_app
from tests.web_helpers import parse_html

pytest_plugins = ["tests.web_fixtures"]

NOTE = "by meaning only"


def _notes(warnings: tuple[str, ...]) -> list[str]:
    return [w for w in warnings if NOTE in w]


@pytest.fixture(scope="module")
def loose_config(built_config: Config) -> Config:
    """The session's directory with every match by meaning kept in date order too."""
    search = built_config.search
    return replace(built_config, search=replace(search, semantic_zscore_sorted=0.0))


@pytest.fixture(scope="module")
def loose(loose_config: Config) -> Iterator[SearchEngine]:
    with open_engine(loose_config) as engine:
        yield engine


def test_date_sorted_hybrid_names_its_shares(loose: SearchEngine) -> None:
    engine = loose
    query = "machine translation evaluation"
    words = engine.search(SearchRequest(query, mode="keyword")).total
    relevance = engine.search(SearchRequest(query, mode="hybrid"))
    newest = engine.search(SearchRequest(query, mode="hybrid", sort="newest"))
    assert 0 < 2 * words < newest.total == relevance.total  # mostly by meaning: the case
    assert not _notes(relevance.warnings)  # relevance order puts them after the words
    assert _notes(newest.warnings) == [
        f"sorted by date, newest first: {newest.total - words:,} of these {newest.total:,} "
        f"papers match by meaning only, mixed in with the {words:,} that match the query's "
        "words (keyword search lists those alone)"
    ]
    oldest = engine.search(SearchRequest(query, mode="hybrid", sort="oldest"))
    assert _notes(oldest.warnings)[0].startswith("sorted by date, oldest first: ")
    for mode in ("keyword", "semantic"):  # one kind of match: nothing to tell apart
        assert not _notes(engine.search(SearchRequest(query, mode=mode, sort="newest")).warnings)


def test_no_note_when_the_words_are_most_of_it(engine: SearchEngine) -> None:
    # A word in most abstracts here: the semantic side adds few papers of its own.
    query = "language"
    words = engine.search(SearchRequest(query, mode="keyword")).total
    newest = engine.search(SearchRequest(query, mode="hybrid", sort="newest"))
    assert 2 * words >= newest.total > 0
    assert not _notes(newest.warnings)


@pytest.mark.parametrize(
    ("total", "by_words", "shown"),
    [(10, 4, True), (10, 5, False), (10, 0, True), (0, 0, False), (10, None, False)],
)
def test_the_rule(total: int, by_words: int | None, shown: bool) -> None:
    assert bool(sorted_note("newest", total, by_words, LeftOut())) is shown
    if by_words == 0 and shown:
        assert (
            "none of these 10 papers matches the query's words"
            in (sorted_note("cited", total, by_words, LeftOut())[0])
        )
        # Relevance order says so too: nothing else tells the reader (review, session 37).
        assert sorted_note("relevance", total, by_words, LeftOut()) == (
            "none of these 10 papers matches the query's words; they match by meaning only",
        )
    else:
        assert not sorted_note("relevance", total, by_words, LeftOut())


def test_relevance_order_says_when_no_paper_matches_the_words(engine: SearchEngine) -> None:
    """A hybrid answer of papers that match by meaning alone says so in relevance order
    too; one with a keyword match does not."""
    query = "document retrieval legislation"  # no paper of the sample holds all three
    assert engine.search(SearchRequest(query, mode="keyword")).total == 0
    result = engine.search(SearchRequest(query, mode="hybrid"))
    assert result.total > 0
    note = f"none of these {result.total:,} papers matches the query's words; they match by "
    assert note + "meaning only" in result.warnings
    assert not any(h.why and h.why.keyword_match for h in result.hits)
    held = engine.search(SearchRequest("document retrieval", mode="hybrid"))
    assert held.total > 0 and not _notes(held.warnings)


def test_one_note_says_both() -> None:
    """What a date-sorted answer's order hides is one note: the share by meaning only,
    then the looser matches left out (``[search] semantic_zscore_sorted``)."""
    assert sorted_note("newest", 43, 11, LeftOut(meaning=277)) == (
        "sorted by date, newest first: 32 of these 43 papers match by meaning only, mixed in "
        "with the 11 that match the query's words (keyword search lists those alone); 277 "
        "more papers match by meaning alone, less closely than these (relevance order lists "
        "them too)",
    )
    assert sorted_note("oldest", 43, 30, LeftOut(meaning=5)) == (
        "sorted by date, oldest first: 5 more papers match by meaning alone, less closely "
        "than these (relevance order lists them too)",
    )
    assert not sorted_note("relevance", 43, 11, LeftOut(meaning=277))


def _keyword_set(engine: SearchEngine, query: str) -> set[str]:
    """Every paper keyword mode matches, over all its pages."""
    ids: set[str] = set()
    page = 1
    while True:
        r = engine.search(SearchRequest(query, mode="keyword", page_size=100, page=page))
        ids |= {h.paper.arxiv_id for h in r.hits}
        if page >= r.pages:
            return ids
        page += 1


def _flags_agree(engine: SearchEngine, query: str, words: set[str]) -> tuple[int, int]:
    """Each hybrid hit's keyword_match against keyword mode's set, over every page in
    relevance and date order; (hits by words, hits by meaning only) seen."""
    seen = [0, 0]
    for sort in ("relevance", "newest"):
        page = 1
        while True:
            r = engine.search(
                SearchRequest(query, mode="hybrid", sort=sort, page_size=50, page=page)
            )
            for h in r.hits:
                assert h.why is not None
                assert h.why.keyword_match is (h.paper.arxiv_id in words), (sort, page)
                seen[h.why.keyword_match is False] += 1
            if page >= r.pages:
                break
            page += 1
    return seen[0], seen[1]


def test_each_hybrid_hit_says_whether_it_holds_the_words(engine: SearchEngine) -> None:
    """keyword_match is exactly membership of keyword mode's match set; keyword mode's own
    hits are all matches and semantic mode does not say."""
    query = "machine translation evaluation"
    by_words, by_meaning = _flags_agree(engine, query, _keyword_set(engine, query))
    assert by_words > 0 and by_meaning > 0
    keyword = engine.search(SearchRequest(query, mode="keyword"))
    assert all(h.why is not None and h.why.keyword_match is True for h in keyword.hits)
    semantic = engine.search(SearchRequest(query, mode="semantic"))
    assert all(h.why is not None and h.why.keyword_match is None for h in semantic.hits)


def test_the_flags_hold_when_keyword_matches_outnumber_the_candidates(
    built_config: Config,
) -> None:
    """With 20 candidates a word in most abstracts has more keyword matches than the
    search fetches (twice the candidates): the page's others are checked with Tantivy."""
    few = replace(built_config, search=replace(built_config.search, candidates=20))
    with open_engine(few) as engine:
        query = "language models"
        words = _keyword_set(engine, query)
        assert len(words) > 40
        by_words, by_meaning = _flags_agree(engine, query, words)
        assert by_words > 40 and by_meaning > 0


def test_the_page_marks_meaning_only_hits(loose: SearchEngine, loose_config: Config) -> None:
    query = "machine translation evaluation"
    r = loose.search(SearchRequest(query, mode="hybrid", sort="newest"))
    flagged = [h.why is not None and h.why.keyword_match is False for h in r.hits]
    with TestClient(create_app(loose, loose_config)) as client:
        doc = parse_html(client.get("/search", params={"q": query, "sort": "newest"}).text)
        marked = [bool(li.cssselect(".hit-meta .by-meaning")) for li in doc.cssselect("li.hit")]
        assert marked == flagged and any(marked) and not all(marked)
        doc = parse_html(client.get("/search", params={"q": query, "mode": "keyword"}).text)
        assert not doc.cssselect(".by-meaning")
