"""A search request as the query string that asks for it again: the search page's links,
the feeds' and the digests' (``/search?q=...&category=...``), and the sort a query gets by
default. The parser of that query string is the server's (``server.params``); this side
needs no web framework, so the indexer's digests build the same links.
"""

from __future__ import annotations

from functools import lru_cache

from papersift.engine.query import parse_user_query
from papersift.engine.results import SearchRequest, Sort


def default_sort(query: str) -> Sort:
    """Relevance for a query with something to rank by; newest for none or for exclusions
    alone ("-graph"), which the engine lists newest first (``engine.plan``)."""
    if not query:
        return "newest"
    if "-" not in query and "NOT" not in query:  # no exclusion: spare the parse (~40 us)
        return "relevance"
    return "newest" if _only_exclusions(query) else "relevance"


@lru_cache(maxsize=256)
def _only_exclusions(query: str) -> bool:
    """Once per query, not per link: a search page asks ``default_sort`` ~40 times."""
    return parse_user_query(query).only_negative


def query_items(req: SearchRequest) -> list[tuple[str, str]]:
    """The query-string pairs that ask for ``req`` again (defaults left out)."""
    items: list[tuple[str, str]] = []
    if req.query:
        items.append(("q", req.query))
    if req.mode:
        items.append(("mode", req.mode))
    items += [("category", c) for c in req.filters.categories]
    items += [("researcher", r) for r in req.filters.researchers]
    items += [("researcher_id", str(r)) for r in req.filters.researcher_ids]
    items += [("institution", i) for i in req.filters.institutions]
    if req.filters.date_from:
        items.append(("from", req.filters.date_from.isoformat()))
    if req.filters.date_to:
        items.append(("to", req.filters.date_to.isoformat()))
    if req.sort != default_sort(req.query):
        items.append(("sort", req.sort))
    if req.page_size:
        items.append(("page_size", str(req.page_size)))
    if req.page > 1:
        items.append(("page", str(req.page)))
    if not req.autocorrect:
        items.append(("autocorrect", "0"))
    return items
