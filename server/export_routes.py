"""``/api/v1/export``: any result list (a search, a researcher's papers, a paper's references
or citations, which are searches) as BibTeX, RIS or CSL-JSON, up to the result window."""

from __future__ import annotations

from dataclasses import replace
from urllib.parse import urlencode

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from papersift.core.paper import Paper
from papersift.engine.query_string import query_items
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine
from papersift.feeds.export import EXPORT_FORMATS, render_export
from papersift.server.context import ctx
from papersift.server.params import (
    SEARCH_PARAMS,
    ParamError,
    check_params,
    int_param,
    parse_search,
)

EXPORT_PARAMS = ("format", "limit")


def export_url(req: SearchRequest, fmt: str) -> str:
    """The export of the list ``req`` asks for (every page of it), in ``fmt``."""
    items = query_items(replace(req, page=1, page_size=None))
    return "/api/v1/export?" + urlencode([("format", fmt), *items])


LABELS = {"bibtex": "BibTeX", "ris": "RIS", "csl-json": "CSL-JSON"}


def export_links(req: SearchRequest) -> list[tuple[str, str]]:
    """(label, URL) of the list's export in every format, for the page's links."""
    return [(LABELS[f], export_url(req, f)) for f in EXPORT_FORMATS]


def collect(engine: SearchEngine, req: SearchRequest, limit: int, page_size: int) -> list[Paper]:
    """The first ``limit`` papers of the list, a page of ``page_size`` at a time."""
    papers: list[Paper] = []
    page = 1
    while len(papers) < limit:
        result = engine.search(replace(req, page=page, page_size=page_size))
        papers.extend(h.paper for h in result.hits)
        if page >= result.pages or not result.hits:
            break
        page += 1
    return papers[:limit]


async def export(request: Request) -> Response:
    c = ctx(request)
    cfg = c.config.search
    params = request.query_params
    fmt = params.get("format", "").strip().lower()  # BibTeX, as the links name it
    if fmt not in EXPORT_FORMATS or len(params.getlist("format")) != 1:
        raise ParamError("format", f"Give one 'format': {', '.join(EXPORT_FORMATS)}.")
    check_params(params, (*EXPORT_PARAMS, *SEARCH_PARAMS), single=("limit",))
    limit = int_param(params, "limit", cfg.max_window, cfg.max_window)
    rest = QueryParams([(k, v) for k, v in params.multi_items() if k not in EXPORT_PARAMS])
    for name in ("page", "page_size"):
        if name in rest:
            raise ParamError(name, "An export is the whole list: give 'limit' instead.")
    req = parse_search(
        rest, cfg, strict=True, known_categories=await c.known_categories(),
        known_institution=c.engine.holds_institution,
    )  # fmt: skip
    papers = await c.call(collect, c.engine, req, limit, cfg.max_page_size)
    text, media, ext = render_export(papers, fmt)
    return Response(
        text,
        media_type=media,
        headers={
            "Content-Disposition": f'attachment; filename="papersift.{ext}"',
            "Cache-Control": "no-store",
        },
    )


routes = [Route("/api/v1/export", export)]
