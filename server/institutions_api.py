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

from papersift.engine.affiliation_match import MAX_AFFILIATION, explain
from papersift.engine.institutions import Institutions
from papersift.engine.results import SearchResult
from papersift.engine.ror import parse_ror_id
from papersift.server.context import ctx
from papersift.server.institution_pages import _registry
from papersift.server.paging import api_page
from papersift.server.params import ParamError, check_params, clean_text, with_filters
from papersift.server.schemas_institutions import detail_body, list_body, match_body
from papersift.server.templating import json_response
from papersift.server.urls import site_root
from papersift.server.views import FACET_LIMIT, Link

MEMBERS = 50


async def institutions(request: Request) -> Response:
    at = api_page(request, "/api/v1/institutions")
    reg = _registry(request)
    found, total = await ctx(request).call(reg.search, at.q, at.size, at.offset)
    root = site_root(request)
    nxt = at.next(total)
    body = list_body(at.q, total, at.page, found, root, root + nxt if nxt else None)
    return json_response(request, body)


async def match(request: Request) -> Response:
    check_params(request.query_params, ("q",))
    reg = _registry(request)
    if "q" not in request.query_params:
        raise ParamError("q", "Give 'q', an affiliation as a paper prints it.")
    raw = request.query_params["q"]
    if len(raw) > MAX_AFFILIATION:
        raise ParamError("q", f"'q' is at most {MAX_AFFILIATION} characters ({len(raw)} given).")
    q = clean_text(raw)  # blank after cleaning: answered, with nothing matched
    found = await ctx(request).call(explain, reg, q)
    return json_response(request, match_body(found, site_root(request)))


async def institution(request: Request) -> Response:
    check_params(request.query_params)
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
    linked = await c.call(reg.linked, found.ror_id)
    members = await c.call(reg.members, found.ror_id, MEMBERS)
    parents = list((await c.call(reg.ror_names, found.parents)).values())
    body = detail_body(found, site_root(request), parents=parents, linked=linked, members=members)
    return json_response(request, body)


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
    Route("/api/v1/institutions/{id:path}", institution),  # a ROR id may come as its URL
]
