"""Sitemaps (sitemaps.org 0.9): a pure, streaming transform of (path, lastmod) rows into XML.

The HTTP layer decides which pages exist and in which chunk; this module only writes the
index and the ``<urlset>`` chunks, a few thousand URLs per yielded piece of bytes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from datetime import date
from itertools import islice
from urllib.parse import quote
from xml.sax.saxutils import escape

NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"
MAX_URLS = 50_000  # per sitemap file, by the protocol
CONTENT_TYPE = "application/xml; charset=utf-8"
PIECE = 2000  # URLs per yielded piece of a streamed chunk
_HEAD = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{NAMESPACE}">\n'
_INDEX_HEAD = f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{NAMESPACE}">\n'
# Characters a URL path may carry as they are (RFC 3986 pchar plus query delimiters).
_SAFE = "/:@!$&'()*+,;=-._~?%"
_PLAIN = re.compile(r"[A-Za-z0-9/._~-]*\Z")

Entry = tuple[str, date | None]  # (site path such as "/papers/2401.10241-slug", lastmod)


class SitemapOverflow(ValueError):
    """A chunk was given more URLs than a sitemap may hold."""


def loc(root: str, path: str) -> str:
    """The escaped absolute URL of a site path (root has no trailing slash)."""
    if _PLAIN.match(path):  # the common case (slugged paths): nothing to quote or escape
        return escape(root) + path
    return escape(root + quote(path, safe=_SAFE))


def _url(root: str, path: str, lastmod: date | None) -> str:
    if lastmod is None:
        return f"<url><loc>{loc(root, path)}</loc></url>\n"
    return f"<url><loc>{loc(root, path)}</loc><lastmod>{lastmod.isoformat()}</lastmod></url>\n"


def urlset(root: str, entries: Iterable[Entry], limit: int = MAX_URLS) -> Iterator[bytes]:
    """Stream one sitemap chunk; raises SitemapOverflow past ``limit`` (at most 50,000)."""
    limit = min(limit, MAX_URLS)
    rows = iter(entries)
    yield _HEAD.encode()
    count = 0
    while piece := list(islice(rows, PIECE)):
        count += len(piece)
        if count > limit:
            raise SitemapOverflow(f"a sitemap holds at most {limit} URLs")
        yield "".join(_url(root, path, lastmod) for path, lastmod in piece).encode()
    yield b"</urlset>\n"


def sitemap_index(root: str, sitemaps: Iterable[Entry]) -> bytes:
    """The index pointing at each chunk, given as (site path of the chunk, lastmod)."""
    parts = [_INDEX_HEAD]
    for path, lastmod in sitemaps:
        mod = f"<lastmod>{lastmod.isoformat()}</lastmod>" if lastmod else ""
        parts.append(f"<sitemap><loc>{loc(root, path)}</loc>{mod}</sitemap>\n")
    parts.append("</sitemapindex>\n")
    return "".join(parts).encode()


def chunk_lastmods(entries: Sequence[Entry], size: int) -> list[date | None]:
    """For a list held in memory: the newest lastmod of each ``size``-long chunk."""
    out: list[date | None] = []
    for start in range(0, len(entries), size):
        dates = [d for _, d in entries[start : start + size] if d is not None]
        out.append(max(dates) if dates else None)
    return out


def chunk_entries(entries: Sequence[Entry], size: int, n: int) -> Sequence[Entry]:
    """Chunk ``n`` (1-based) of a list held in memory."""
    return entries[(n - 1) * size : n * size]
