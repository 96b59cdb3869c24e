"""One page of a search's list, where a page past the result window may still be asked for:
after the last page of a list that ends inside the window it is the empty page that says so
(as any page past the last is), and only a list that runs on past the window refuses it.
The web pages, the API and the CLI answer a page number so (``server.views.list_page``),
and papers like a text too (``server.graph_api``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from papersift.core.config_search import SearchConfig
from papersift.core.errors import WindowError
from papersift.engine.results import SearchRequest, SearchResult, past_window, window_pages

if TYPE_CHECKING:
    from papersift.engine.search import SearchEngine


def list_page(engine: SearchEngine, req: SearchRequest, cfg: SearchConfig) -> SearchResult:
    """``req``'s page under ``cfg``'s result window (the server's, which may be narrower than
    the engine's own): past the window, the empty page after the last when the list ends
    inside it, else ``WindowError``. Any other bad request is ``engine.search``'s
    ``QueryError``."""
    size = req.page_size or cfg.page_size
    return window_page(lambda page: engine.search(replace(req, page=page)), req.page, size, cfg)


def window_page(
    answer: Callable[[int], SearchResult], page: int, size: int, cfg: SearchConfig
) -> SearchResult:
    """Page ``page`` of the list ``answer(page)`` gives, as ``list_page`` says: past the
    window only the first page is asked for, to learn where the list ends."""
    if page * size <= cfg.max_window:
        return answer(page)
    first = answer(1)  # a page past the window: how long is the list
    last = min(first.pages, window_pages(cfg.max_window, size))
    if first.total > last * size:  # it runs on past the window
        raise WindowError(past_window(page, size, cfg.max_window))
    return replace(first, request=replace(first.request, page=page), page=page, hits=())
