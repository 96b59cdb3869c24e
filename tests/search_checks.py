"""Invariants every search answer must keep, whatever the query (for the fuzz-style tests),
a recorder of the facet counts asked of Tantivy (for tests of which path counted), and the
exact cosines of a query to every stored vector (for tests of the semantic match rule), and
an engine on the same directory with other search settings (for tests of a setting)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
import tantivy

from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.lexical import LexicalIndex
from papersift.engine.lexical_schema import FACETS
from papersift.engine.results import FacetCount, SearchResult
from papersift.engine.search import SearchEngine, open_engine


def record_facet_counts(
    monkeypatch: pytest.MonkeyPatch, lex: LexicalIndex
) -> list[tuple[str, ...]]:
    """The kinds of each facet count ``lex`` is asked for from now on (a Tantivy pass over
    the matches), in order; the counts themselves are Tantivy's as before."""
    asked: list[tuple[str, ...]] = []
    facets = lex.facets

    def counted(
        query: tantivy.Query, size: int = 30, kinds: Sequence[str] = FACETS
    ) -> dict[str, tuple[FacetCount, ...]]:
        asked.append(tuple(kinds))
        return facets(query, size, kinds)

    monkeypatch.setattr(lex, "facets", counted)
    return asked


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


def exact_cosines(data: DataDir, qvec: np.ndarray) -> dict[int, float]:
    """Docid -> the cosine of ``qvec`` and the paper's stored vector, for every paper in the
    store with one: each vector read on its own, not through the index's search or its
    summary."""
    out = {}
    for docid in sorted(data.store.all_text_hashes()):
        vec = data.vectors.vector(docid)
        if vec is not None:
            out[docid] = float(vec @ qvec)
    return out


def zscore_cut(cosines: Sequence[float], zscore: float) -> float:
    """The similarity ``zscore`` standard deviations above the mean of ``cosines`` (the
    query's similarity to every paper: the semantic rule's background)."""
    values = np.asarray(cosines, np.float64)
    return float(values.mean() + zscore * values.std())


@contextmanager
def engine_with(config: Config, **search: Any) -> Iterator[SearchEngine]:
    """An engine on ``config``'s data directory with these ``[search]`` settings changed."""
    changed = dataclasses.replace(config, search=dataclasses.replace(config.search, **search))
    with open_engine(changed) as engine:
        yield engine
