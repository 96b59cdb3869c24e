"""Papers like this text: a pasted abstract or paragraph, embedded as it is, and the papers
nearest to it by cosine similarity under the search filters.

Unlike a search, the text is not read as query syntax (a pasted ``-based`` or ``e.g.:`` is
text) and no similarity floor applies: the ranking is plain cosine over the same vectors
semantic search uses, the nearest first, up to the result window. The model reads the first
``[embedding] max_length`` tokens of the text.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from papersift.core.errors import QueryError
from papersift.engine.hits import make_hits
from papersift.engine.plan import canonical_filters, embedding_state, filter_query
from papersift.engine.query import ParsedQuery
from papersift.engine.results import FacetCount, Filters, SearchRequest, SearchResult, past_window
from papersift.engine.why import Evidence, filter_lines

if TYPE_CHECKING:
    from papersift.engine.search import SearchEngine

_NO_FACETS: dict[str, tuple[FacetCount, ...]] = {"categories": (), "years": ()}


def similar_to_text(
    engine: SearchEngine, text: str, filters: Filters, page: int = 1, page_size: int | None = None
) -> SearchResult:
    """One page of the papers nearest to ``text``; QueryError for a request out of bounds
    (empty or too long a text, a page past the window)."""
    start = time.perf_counter()
    cfg = engine.config.search
    size = page_size or cfg.page_size
    text = " ".join(text.split())
    if not text:
        raise QueryError("the text is empty: paste an abstract or a paragraph")
    if len(text) > cfg.max_text_length:
        raise QueryError(f"the text is longer than {cfg.max_text_length:,} characters")
    if not 1 <= size <= cfg.max_page_size:
        raise QueryError(f"page size must be between 1 and {cfg.max_page_size}")
    if page < 1 or page * size > cfg.max_window:
        raise QueryError(past_window(page, size, cfg.max_window))
    request = SearchRequest(text, "semantic", filters, "relevance", page, page_size)
    data = engine.data
    filters, warnings = canonical_filters(engine, filters)
    filt, unmatched = filter_query(engine, filters)
    warnings = unmatched + warnings
    ranked: list[tuple[int, float]] = []
    if data.vectors.size == 0:
        warnings.append("no paper has a vector yet (the backlog is being embedded)")
    else:
        qvec = data.embedder.embed_query(text)
        allowed = data.lexical.allowed(filt) if filt is not None else None
        if allowed is None or len(allowed):
            ranked = data.vectors.search(qvec, cfg.max_window, allowed)
    progress = data.embedding_progress()
    if progress.pending and ranked:
        state, running = embedding_state(data.root)
        warnings.append(f"{state}: the nearest papers among {progress.line(running)}")
    offset = (page - 1) * size
    ranks = {"semantic": {d: i + 1 for i, (d, _) in enumerate(ranked)}}
    no_query = ParsedQuery(())
    evidence = Evidence(
        semantic_scores=[s for _, s in ranked], filters=filter_lines(filters, no_query)
    )
    hits = make_hits(data, ranked[offset : offset + size], None, {}, ranks, evidence)
    return SearchResult(
        request=request,
        mode="semantic",
        hits=tuple(hits),
        total=len(ranked),
        page=page,
        page_size=size,
        facets=_NO_FACETS,
        warnings=tuple(dict.fromkeys(warnings)),
        took_ms=(time.perf_counter() - start) * 1000,
    )
