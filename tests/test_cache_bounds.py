"""The caches' bounds: by size in bytes (pages) or docids (filter sets), least recently used
out first, and a read counting as a use."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pytest

from papersift.engine import lexical
from papersift.engine.datadir import DataDir
from papersift.engine.lexical_filters import keyword_filter
from papersift.engine.results import Filters
from papersift.indexer.build import import_files
from papersift.server.feed_routes import _FirstSeen
from papersift.server.page_cache import PageCache, _Page
from tests.corpus import make_config, sample_records, write_jsonl


def _page(n: int, tag: str) -> _Page:
    return _Page(b"x" * n, (), tag)


def test_pages_are_kept_within_their_bytes() -> None:
    cache = PageCache(max_bytes=1600)
    cache.put("a", _page(100, "a"))
    cache.put("b", _page(100, "b"))
    cache.put("huge", _page(101, "huge"))  # over a sixteenth of the budget: never kept
    assert cache.get("huge") is None and cache.size == 200
    for key in "cdefghijklmnopq":  # 17 pages of 100 bytes: one must go
        cache.get("a")  # read: the most recently used, so "b" goes first
        cache.put(key, _page(100, key))
    assert cache.size == 1600
    assert cache.get("a") is not None and cache.get("b") is None
    cache.put("a", _page(50, "a2"))  # replacing counts the new size only
    assert cache.size == 1550 and cache.get("a") == _page(50, "a2")
    assert (cache.hits, cache.misses) == (17, 2)


def test_first_seen_keeps_the_first_time_of_the_recent_bodies() -> None:
    seen = _FirstSeen(size=2)
    first = seen('"a"')
    seen('"b"')
    assert seen('"a"') == first  # kept, and now the most recently served
    seen('"c"')  # "b" goes
    assert seen('"a"') == first
    assert set(seen._seen) == {'"a"', '"c"'}


def test_filter_sets_are_kept_within_their_docids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lexical, "ALLOWED_CACHE_IDS", 30)
    records = sample_records()[:60]
    data = DataDir(make_config(tmp_path))
    import_files(data, [write_jsonl(tmp_path / "a.jsonl", records)])
    lex = data.lexical
    years = sorted({int(r["versions"][0]["created"].split()[3]) for r in records})
    assert len(years) >= 3
    for year in years:
        filt = keyword_filter(lex, Filters(date_from=date(year, 1, 1), date_to=date(year, 12, 31)))
        assert filt is not None
        got = lex.allowed(filt)
        assert got.tolist() == sorted(lex.search(filt, 100)[0])  # the same set, sorted
        assert np.all(got == lex.allowed(filt))
        assert lex._allowed.currsize <= 30
    everything = keyword_filter(lex, Filters(date_from=date(1900, 1, 1)))
    assert everything is not None and len(lex.allowed(everything)) == 60  # over the bound:
    assert lex._allowed.currsize <= 30  # answered, not kept
    data.close()
