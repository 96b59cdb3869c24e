"""Feed and discovery routes: RSS/Atom, sitemaps, OpenSearch and the /feeds page.

The engine is asked here (the same search the pages run); ``feeds/`` only writes the XML.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from urllib.parse import urlencode

from cachetools import LRUCache
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from papersift.core.taxonomy import category_name
from papersift.core.urls import category_path, institution_url, paper_path, researcher_url
from papersift.engine.query_string import default_sort, query_items
from papersift.engine.results import Filters, SearchRequest
from papersift.feeds.opensearch import CONTENT_TYPE as OPENSEARCH_TYPE
from papersift.feeds.opensearch import description as opensearch_description
from papersift.feeds.rss import CONTENT_TYPES, FORMATS, FeedFormat, FeedInfo, render_feed
from papersift.server.context import ctx
from papersift.server.params import parse_search
from papersift.server.sitemap_routes import routes as sitemap_routes
from papersift.server.templating import etag_for, not_modified, page_meta, render
from papersift.server.urls import shared_cache, site_root

Handler = Callable[[Request, FeedFormat], Awaitable[Response]]
FEED_PARAMS = ("q", "mode", "category", "researcher", "from", "to")
_ID = re.compile(r"\d{1,12}\Z")


class _FirstSeen:
    """When this process first served each body (by ETag): its Last-Modified.

    Papers carry dates, not times, so a feed's own dates cannot tell two versions of one
    day apart; the moment a body was first served can. Forgetting one (bounded memory, a
    restart) only makes it look newer, so a client refetches; never the wrong way round.
    """

    def __init__(self, size: int = 4096) -> None:
        self._seen: LRUCache[str, datetime] = LRUCache(size)
        self._lock = threading.Lock()

    def __call__(self, etag: str) -> datetime:
        with self._lock:
            when = self._seen.get(etag) or datetime.now(UTC).replace(microsecond=0)
            self._seen[etag] = when  # the least recently served goes when full
            return when


_first_seen = _FirstSeen()


def _unmodified_since(request: Request, modified: datetime) -> bool:
    header = request.headers.get("if-modified-since")
    if not header or "if-none-match" in request.headers:  # an ETag check takes precedence
        return False
    try:
        since = parsedate_to_datetime(header)
    except (TypeError, ValueError):
        return False
    if since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    return modified <= since


def conditional_response(request: Request, body: bytes, media_type: str, max_age: int) -> Response:
    """A cacheable XML response with ETag and Last-Modified; a bodiless 304 when unchanged."""
    etag = etag_for(body)
    modified = _first_seen(etag)
    headers = {
        "ETag": etag,
        "Last-Modified": format_datetime(modified, usegmt=True),
        "Cache-Control": f"{shared_cache(request)}, max-age={max_age}",
        "Vary": "Accept-Encoding",
    }
    if not_modified(request, etag) or _unmodified_since(request, modified):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=media_type, headers=headers)


def feed_path(fmt: FeedFormat, name: str) -> str:
    """``/rss/latest.xml``, ``/atom/cs.CL.xml``."""
    return f"/{fmt}/{name}.xml"


def researcher_feed_path(fmt: FeedFormat, rid: int) -> str:
    """``/rss/researchers/42.xml``."""
    return f"/{fmt}/researchers/{rid}.xml"


def institution_feed_path(fmt: FeedFormat, iid: int) -> str:
    """``/rss/institutions/7.xml``."""
    return f"/{fmt}/institutions/{iid}.xml"


def search_feed_path(req: SearchRequest, fmt: FeedFormat = "rss") -> str:
    """The feed that follows a search: its query and filters, newest first."""
    base = replace(req, page=1, page_size=None, sort=default_sort(req.query))
    qs = urlencode(query_items(base))
    return f"/{fmt}/search.xml" + (f"?{qs}" if qs else "")


def _items(request: Request) -> int:
    config = ctx(request).config
    return min(config.feeds.items, config.search.max_page_size)


async def _respond(
    request: Request, fmt: FeedFormat, req: SearchRequest, info: FeedInfo
) -> Response:
    c = ctx(request)
    req = replace(req, sort="newest", page=1, page_size=_items(request))
    result = await c.call(c.engine.search, req)
    root = site_root(request)
    body = render_feed(info, [h.paper for h in result.hits], fmt, lambda p: root + paper_path(p))
    return conditional_response(request, body, CONTENT_TYPES[fmt], c.config.feeds.max_age)


async def latest(request: Request, fmt: FeedFormat) -> Response:
    root = site_root(request)
    info = FeedInfo(
        title="papersift: latest papers",
        description="The newest papers in this index.",
        page_url=root + "/",
        self_url=root + feed_path(fmt, "latest"),
    )
    return await _respond(request, fmt, SearchRequest(), info)


async def category(request: Request, fmt: FeedFormat) -> Response:
    cat: str = request.path_params["cat"]
    canonical = (await ctx(request).known_categories()).get(cat.lower())
    if canonical is None:
        raise HTTPException(
            404, f"There is no category “{cat[:60]}” in this index; see /feeds for the feeds."
        )
    if canonical != cat:
        return RedirectResponse(feed_path(fmt, canonical), status_code=301)
    root = site_root(request)
    name = category_name(canonical)
    title = f"{canonical}: {name}" if name != canonical else canonical
    info = FeedInfo(
        title=f"papersift: {title}",
        description=f"The newest papers in {title}.",
        page_url=root + category_path(canonical),
        self_url=root + feed_path(fmt, canonical),
    )
    return await _respond(
        request, fmt, SearchRequest(filters=Filters(categories=(canonical,))), info
    )


async def search(request: Request, fmt: FeedFormat) -> Response:
    c = ctx(request)
    req = parse_search(
        request.query_params, c.config.search, known_categories=await c.known_categories(),
        known_institution=c.engine.holds_institution,
    )  # fmt: skip
    root = site_root(request)
    page = "/search?" + urlencode(query_items(replace(req, page=1)))
    what = f"“{req.query}”" if req.query else "a search"
    info = FeedInfo(
        title=f"papersift: {req.query or 'search'}",
        description=f"The newest papers matching {what} and its filters.",
        page_url=root + page,
        self_url=root + search_feed_path(req, fmt),
    )
    # A feed is a standing query: it lists what matches it as typed, never its spelling
    # suggestion's papers, which would change meaning the day a paper holds the word.
    return await _respond(request, fmt, replace(req, autocorrect=False), info)


def _feed_id(request: Request, what: str) -> int:
    raw: str = request.path_params["id"]
    if not _ID.match(raw):
        raise HTTPException(404, f"{what.capitalize()} feed URLs look like /rss/{what}s/42.xml.")
    return int(raw)


async def researcher(request: Request, fmt: FeedFormat) -> Response:
    """A researcher's newest papers; a merged id redirects to the feed of the surviving one."""
    c = ctx(request)
    rid = _feed_id(request, "researcher")
    found = await c.call(c.engine.people.get, rid)
    if found is None or found.papers == 0:
        raise HTTPException(404, f"There is no researcher {rid} in this index.")
    if found.rid != rid:
        return RedirectResponse(researcher_feed_path(fmt, found.rid), status_code=301)
    root = site_root(request)
    info = FeedInfo(
        title=f"papersift: {found.name}",
        description=f"The newest papers by {found.name}.",
        page_url=root + researcher_url(found.rid, found.name),
        self_url=root + researcher_feed_path(fmt, found.rid),
    )
    return await _respond(
        request, fmt, SearchRequest(filters=Filters(researcher_ids=(found.rid,))), info
    )


async def institution(request: Request, fmt: FeedFormat) -> Response:
    """Papers with an author at this institution (by its ROR id, as enrichment links them;
    arXiv records carry no affiliations, so a known institution's feed may well be empty)."""
    c = ctx(request)
    iid = _feed_id(request, "institution")
    found = await c.call(c.engine.institutions.get, iid)
    if found is None:
        raise HTTPException(404, f"There is no institution {iid} in this index.")
    root = site_root(request)
    info = FeedInfo(
        title=f"papersift: {found.name}",
        description=f"The newest papers from {found.name}.",
        page_url=root + institution_url(found.iid, found.name),
        self_url=root + institution_feed_path(fmt, found.iid),
    )
    return await _respond(
        request, fmt, SearchRequest(filters=Filters(institutions=(found.ror_id,))), info
    )


def _endpoint(handler: Handler, fmt: FeedFormat) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        return await handler(request, fmt)

    endpoint.__name__ = f"{handler.__name__}_{fmt}"
    return endpoint


async def feeds_page(request: Request) -> Response:
    stats = await ctx(request).stats()
    archives = sorted({c.value.split(".", 1)[0] for c in stats.categories if "." in c.value})
    context = page_meta(
        request,
        title="Feeds - papersift",
        description="RSS and Atom feeds of the latest papers, of each category and of any search.",
        path="/feeds",
        trail=[("Feeds", "/feeds")],
        feeds=[("Latest papers", feed_path("rss", "latest"))],
    )
    context.update(stats=stats, archives=archives, root=site_root(request), feed_path=feed_path)
    return render(request, "feeds.html", context)


async def opensearch(request: Request) -> Response:
    icon = request.app.state.templates.globals["static"]("favicon.svg")
    body = opensearch_description(site_root(request), site_root(request) + icon)
    return conditional_response(request, body, OPENSEARCH_TYPE, 86400)


routes = [
    *(Route(feed_path(fmt, "latest"), _endpoint(latest, fmt)) for fmt in FORMATS),
    *(Route(feed_path(fmt, "search"), _endpoint(search, fmt)) for fmt in FORMATS),
    *(Route(f"/{fmt}/researchers/{{id}}.xml", _endpoint(researcher, fmt)) for fmt in FORMATS),
    *(Route(f"/{fmt}/institutions/{{id}}.xml", _endpoint(institution, fmt)) for fmt in FORMATS),
    *(Route(f"/{fmt}/{{cat}}.xml", _endpoint(category, fmt)) for fmt in FORMATS),  # last
    Route("/feeds", feeds_page, name="feeds"),
    Route("/opensearch.xml", opensearch),
    *sitemap_routes,
]
