"""Rendered pages kept, compressed, for repeated requests while the data is unchanged.

With the result cache on, a repeated search costs the API one lookup and a JSON dump, but
the HTML page re-rendered its template (hit cards, author links, facet URLs, JSON-LD) and
re-compressed the bytes every time: four times the API's CPU per request (bench/RESULTS.md,
issue 23). A page is a function of its URL (scheme and host too: they make its canonical
links), the format asked for (HTML or markdown), the content encoding, the data (both
indexes, researchers, the institution registry) and whether the install offers libraries
(``server.library_offer``: "Save" shows only where someone can sign in), so its final bytes
are kept under exactly those keys and sent again as they are, as long as the result cache
is on. The indexes and researchers have in-memory generation counters; the registry's
version is a store read, so it is taken off the event loop at most once per
``REGISTRY_POLL`` seconds (an ``import-ror`` in another process shows within that time).
Only 200 responses are kept, and ``MAX_BYTES`` bounds the memory. The admin's requests
(``server.admin_auth``) pass by the cache both ways: their pages may show the admin's commands.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import Response

from papersift.core.lru import CountedLRU
from papersift.server.admin_auth import admin_view
from papersift.server.compress import MIN_SIZE, choose_encoding, is_compressible
from papersift.server.context import ctx
from papersift.server.library_offer import offers_library
from papersift.server.markdown import wants_markdown
from papersift.server.negotiate import add_vary
from papersift.server.templating import not_modified

MAX_BYTES = 32 * 1024 * 1024
REGISTRY_POLL = 1.0  # seconds between reads of the institution registry's version
_SKIP = frozenset({b"content-length", b"content-encoding"})
Handler = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True, slots=True)
class _Page:
    body: bytes
    headers: tuple[tuple[bytes, bytes], ...]
    etag: str


class PageCache(CountedLRU[_Page]):
    """A thread-safe LRU of finished response bodies, bounded by their total size."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        super().__init__(max_bytes, _body_size)
        self.max_bytes = max_bytes
        self.registry: tuple[float, int] = (-REGISTRY_POLL, 0)  # (read at, version)

    @property
    def size(self) -> int:
        """The bytes of the bodies kept."""
        return self.currsize

    def put(self, key: Hashable, value: _Page) -> None:
        if len(value.body) <= self.max_bytes // 16:  # one huge page must not push all out
            super().put(key, value)


def _body_size(page: _Page) -> int:
    return len(page.body)


async def data_generation(request: Request, cache: PageCache) -> tuple[object, ...] | None:
    """What the pages' data depends on; None with the result cache off (every request is
    then computed afresh, and so is every page)."""
    c = ctx(request)
    if c.engine.cache.size <= 0:
        return None
    read_at, version = cache.registry
    if time.monotonic() - read_at >= REGISTRY_POLL:
        version = await c.call(c.engine.institutions.version)
        cache.registry = (time.monotonic(), version)
    return (*c.engine.generation(), version, offers_library(request))


def _finish(response: Response, encoding: str | None) -> _Page:
    """The page as it goes on the wire for ``encoding`` (compressed here, once, as
    ``server.compress`` would), with the headers to send with it."""
    body = bytes(response.body)
    headers = MutableHeaders(raw=[(k, v) for k, v in response.raw_headers if k not in _SKIP])
    choice = choose_encoding(encoding or "")
    if choice is not None and len(body) >= MIN_SIZE and is_compressible(headers):
        body = choice[1](body)
        headers["Content-Encoding"] = choice[0]
        add_vary(headers, "Accept-Encoding")
    return _Page(body, tuple(headers.raw), response.headers["etag"])


def _send(page: _Page, status: int = 200) -> Response:
    response = Response(page.body if status == 200 else b"", status_code=status)
    kept = [(k, v) for k, v in page.headers if status == 200 or k != b"content-type"]
    response.raw_headers = [*kept, *(h for h in response.raw_headers if h[0] == b"content-length")]
    return response


def cached_page(handler: Handler) -> Handler:
    """Wrap a GET page handler: answer repeated requests from :class:`PageCache`."""

    @functools.wraps(handler)
    async def wrapper(request: Request) -> Response:
        cache: PageCache | None = getattr(request.app.state, "page_cache", None)
        generation = await data_generation(request, cache) if cache is not None else None
        if cache is None or generation is None or admin_view(request):
            return await handler(request)  # the admin's view of a page is not the public one
        choice = choose_encoding(request.headers.get("accept-encoding", ""))
        encoding = choice[0] if choice is not None else None
        key = (
            handler.__name__, str(request.base_url), request.url.path, request.url.query,
            wants_markdown(request), encoding, generation,
        )  # fmt: skip
        page = cache.get(key)
        if page is None:
            response = await handler(request)
            if response.status_code != 200 or "etag" not in response.headers:
                return response  # errors, redirects, 304s and streams are not kept
            page = _finish(response, encoding)
            if await data_generation(request, cache) == generation:  # not two states mixed
                cache.put(key, page)
        return _send(page, 304 if not_modified(request, page.etag) else 200)

    return wrapper
