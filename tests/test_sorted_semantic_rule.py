"""Hybrid search sorted by date or citations lists only close matches by meaning.

``[search] semantic_zscore_sorted``: in relevance order a loose match by meaning sits below
the better matches; sorted by date it would sit beside them, so there a paper that matches
by meaning alone needs the higher z-score. Real index and model (the session's ~320 demo
papers); the expected sets come from keyword mode's matches and exact cosines of the stored
vectors, not from the engine's own rule. The two-word query's near-words rule of sorted
lists (``engine.near_words``) is off here (``match_all_sorted_from = 0``), so these lists
show the semantic rule alone; tests/test_near_words.py checks the two together.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from lxml import etree

from papersift.core.config import Config
from papersift.engine.results import SearchRequest, SearchResult
from papersift.engine.search import SearchEngine
from tests.search_checks import engine_with, exact_cosines, zscore_cut

pytest_plugins = ["tests.web_fixtures"]

QUERY = "language models"  # broad: most papers are somewhat like it (test_match_set)
ARXIV_ID = re.compile(r"/papers/([a-z-]+(?:\.[A-Z]{2})?/\d{7}|\d{4}\.\d{4,5})")
LEFT_OUT = re.compile(r"([\d,]+) more papers match by meaning alone")


def every_id(engine: SearchEngine, request: SearchRequest) -> tuple[SearchResult, list[int]]:
    """The first page and the docids of every hit over all pages."""
    first = engine.search(request)
    hits = list(first.hits)
    for page in range(2, first.pages + 1):
        hits += engine.search(dataclasses.replace(request, page=page)).hits
    docids = [engine.data.store.docid_of(h.paper.arxiv_id) for h in hits]
    return first, [d for d in docids if d is not None]


def both_orders(engine: SearchEngine, query: str) -> tuple[list[int], SearchResult, list[int]]:
    """Hybrid's docids in relevance order, and its answer and docids sorted newest first."""
    _, relevance = every_id(engine, SearchRequest(query, mode="hybrid", page_size=100))
    dated, by_date = every_id(engine, SearchRequest(query, mode="hybrid", sort="newest"))
    return relevance, dated, by_date


def left_out(result: SearchResult) -> int:
    """The count the answer's note gives (0 without the note)."""
    found = [LEFT_OUT.search(w) for w in result.warnings]
    counts = [int(m.group(1).replace(",", "")) for m in found if m]
    assert len(counts) <= 1
    return counts[0] if counts else 0


def expected_sorted_set(
    engine: SearchEngine, query: str, relevance: list[int], zscore: float
) -> tuple[set[int], int]:
    """Keyword mode's matches, and the papers of the relevance-ordered hybrid set whose
    exact cosine reaches ``zscore`` over the query's similarity to every paper; with how
    many papers lie within float noise of that cut."""
    _, keyword = every_id(engine, SearchRequest(query, mode="keyword", page_size=100))
    exact = exact_cosines(engine.data, engine.data.embedder.embed_query(query))
    cut = zscore_cut(list(exact.values()), zscore)
    close = {d for d in relevance if exact.get(d, -1.0) >= cut}
    near = sum(abs(c - cut) < 1e-5 for c in exact.values())
    return set(keyword) | close, near


@pytest.fixture(scope="module")
def alone(built_config: Config) -> Iterator[SearchEngine]:
    """The session's index, the word rules of sorted lists off (see above)."""
    with engine_with(built_config, match_all_sorted_from=0) as eng:
        yield eng


@pytest.mark.parametrize("sort", ["newest", "oldest"])
def test_date_sorted_hybrid_keeps_keyword_matches_and_close_ones_by_meaning(
    alone: SearchEngine, built_config: Config, sort: str
) -> None:
    engine = alone
    cfg = built_config.search
    assert cfg.semantic_zscore_sorted > cfg.semantic_zscore > 0
    _, relevance = every_id(engine, SearchRequest(QUERY, mode="hybrid", page_size=100))
    dated, by_date = every_id(engine, SearchRequest(QUERY, mode="hybrid", sort=sort))
    expected, near = expected_sorted_set(engine, QUERY, relevance, cfg.semantic_zscore_sorted)
    assert len(by_date) == len(set(by_date)) == dated.total
    assert len(set(by_date) ^ expected) <= near
    assert set(by_date) < set(relevance)  # the rule leaves loose matches out ...
    assert left_out(dated) == len(relevance) - dated.total > 0  # ... and says how many
    assert sum(w.startswith("sorted by") for w in dated.warnings) == 1  # in one note
    assert sum(f.count for f in dated.facets["years"]) == dated.total
    papers = engine.data.store.get(by_date)
    published = [papers[d].published for d in by_date]
    assert published == sorted(published, reverse=sort == "newest")


def test_relevance_order_and_semantic_mode_keep_the_looser_rule(alone: SearchEngine) -> None:
    engine = alone
    relevance = engine.search(SearchRequest(QUERY, mode="hybrid"))
    assert left_out(relevance) == 0
    _, semantic = every_id(engine, SearchRequest(QUERY, mode="semantic", page_size=100))
    by_date, semantic_dated = every_id(
        engine, SearchRequest(QUERY, mode="semantic", sort="newest", page_size=100)
    )
    assert set(semantic_dated) == set(semantic) and left_out(by_date) == 0


@pytest.fixture(scope="module")
def configured(built_config: Config) -> Iterator[dict[str, SearchEngine]]:
    """Engines on the same directory: ``off`` with the sorted rule at the relevance rule's
    z-score (so it changes nothing), ``few`` with 10 candidates per retriever (more keyword
    matches than hybrid fetches: the left-out count asks Tantivy about the rest), ``zero``
    with no z-score rule in relevance order."""
    variants: dict[str, dict[str, Any]] = {
        "off": {"semantic_zscore_sorted": built_config.search.semantic_zscore},
        "few": {"candidates": 10},
        "zero": {"semantic_zscore": 0.0},
    }
    for changes in variants.values():
        changes["match_all_sorted_from"] = 0  # the semantic rule alone (see above)
    with ExitStack() as stack:
        yield {
            name: stack.enter_context(engine_with(built_config, **changes))
            for name, changes in variants.items()
        }


def test_the_setting_at_the_relevance_rules_zscore_changes_nothing(
    configured: dict[str, SearchEngine],
) -> None:
    relevance, dated, by_date = both_orders(configured["off"], QUERY)
    assert set(by_date) == set(relevance) and left_out(dated) == 0


def test_left_out_count_when_not_every_keyword_match_is_fetched(
    configured: dict[str, SearchEngine], built_config: Config
) -> None:
    engine = configured["few"]
    query = "language"
    keyword = engine.search(SearchRequest(query, mode="keyword"))
    assert keyword.total > 20  # more than hybrid fetches (twice the candidates)
    relevance, dated, by_date = both_orders(engine, query)
    expected, near = expected_sorted_set(
        engine, query, relevance, built_config.search.semantic_zscore_sorted
    )
    assert len(set(by_date) ^ expected) <= near
    assert left_out(dated) == len(relevance) - dated.total


def test_left_out_count_when_relevance_order_has_no_zscore_rule(
    configured: dict[str, SearchEngine],
) -> None:
    relevance, dated, by_date = both_orders(configured["zero"], QUERY)
    assert set(by_date) < set(relevance)
    assert left_out(dated) == len(relevance) - dated.total


def test_search_feed_follows_the_date_sorted_set(engine: SearchEngine, http: httpx.Client) -> None:
    _, by_date = every_id(engine, SearchRequest(QUERY, mode="hybrid", sort="newest"))
    dated_ids = {p.arxiv_id for p in engine.data.store.get(by_date).values()}
    feed = http.get("/rss/search.xml", params={"q": QUERY})
    assert feed.status_code == 200
    links = [i.findtext("link") or "" for i in etree.fromstring(feed.content).iter("item")]
    assert links
    shown = {m.group(1) for m in map(ARXIV_ID.search, links) if m}
    assert len(shown) == len(links) and shown <= dated_ids
