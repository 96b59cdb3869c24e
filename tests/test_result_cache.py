"""The result cache (engine.result_cache): a repeated request is answered from it, and any
change to either index retires every entry."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from papersift.engine.datadir import DataDir
from papersift.engine.result_cache import ResultCache
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine
from papersift.indexer.build import embed_backlog, import_files
from tests.corpus import demo_records, make_config, write_jsonl


@pytest.mark.slow
def test_repeats_come_from_the_cache_until_an_index_changes(tmp_path: Path) -> None:
    records = demo_records()[:40]
    data = DataDir(make_config(tmp_path, search={"cache_size": 8}))
    import_files(data, [write_jsonl(tmp_path / "a.jsonl", records[:30])])
    embed_backlog(data)
    engine = SearchEngine(data)
    request = SearchRequest(records[35]["title"], mode="keyword")
    first = engine.search(request)
    again = engine.search(request)
    assert engine.cache.hits == 1 and again.hits == first.hits and again.total == first.total
    other = engine.search(SearchRequest(records[35]["title"], filters=Filters(categories=("cs",))))
    assert engine.cache.hits == 1 and other.request != request  # filters are part of the key
    # New papers: the lexical generation moves, so the same request is searched again and
    # finds the paper whose title it is.
    import_files(data, [write_jsonl(tmp_path / "b.jsonl", records[30:])])
    fresh = engine.search(request)
    assert engine.cache.hits == 1
    assert fresh.hits[0].paper.arxiv_id == records[35]["id"]
    assert records[35]["id"] not in [h.paper.arxiv_id for h in first.hits]
    # New vectors alone (no lexical change) also retire the entries.
    engine.search(SearchRequest("graph", mode="semantic"))
    before = engine.data.vectors_generation
    embed_backlog(data)
    assert engine.data.vectors_generation != before
    engine.search(SearchRequest("graph", mode="semantic"))
    assert engine.cache.hits == 1
    data.close()


def test_size_zero_keeps_nothing_and_the_cache_is_bounded(tmp_path: Path) -> None:
    records = demo_records()[:12]
    data = DataDir(make_config(tmp_path, search={"cache_size": 0}))
    import_files(data, [write_jsonl(tmp_path / "a.jsonl", records)])
    engine = SearchEngine(data)
    for _ in range(3):
        engine.search(SearchRequest(records[0]["title"], mode="keyword"))
    assert engine.cache.hits == 0
    engine.cache = ResultCache(2)
    for r in records[:3]:  # three distinct requests through a cache of two
        engine.search(SearchRequest(r["title"], mode="keyword"))
    engine.search(SearchRequest(records[0]["title"], mode="keyword"))
    assert engine.cache.hits == 0  # the oldest was dropped
    engine.search(SearchRequest(records[2]["title"], mode="keyword"))
    assert engine.cache.hits == 1
    assert np.isfinite(engine.search(SearchRequest(records[2]["title"], mode="keyword")).took_ms)
    data.close()
