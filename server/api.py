"""The JSON API under /api/v1/, /openapi.json and /healthz."""

from __future__ import annotations

import math
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from papersift.core.paper import Paper
from papersift.core.urls import arxiv_abs, arxiv_pdf, category_path, paper_path, researcher_url
from papersift.engine import serialize
from papersift.engine.results import FacetCount, Hit, ResearcherRef, SearchResult, Stats
from papersift.server.context import ctx
from papersift.server.openapi import openapi_document
from papersift.server.params import ParamError, int_param, parse_search, search_url
from papersift.server.ratelimit import document_limits
from papersift.server.taxonomy import category_name
from papersift.server.templating import json_response
from papersift.server.urls import parse_paper_path, site_root

MAX_SIMILAR = 50


def _number(value: float) -> float | None:
    return round(value, 6) if math.isfinite(value) else None


def paper_json(p: Paper, root: str) -> dict[str, Any]:
    """The CLI's paper form plus author ids and links for the web."""
    return {
        **serialize.paper_json(p),
        "authors": [{"name": a.name, "ids": dict(a.ids)} for a in p.authors],
        "primary_category": p.primary_category,
        "url": root + paper_path(p),
        "abs_url": arxiv_abs(p.arxiv_id),
        "pdf_url": arxiv_pdf(p.arxiv_id),
    }


def hit_json(h: Hit, root: str) -> dict[str, Any]:
    return {
        "paper": paper_json(h.paper, root),
        "score": _number(h.score),
        "title_html": h.title_html,
        "snippet_html": h.abstract_html,
        "ranks": dict(h.ranks),
    }


def researcher_ref_json(r: ResearcherRef, root: str) -> dict[str, Any]:
    url = root + researcher_url(r.rid, r.name)
    return {"id": r.rid, "name": r.name, "papers": r.papers, "url": url}


def _facets(values: tuple[FacetCount, ...]) -> list[dict[str, Any]]:
    return [{"value": f.value, "count": f.count} for f in values]


def search_json(result: SearchResult, root: str, max_window: int) -> dict[str, Any]:
    req = result.request
    f = req.filters
    has_next = result.page < result.pages and (result.page + 1) * result.page_size <= max_window
    return {
        "request": {
            "q": req.query,
            "mode": req.mode,
            "sort": req.sort,
            "page": req.page,
            "page_size": result.page_size,
            "category": list(f.categories),
            "researcher": list(f.researchers),
            "from": f.date_from.isoformat() if f.date_from else None,
            "to": f.date_to.isoformat() if f.date_to else None,
        },
        "mode": result.mode,
        "total": result.total,
        "page": result.page,
        "page_size": result.page_size,
        "pages": result.pages,
        "took_ms": _number(result.took_ms),
        "warnings": list(result.warnings),
        "direct": paper_json(result.direct, root) if result.direct else None,
        "missing_id": result.missing_id,
        "researchers": [researcher_ref_json(r, root) for r in result.researchers],
        "facets": {name: _facets(values) for name, values in result.facets.items()},
        "hits": [hit_json(h, root) for h in result.hits],
        "next": root + search_url(req, "/api/v1/search", page=req.page + 1) if has_next else None,
    }


def stats_json(s: Stats) -> dict[str, Any]:
    return {
        "papers": s.papers,
        "embedded": s.embedded,
        "coverage": _number(s.coverage),
        "researchers_pending": s.people_pending,
        "embedding": s.embedding.json() if s.embedding is not None else None,
        "model_id": s.model_id,
        "dimension": s.dimension,
        "newest": s.newest.isoformat() if s.newest else None,
        "oldest": s.oldest.isoformat() if s.oldest else None,
        "categories": _facets(s.categories),
    }


async def search(request: Request) -> Response:
    c = ctx(request)
    req = parse_search(
        request.query_params,
        c.config.search,
        strict=True,
        known_categories=await c.known_categories(),
    )
    result = await c.call(c.engine.search, req)
    body = search_json(result, site_root(request), c.config.search.max_window)
    return json_response(request, body)


async def paper(request: Request) -> Response:
    rest: str = request.path_params["rest"]
    want_similar = rest.endswith("/similar")
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
        return json_response(request, {"paper": paper_json(found, root)})
    limit = int_param(request.query_params, "limit", 10, MAX_SIMILAR)
    hits = await c.call(c.engine.similar, found.arxiv_id, limit)
    return json_response(
        request, {"paper": paper_json(found, root), "similar": [hit_json(h, root) for h in hits]}
    )


async def categories(request: Request) -> Response:
    stats = await ctx(request).stats()
    root = site_root(request)
    items = [
        {
            "category": fc.value,
            "name": category_name(fc.value),
            "count": fc.count,
            "url": root + category_path(fc.value),
        }
        for fc in stats.categories
    ]
    return json_response(request, {"categories": items})


async def stats(request: Request) -> Response:
    return json_response(request, stats_json(await ctx(request).stats()))


async def openapi(request: Request) -> Response:
    c = ctx(request)
    document = openapi_document(
        site_root(request),
        c.config.search,
        categories=sorted(set((await c.known_categories()).values())),
        admin=bool(c.config.server.admin_token),
    )
    return json_response(request, document_limits(document))


async def healthz(request: Request) -> Response:
    s = await ctx(request).stats()
    return JSONResponse({"status": "ok", "papers": s.papers}, headers={"Cache-Control": "no-store"})


routes = [
    Route("/api/v1/search", search),
    Route("/api/v1/papers/{rest:path}", paper),
    Route("/api/v1/categories", categories),
    Route("/api/v1/stats", stats),
    Route("/openapi.json", openapi),
    Route("/healthz", healthz),
]
