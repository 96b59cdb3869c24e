"""Invariants every search answer must keep, whatever the query (for the fuzz-style tests)."""

from __future__ import annotations

from papersift.engine.results import SearchResult
from papersift.engine.search import SearchEngine


def assert_consistent(engine: SearchEngine, result: SearchResult) -> None:
    """A page is at most its size, no paper twice, a page with hits lies within the total
    (pages before it full), a first page of a non-empty set is not empty, and every hit
    is a stored paper whose snippet is escaped text."""
    ids = [h.paper.arxiv_id for h in result.hits]
    assert len(ids) == len(set(ids)), ids
    assert len(ids) <= result.page_size
    if ids:  # a page past the end is empty; one with hits lies within the total
        assert result.total >= (result.page - 1) * result.page_size + len(ids)
    if result.page == 1 and result.total > 0:
        assert ids, "a non-empty match set with an empty first page"
    for hit in result.hits:
        stored = engine.paper(hit.paper.arxiv_id)
        assert stored is not None and stored.title == hit.paper.title
        for html in (hit.title_html, hit.abstract_html):
            assert "<script" not in html.lower()
