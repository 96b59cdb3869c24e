"""The JSON API under /api/v1/, /openapi.json and /healthz."""

from __future__ import annotations

from collections.abc import Callable

import msgspec
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from papersift.engine.results import SearchResult
from papersift.engine.search import SearchEngine
from papersift.engine.serialize import stats_body
from papersift.server import no_results, views
from papersift.server.bodies import categories_body, hit_body, paper_body, search_body
from papersift.server.context import ctx
from papersift.server.graph_views import paper_graph
from papersift.server.openapi import openapi_document
from papersift.server.params import (
    ParamError,
    check_params,
    int_param,
    parse_search,
    search_url,
)
from papersift.server.people_views import researcher_names
from papersift.server.ratelimit import document_limits
from papersift.server.schemas import (
    FacetNames,
    Health,
    LooserSearch,
    PaperResponse,
    SearchResponse,
    SimilarResponse,
)
from papersift.server.templating import fresh_json, json_response
from papersift.server.urls import parse_paper_path, site_root

MAX_SIMILAR = 50


async def search(request: Request) -> Response:
    c = ctx(request)
    req = parse_search(
        request.query_params,
        c.config.search,
        strict=True,
        known_categories=await c.known_categories(),
        known_institution=c.engine.holds_institution,
        window=False,  # past the window, a list that ends sooner answers its empty page
    )
    result, names = await c.call(named, c.engine, views.list_page, c.engine, req, c.config.search)
    root = site_root(request)
    page = search_page(result, root, c.config.search.max_window, names)
    if not result.total and result.page == 1 and not result.direct:  # what to try instead
        found = await c.call(no_results.looser_found, c.engine, result)
        looser = [LooserSearch(label, root + search_url(r, "/api/v1/search"), n)
                  for label, r, n in found]  # fmt: skip
        page = msgspec.structs.replace(page, looser=looser)
    # The answer says how long the search took, so no two bodies are the same and an ETag
    # (a hash of the body: 70 us of a 51 KB page of 24 hits) could never match.
    return json_response(request, page, etag=False)


def named(
    engine: SearchEngine, search: Callable[..., SearchResult], *args: object
) -> tuple[SearchResult, FacetNames]:
    """``search(*args)`` and its ``facet_names``, in one call on an engine thread (a second
    hop would cost ~50-85 us more; the names' read of 30 researchers took 0.15-0.3 ms of
    CPU on the demo index, on a loaded machine)."""
    result = search(*args)
    return result, facet_names(engine, result)


def facet_names(engine: SearchEngine, result: SearchResult) -> FacetNames:
    """The names of the researchers and institutions the facets count by id: one batched
    read each, the lookups the search page's facets use (``people_views``, the registry)."""
    counted = result.facets
    rids = [int(f.value) for f in counted.get("researchers", ())]
    people = researcher_names(engine.people, rids)
    places = engine.institutions.ror_names(f.value for f in counted.get("institutions", ()))
    return {
        "researchers": {str(rid): name for rid, name in people.items()},
        "institutions": {ror: found.name for ror, found in places.items()},
    }


def search_page(
    result: SearchResult, root: str, max_window: int, names: FacetNames, *, sortable: bool = True
) -> SearchResponse:
    """A search answer with its ``next`` link: the same search, one page on, while that
    page exists and lies within the result window. ``pages`` counts only the pages that
    can be asked for and ``reachable`` the results on them; a page past the last says so
    in ``warnings``, and so does the last page of a list the window cuts short, with how to
    reach the rest (``sortable``: by the other date order too). ``names``: ``facet_names``."""
    req = result.request
    last = views.last_page(result, max_window)
    has_next = result.page < last
    nxt = root + search_url(req, "/api/v1/search", page=req.page + 1) if has_next else None
    body = search_body(result, root, nxt, names)
    note = views.window_note(result, max_window, sortable=sortable)
    reachable = note.shown if note else result.total
    past = views.past_last(result, max_window)
    if note and result.page == last:
        past = note.text()
    warnings = [*body.warnings, past] if past else body.warnings
    return msgspec.structs.replace(body, pages=last, reachable=reachable, warnings=warnings)


# The lists under a paper; this route takes their paths with a trailing slash.
PAPER_LISTS = ("/similar", "/references", "/citations")


async def paper(request: Request) -> Response:
    rest: str = request.path_params["rest"]
    if rest.endswith("/") and rest.rstrip("/").endswith(PAPER_LISTS):
        # As Starlette answers a trailing slash on any other route: 307 to the path without.
        path = request.url.path.rstrip("/")
        return RedirectResponse(str(request.url.replace(path=path)), status_code=307)
    want_similar = rest.endswith("/similar")
    check_params(request.query_params, ("limit",) if want_similar else ())
    if want_similar:
        rest = rest.removesuffix("/similar")
    parsed = parse_paper_path(rest)
    if parsed is None or parsed.slug is not None or parsed.ext:
        raise ParamError(
            "id", f"{rest[:100]!r} is not an arXiv id such as 2401.10241 or cmp-lg/9405001."
        )
    c = ctx(request)
    found = await c.call(c.engine.paper, parsed.arxiv_id)
    if found is None:
        raise HTTPException(404, f"There is no paper {parsed.arxiv_id} in this index.")
    root = site_root(request)
    if not want_similar:
        counts = await c.call(c.engine.paper_graph, found.arxiv_id)
        graph = paper_graph(counts, found.arxiv_id, root) if counts else None
        warnings = []
        if missing := parsed.missing_version(found):  # as the paper page says
            warnings.append(
                f"v{missing} of {found.arxiv_id} is not in this index (yet): this is "
                f"v{found.version}, the newest it has"
            )
        return json_response(request, PaperResponse(paper_body(found, root), graph, warnings))
    limit = int_param(request.query_params, "limit", 10, MAX_SIMILAR)
    hits = await c.call(c.engine.similar, found.arxiv_id, limit)
    similar = [hit_body(h, root) for h in hits]
    return json_response(request, SimilarResponse(paper_body(found, root), similar))


async def categories(request: Request) -> Response:
    check_params(request.query_params)
    stats = await ctx(request).stats()
    return json_response(request, categories_body(stats, site_root(request)))


async def stats(request: Request) -> Response:
    check_params(request.query_params)
    return json_response(request, stats_body(await ctx(request).stats()))


async def openapi(request: Request) -> Response:
    c = ctx(request)
    document = openapi_document(
        site_root(request), c.config.search, admin=bool(c.config.server.admin_token)
    )
    return json_response(request, document_limits(document))


async def healthz(request: Request) -> Response:
    s = await ctx(request).stats()
    return fresh_json(Health("ok", s.papers))


routes = [
    Route("/api/v1/search", search),
    Route("/api/v1/papers/{rest:path}", paper),
    Route("/api/v1/categories", categories),
    Route("/api/v1/stats", stats),
    Route("/openapi.json", openapi),
    Route("/healthz", healthz),
]
