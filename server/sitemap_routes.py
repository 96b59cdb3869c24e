"""``/sitemap.xml`` (the index) and ``/sitemaps/<kind>-<n>.xml`` (streamed chunks).

Each kind of page is a :class:`SitemapKind`: the lastmod of each of its chunks, and the
(path, lastmod) rows of one chunk. Papers are chunked by docid range straight from the
store; small kinds are lists chunked in memory (``listed``). A new kind of page, such as
researchers, is one more entry in ``KINDS``.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from papersift.core.urls import category_path, institution_url, researcher_url, slugify
from papersift.feeds.sitemap import (
    CONTENT_TYPE,
    Entry,
    chunk_entries,
    chunk_lastmods,
    sitemap_index,
    urlset,
)
from papersift.server.context import AppContext, ctx
from papersift.server.templating import not_modified
from papersift.server.urls import shared_cache, site_root

STATIC_PAGES = ("/categories", "/feeds", "/developers")
BATCH = 5000  # ids per store read of the researcher and institution chunks


@dataclass(frozen=True)
class SitemapKind:
    """One kind of page. Both functions run in a worker thread and may block."""

    name: str
    chunks: Callable[[AppContext, int], list[date | None]]  # (ctx, size) -> lastmod per chunk
    entries: Callable[[AppContext, int, int], Iterable[Entry]]  # (ctx, size, n): chunk n, 1-based


def listed(name: str, rows: Callable[[AppContext], Sequence[Entry]]) -> SitemapKind:
    """A kind whose every (path, lastmod) fits in memory, chunked in order."""
    return SitemapKind(
        name,
        lambda c, size: chunk_lastmods(rows(c), size),
        lambda c, size, n: chunk_entries(rows(c), size, n),
    )


# kind -> ((store path, store seq, size), lastmod of each chunk)
_NUMBER = re.compile(r"[1-9][0-9]{0,8}\Z")  # a chunk number, bounded before int()
_chunk_cache: dict[str, tuple[tuple[str, int, int], list[date | None]]] = {}
_chunk_lock = threading.Lock()


def _cached_chunks(
    c: AppContext, kind: str, size: int, compute: Callable[[int], Sequence[tuple[int, date | None]]]
) -> list[date | None]:
    """Lastmod of each id-range chunk, dense (an empty range lists no URLs and has no date),
    recomputed only when the store changes: one state per kind is worth keeping."""
    key = (*c.engine.store_version(), size)
    with _chunk_lock:
        hit = _chunk_cache.get(kind)
    if hit is not None and hit[0] == key:
        return hit[1]
    found = dict(compute(size))
    chunks = [found.get(k) for k in range(max(found, default=-1) + 1)]
    with _chunk_lock:
        _chunk_cache[kind] = (key, chunks)
    return chunks


def _paper_chunks(c: AppContext, size: int) -> list[date | None]:
    return _cached_chunks(c, "papers", size, c.engine.sitemap_chunks)


def _paper_entries(c: AppContext, size: int, n: int) -> Iterable[Entry]:
    rows = c.engine.sitemap_rows((n - 1) * size + 1, n * size)
    return ((f"/papers/{i}-{slugify(t)}", u) for i, t, u in rows)


def _pages(c: AppContext) -> list[Entry]:
    """Home, the static pages and every category and archive page, each with its newest."""
    stats = c.engine.stats()
    cats = [f.value for f in stats.categories]
    archives = sorted({cat.split(".", 1)[0] for cat in cats} - set(cats))
    out: list[Entry] = [("/", stats.newest)]
    out += [(path, None) for path in STATIC_PAGES]
    newest = c.engine.newest_published([*archives, *sorted(cats)])
    out += [(category_path(cat), day) for cat, day in newest.items()]
    return out


def _researcher_chunks(c: AppContext, size: int) -> list[date | None]:
    """Researchers by id range; lastmod is the newest update among their papers."""
    return _cached_chunks(c, "researchers", size, c.engine.people.sitemap_chunks)


def _researcher_entries(c: AppContext, size: int, n: int) -> Iterator[Entry]:
    people = c.engine.people
    last = n * size
    for first in range((n - 1) * size + 1, last + 1, BATCH):  # the lock is free between batches
        for rid, name, newest in people.sitemap_rows(first, min(first + BATCH - 1, last)):
            yield researcher_url(rid, name), newest


def _institution_chunks(c: AppContext, size: int) -> list[date | None]:
    """Institutions by id range, without lastmod: nothing dates a registry entry yet."""
    found = set(c.engine.institutions.sitemap_chunks(size))
    return [None] * (max(found, default=-1) + 1)


def _institution_entries(c: AppContext, size: int, n: int) -> Iterator[Entry]:
    reg = c.engine.institutions
    last = n * size
    for first in range((n - 1) * size + 1, last + 1, BATCH):
        for iid, name in reg.sitemap_rows(first, min(first + BATCH - 1, last)):
            yield institution_url(iid, name), None


KINDS: tuple[SitemapKind, ...] = (
    listed("pages", _pages),
    SitemapKind("papers", _paper_chunks, _paper_entries),
    SitemapKind("researchers", _researcher_chunks, _researcher_entries),
    SitemapKind("institutions", _institution_chunks, _institution_entries),
)


def _size(c: AppContext) -> int:
    return c.config.feeds.sitemap_urls


def _etag(c: AppContext, *parts: object) -> str:
    """Sitemaps change with the store: its change sequence stands for the body (with the
    registry's size for the index and institution chunks: importing it bumps no sequence)."""
    reg = c.engine.institutions if parts[0] in ("index", "institutions") else None
    registry = reg.fingerprint() if reg is not None else ""
    key = "\n".join(str(p) for p in (c.engine.store_version()[1], _size(c), registry, *parts))
    return 'W/"sm-' + hashlib.blake2b(key.encode(), digest_size=12).hexdigest() + '"'


def _headers(c: AppContext, etag: str, request: Request) -> dict[str, str]:
    cache = f"{shared_cache(request)}, max-age={c.config.feeds.max_age}"
    return {"ETag": etag, "Cache-Control": cache}


async def index(request: Request) -> Response:
    c = ctx(request)
    root = site_root(request)
    etag = _etag(c, "index", root)
    if not_modified(request, etag):
        return Response(status_code=304, headers=_headers(c, etag, request))
    listed_chunks: list[Entry] = []
    for kind in KINDS:
        lastmods = await c.call(kind.chunks, c, _size(c))
        listed_chunks += [
            (f"/sitemaps/{kind.name}-{n}.xml", mod) for n, mod in enumerate(lastmods, start=1)
        ]
    body = sitemap_index(root, listed_chunks)
    return Response(body, media_type=CONTENT_TYPE, headers=_headers(c, etag, request))


async def chunk(request: Request) -> Response:
    c = ctx(request)
    name, _, number = str(request.path_params["chunk"]).rpartition("-")
    kind = next((k for k in KINDS if k.name == name), None)
    if kind is None or not _NUMBER.match(number):
        raise HTTPException(404, "There is no such sitemap; /sitemap.xml lists them.")
    n, size = int(number), _size(c)
    if n > len(await c.call(kind.chunks, c, size)):
        raise HTTPException(404, f"There is no sitemap {name}-{n}; /sitemap.xml lists them.")
    etag = _etag(c, name, n, site_root(request))
    if not_modified(request, etag):
        return Response(status_code=304, headers=_headers(c, etag, request))
    rows = await c.call(kind.entries, c, size, n)  # small kinds are built right here
    return StreamingResponse(
        urlset(site_root(request), rows, size),
        media_type=CONTENT_TYPE,
        headers=_headers(c, etag, request),
    )


routes = [
    Route("/sitemap.xml", index, name="sitemap"),
    Route("/sitemaps/{chunk}.xml", chunk, name="sitemap_chunk"),
]
