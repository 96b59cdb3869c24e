"""Institutions in the JSON API: ``/api/v1/institutions?q=``, ``/api/v1/institutions/{id}``
(our id, or a bare ROR id, which answers 301 to our id) and ``/api/v1/institutions/match?q=``
(a raw affiliation string -> ROR id, with the reasons); the search page's institution filter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from papersift.core.urls import institution_url, researcher_url
from papersift.engine.affiliation_match import MAX_AFFILIATION, as_json, explain
from papersift.engine.institutions import Institution, Institutions
from papersift.engine.results import SearchResult
from papersift.engine.ror import ROR_PREFIX, parse_ror_id
from papersift.server.context import ctx
from papersift.server.institution_pages import _registry
from papersift.server.params import ParamError, clean_text, page_link, with_filters
from papersift.server.people_api import _int
from papersift.server.templating import json_response
from papersift.server.urls import site_root
from papersift.server.views import FACET_LIMIT, Link

MAX_LIMIT = 100
MEMBERS = 50


def institution_json(i: Institution, root: str) -> dict[str, Any]:
    return {
        "id": i.iid,
        "ror": ROR_PREFIX + i.ror_id,
        "name": i.name,
        "country": i.country,
        "city": i.city,
        "types": list(i.types),
        "url": root + institution_url(i.iid, i.name),
        "papers_url": f"{root}/api/v1/search?institution={i.ror_id}",
    }


async def institutions(request: Request) -> Response:
    for name in request.query_params:
        if name not in ("q", "page", "limit"):
            raise ParamError(name, f"Unknown parameter {name[:40]!r}; known: q, page, limit.")
    reg = _registry(request)
    q = clean_text(request.query_params.get("q", ""))[:200]
    limit = _int(request, "limit", 20, MAX_LIMIT)
    page = _int(request, "page", 1, 10_000)
    found, total = await ctx(request).call(reg.search, q, limit, (page - 1) * limit)
    root = site_root(request)
    has_next = page * limit < total
    nxt = (
        root + page_link("/api/v1/institutions", q=q, page=page + 1, limit=limit)
        if has_next
        else None
    )
    return json_response(
        request,
        {
            "q": q,
            "total": total,
            "page": page,
            "institutions": [institution_json(i, root) for i in found],
            "next": nxt,
        },
    )


async def match(request: Request) -> Response:
    for name in request.query_params:
        if name != "q":
            raise ParamError(name, f"Unknown parameter {name[:40]!r}; known: q.")
    reg = _registry(request)
    if "q" not in request.query_params:
        raise ParamError("q", "Give 'q', an affiliation as a paper prints it.")
    raw = request.query_params["q"]
    if len(raw) > MAX_AFFILIATION:
        raise ParamError("q", f"'q' is at most {MAX_AFFILIATION} characters ({len(raw)} given).")
    q = clean_text(raw)  # blank after cleaning: answered, with nothing matched
    found = await ctx(request).call(explain, reg, q)
    root = site_root(request)
    inst = found.institution
    body = {**as_json(found), "institution": institution_json(inst, root) if inst else None}
    return json_response(request, body)


async def institution(request: Request) -> Response:
    raw = unquote(request.path_params["id"]).strip()
    reg = _registry(request)
    c = ctx(request)
    if raw.isdecimal() and len(raw) <= 12:
        found = await c.call(reg.get, int(raw))
    else:
        ror_id = parse_ror_id(raw)
        if ror_id is None:
            raise ParamError("id", f"{raw[:40]!r} is neither an institution id nor a ROR id.")
        found = await c.call(reg.by_ror, ror_id)
        if found is not None:
            return RedirectResponse(f"/api/v1/institutions/{found.iid}", status_code=301)
    if found is None:
        raise HTTPException(404, f"There is no institution {raw[:60]} in this index.")
    papers, people = await c.call(reg.linked, found.ror_id)
    members = await c.call(reg.members, found.ror_id, MEMBERS)
    parents = await c.call(reg.ror_names, found.parents)
    root = site_root(request)
    body = {
        **institution_json(found, root),
        "aliases": list(found.aliases),
        "status": found.status,
        "parents": [institution_json(p, root) for p in parents.values()],
        "papers": papers,
        "researchers": people,
        "members": [
            {"id": rid, "name": name, "papers": n, "url": root + researcher_url(rid, name)}
            for rid, name, n in members
        ],
    }
    return json_response(request, {"institution": body})


def institution_filters(
    registry: Institutions | None,
) -> Callable[[SearchResult], dict[str, Any]]:
    """The template global for the search page: institution chips and facet links."""

    def build(result: SearchResult) -> dict[str, Any]:
        req = result.request
        chosen = req.filters.institutions
        facet = result.facets.get("institutions", ())[:FACET_LIMIT]
        names = registry.ror_names([*chosen, *(f.value for f in facet)]) if registry else {}

        def label(ror_id: str) -> str:
            found = names.get(ror_id)
            return found.name if found is not None else ror_id

        chips = [
            Link(
                f"Institution: {label(r)}",
                with_filters(req, institutions=tuple(x for x in chosen if x != r)),
            )
            for r in chosen
        ]
        facets = []
        for f in facet:
            active = f.value in chosen
            ids = tuple(x for x in chosen if x != f.value) if active else (*chosen, f.value)
            facets.append(
                Link(label(f.value), with_filters(req, institutions=ids), active, f.count)
            )
        return {"chips": chips, "facets": facets}

    return build


def install(app: Starlette) -> None:
    registry = app.state.ctx.engine.institutions
    app.state.templates.globals["institution_filters"] = institution_filters(registry)
    app.router.routes[0:0] = routes


routes = [
    Route("/api/v1/institutions", institutions),
    Route("/api/v1/institutions/match", match),  # before {id}, which would take "match"
    Route("/api/v1/institutions/{id}", institution),
]
