"""The researchers in the JSON API: ``/api/v1/researchers`` and ``/api/v1/researchers/{id}``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from papersift.core.config import SearchConfig
from papersift.core.urls import researcher_url
from papersift.engine.people import People, Profile, Researcher
from papersift.engine.results import SearchRequest
from papersift.server.context import ctx
from papersift.server.params import ParamError, clean_text, int_param, page_link, parse_search
from papersift.server.templating import json_response
from papersift.server.urls import site_root

MAX_LIMIT = 100


def papers_request(
    request: Request, cfg: SearchConfig, known: Mapping[str, str] | None
) -> SearchRequest:
    """The search parameters of a researcher page (its paper list), leniently parsed."""
    return parse_search(request.query_params, cfg, known_categories=known)


def _people(request: Request) -> People:
    return ctx(request).engine.people


def researcher_json(r: Researcher, root: str) -> dict[str, Any]:
    return {
        "id": r.rid,
        "name": r.name,
        "papers": r.papers,
        "collective": r.collective,
        "url": root + researcher_url(r.rid, r.name),
        "papers_url": f"{root}/api/v1/search?researcher_id={r.rid}",
    }


def profile_json(p: Profile, root: str) -> dict[str, Any]:
    r = p.researcher
    return {
        **researcher_json(r, root),
        "ids": dict(r.ids),
        "variants": list(r.variants),
        "positions": {**p.positions, "known": sum(p.positions.values())},
        "years": [{"year": y, "papers": n} for y, n in p.years],
        "categories": [{"category": c, "papers": n} for c, n in p.categories],
        "coauthors": [{**researcher_json(c, root), "shared": n} for c, n in p.coauthors],
        "same_name": [
            {**researcher_json(s.researcher, root), "reason": s.reason} for s in p.same_name
        ],
    }


def _int(request: Request, name: str, default: int, top: int) -> int:
    return int_param(request.query_params, name, default, top)


async def researchers(request: Request) -> Response:
    for name in request.query_params:
        if name not in ("q", "page", "limit"):
            raise ParamError(name, f"Unknown parameter {name[:40]!r}; known: q, page, limit.")
    people = _people(request)
    q = clean_text(request.query_params.get("q", ""))[:200]
    limit = _int(request, "limit", 20, MAX_LIMIT)
    page = _int(request, "page", 1, 10_000)
    found, total = await ctx(request).call(people.search, q, limit, (page - 1) * limit)
    root = site_root(request)
    has_next = page * limit < total
    nxt = (
        root + page_link("/api/v1/researchers", q=q, page=page + 1, limit=limit)
        if has_next
        else None
    )
    return json_response(
        request,
        {
            "q": q,
            "total": total,
            "page": page,
            "researchers": [researcher_json(r, root) for r in found],
            "next": nxt,
        },
    )


async def researcher(request: Request) -> Response:
    raw: str = request.path_params["id"]
    if not raw.isascii() or not raw.isdecimal() or len(raw) > 12:
        raise ParamError("id", f"{raw[:40]!r} is not a researcher id such as 42.")
    people = _people(request)
    c = ctx(request)
    found = await c.call(people.get, int(raw))
    if found is None or found.papers == 0:
        raise HTTPException(404, f"There is no researcher {raw} in this index.")
    if found.rid != int(raw):  # merged into another researcher
        return RedirectResponse(f"/api/v1/researchers/{found.rid}", status_code=301)
    profile = await c.call(people.profile, found)
    return json_response(request, {"researcher": profile_json(profile, site_root(request))})


routes = [
    Route("/api/v1/researchers", researchers),
    Route("/api/v1/researchers/{id}", researcher),
]
