"""``engine.query_threads``: a search's second strand runs beside it while it is the only
search, inline once others run, and the answer is the same either way."""

from __future__ import annotations

import threading

import pytest

from papersift.engine.query_threads import INLINE, QueryThreads
from papersift.engine.result_cache import ResultCache
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine


def test_the_pool_while_one_search_runs_inline_when_more_do() -> None:
    threads = QueryThreads()
    try:
        idle = threads.executor()
        assert idle is not INLINE
        with threads.searching():
            assert threads.executor() is idle  # alone: its second strand on an idle core
            with threads.searching():
                assert threads.executor() is INLINE
            assert threads.executor() is idle
        # A search that failed is no longer counted.
        with pytest.raises(RuntimeError), threads.searching():
            raise RuntimeError("a failed search")
        with threads.searching():
            assert threads.executor() is idle
    finally:
        threads.shutdown()


def test_inline_runs_in_the_callers_thread_and_raises_at_the_result() -> None:
    assert INLINE.submit(threading.get_ident).result() == threading.get_ident()

    def fail() -> None:
        raise ValueError("bad")

    future = INLINE.submit(fail)  # no raise here, as with a pool
    assert future.done()
    with pytest.raises(ValueError, match="bad"):
        future.result()


@pytest.mark.parametrize("mode", ["hybrid", "keyword"])
def test_a_search_answers_alike_beside_or_inline(
    engine: SearchEngine, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    requests = [
        SearchRequest("neural machine translation", mode=mode),  # type: ignore[arg-type]
        SearchRequest("graph", mode=mode, sort="newest"),  # type: ignore[arg-type]
        SearchRequest("", mode=mode),  # type: ignore[arg-type]  # browsing
    ]
    monkeypatch.setattr(engine, "cache", ResultCache(0))  # every request searched
    beside = [engine.search(r) for r in requests]
    monkeypatch.setattr(QueryThreads, "executor", lambda self: INLINE)
    inline = [engine.search(r) for r in requests]
    for a, b in zip(beside, inline, strict=True):
        assert [(h.paper.arxiv_id, h.score) for h in a.hits] == [
            (h.paper.arxiv_id, h.score) for h in b.hits
        ]
        assert (a.total, a.facets, a.mode) == (b.total, b.facets, b.mode)
