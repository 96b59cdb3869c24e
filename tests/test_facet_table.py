"""The facet table against Tantivy's own counts on real papers, and following the store."""

from __future__ import annotations

import dataclasses
import random

import pytest

from papersift.core.config import Config
from papersift.engine import search as search_module
from papersift.engine.datadir import DataDir
from papersift.engine.facet_table import FacetTable
from papersift.engine.plan import make_plan
from papersift.engine.result_cache import ResultCache
from papersift.engine.results import SearchRequest, Sort
from papersift.engine.search import SearchEngine, open_engine
from papersift.indexer.build import import_files
from papersift.indexer.snapshot import record_to_paper
from tests.corpus import sample_records, write_jsonl
from tests.search_checks import record_facet_counts
from tests.test_search import all_pages


def _all_docids(engine: SearchEngine) -> list[int]:
    with engine.data.store.reading() as db:
        return [d for (d,) in db.execute("SELECT docid FROM papers ORDER BY docid")]


def test_counts_equal_tantivys_over_random_lists(engine: SearchEngine) -> None:
    table = FacetTable(engine.data.store.path)
    table.build()
    current = table.current(engine.data.store.seq)
    assert current is table
    lex = engine.data.lexical
    docids = _all_docids(engine)
    rng = random.Random(7)
    for size in (1, 5, 40, 150, len(docids)):
        ids = rng.sample(docids, size)
        for top in (3, 30):
            want = lex.facets(lex.docids_for(ids), top, ("categories", "years"))
            assert table.counts(ids, top) == want, (size, top)
    # Unknown and negative docids are not papers: they count nowhere.
    assert table.counts([-1, 10**9]) == {"categories": (), "years": ()}


def test_by_date_is_a_stable_date_order(engine: SearchEngine) -> None:
    table = FacetTable(engine.data.store.path)
    table.build()
    ids = [*random.Random(3).sample(_all_docids(engine), 60), 10**9]
    papers = engine.data.store.get(ids)
    newest = table.by_date(ids, newest=True)
    assert newest[-1] == 10**9  # not a paper: last
    known = [d for d in ids if d in papers]
    assert newest[:-1] == sorted(known, key=lambda d: -papers[d].published.toordinal())
    oldest = table.by_date(ids, newest=False)
    assert oldest[:-1] == sorted(known, key=lambda d: papers[d].published.toordinal())


def test_follows_updates_and_deletions(fresh_config: Config) -> None:
    records = sample_records(every=60)
    data = DataDir(fresh_config)
    try:
        import_files(data, [write_jsonl(data.root / "in.jsonl", records)])
        table = FacetTable(data.store.path)
        assert table.current(data.store.seq) is None  # not built yet
        table.build()
        first, second = (record_to_paper(r) for r in records[:2])
        moved = dataclasses.replace(first, categories=("q-bio.NC",), version=first.version + 1)
        docid_moved, docid_gone = map(data.store.docid_of, (first.arxiv_id, second.arxiv_id))
        assert docid_moved is not None and docid_gone is not None
        data.store.upsert([moved])
        data.store.delete([second.arxiv_id])
        with data.store.reading() as db:
            live = [d for (d,) in db.execute("SELECT docid FROM papers")]
        before = table.counts([docid_moved])  # not yet brought up to date
        assert "q-bio.NC" not in [f.value for f in before["categories"]]
        updated = table.current(data.store.seq)
        assert updated is table
        assert [(f.value, f.count) for f in table.counts([docid_moved])["categories"]] == [
            ("q-bio.NC", 1)
        ]
        assert sum(f.count for f in table.counts(live)["years"]) == len(live)
        assert table.counts([docid_gone]) == {"categories": (), "years": ()}
    finally:
        data.close()


def test_hybrid_facets_and_date_sort_from_the_table(engine: SearchEngine) -> None:
    """Once the table is built, fused lists are counted and sorted from it, with the same
    answer Tantivy gives."""
    engine.facet_table.start()  # what the first fused search does
    assert engine.facet_table.wait(timeout=60)
    assert engine.facet_table.current(engine.data.store.seq) is engine.facet_table
    for sort in ("relevance", "newest", "oldest"):
        request = SearchRequest("neural network", mode="hybrid", sort=sort, page_size=50)
        result = engine.search(request)
        lex = engine.data.lexical
        dates = [h.paper.published for h in result.hits]
        assert dates
        if sort != "relevance":
            assert dates == sorted(dates, reverse=sort == "newest")
        pages = all_pages(engine, dataclasses.replace(request, page_size=100))
        docids = [engine.data.store.docid_of(h.paper.arxiv_id) for p in pages for h in p.hits]
        assert len(docids) == result.total
        known = [d for d in docids if d is not None]
        want = lex.facets(lex.docids_for(known), 30, ("categories", "years"))
        assert {k: result.facets[k] for k in want} == want


def test_date_sort_is_the_same_before_the_table_is_built(
    built_config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fused list sorted by date through Tantivy (before the table is built) keeps
    same-day papers in the list's order, as the table does: the same request must not give
    another page a few seconds after the server starts."""
    engine = open_engine(built_config)
    engine.cache = ResultCache(0)  # every answer worked out
    try:
        requests = [
            SearchRequest(text, mode=mode, sort=sort, page_size=60)
            for text in ("neural network", "language models", "graph")
            for mode in ("hybrid", "semantic")
            for sort in ("newest", "oldest")
        ]
        with monkeypatch.context() as m:
            m.setattr(engine.facet_table, "current", lambda seq: None)
            by_tantivy = [engine.search(r) for r in requests]
        engine.facet_table.start()
        assert engine.facet_table.wait(timeout=60)
        by_table = [engine.search(r) for r in requests]
        ties = 0
        for r, old, new in zip(requests, by_tantivy, by_table, strict=True):
            assert [h.paper.arxiv_id for h in old.hits] == [h.paper.arxiv_id for h in new.hits], r
            dates = [h.paper.published for h in new.hits]
            ties += len(dates) - len(set(dates))
        assert ties > 20  # the corpus has same-day papers for the order to matter
    finally:
        engine.close()


@pytest.mark.parametrize("window", [2000, 5])
def test_keyword_facets_from_the_table_equal_tantivys(
    engine: SearchEngine, window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the table is built, a keyword search whose matches all came with its page is
    counted from the table (``window`` 2000 here), one with more matches than that by
    Tantivy (``window`` 5); either way as Tantivy's aggregation counts the matches."""
    monkeypatch.setattr(search_module, "KEYWORD_WINDOW", window)
    engine.facet_table.start()
    assert engine.facet_table.wait(timeout=60)
    lex = engine.data.lexical
    aggregated = record_facet_counts(monkeypatch, lex)
    sorts: tuple[Sort, ...] = ("relevance", "newest")
    for text in ("learning", "graph", "language models"):
        for sort in sorts:
            # A page size of its own: no answer cached by another test.
            size = 11 if window == 5 else 12
            request = SearchRequest(text, mode="keyword", sort=sort, page_size=size)
            aggregated.clear()
            result = engine.search(request)
            by_tantivy = ("categories", "years") in aggregated
            plan_query = lex.combine(make_plan(engine, request, size).keyword.query, None)
            matches = lex.count(plan_query)
            assert result.total == matches > 5, (text, matches)
            assert by_tantivy == (matches > window), (text, sort, aggregated)
            want = lex.facets(plan_query, 30, ("categories", "years"))
            assert {k: result.facets[k] for k in want} == want, (text, sort)
