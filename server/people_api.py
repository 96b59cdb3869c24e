"""The researchers in the JSON API: ``/api/v1/researchers`` and ``/api/v1/researchers/{id}``."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from papersift.core.config_search import SearchConfig
from papersift.engine.people import People
from papersift.engine.results import SearchRequest
from papersift.server.context import ctx
from papersift.server.paging import api_page
from papersift.server.params import ParamError, check_params, parse_search
from papersift.server.schemas_people import list_body, profile_body
from papersift.server.templating import json_response
from papersift.server.urls import site_root


def papers_request(
    request: Request, cfg: SearchConfig, known: Mapping[str, str] | None,
    known_institution: Callable[[str], bool] | None = None,
) -> SearchRequest:  # fmt: skip
    """The search parameters of a researcher page (its paper list), leniently parsed; a page
    past the result window is left to ``views.list_page``, which knows where the list ends."""
    return parse_search(
        request.query_params, cfg, known_categories=known, known_institution=known_institution,
        window=False,
    )  # fmt: skip


def _people(request: Request) -> People:
    return ctx(request).engine.people


async def researchers(request: Request) -> Response:
    at = api_page(request, "/api/v1/researchers")
    people = _people(request)
    found, total = await ctx(request).call(people.search, at.q, at.size, at.offset)
    root = site_root(request)
    nxt = at.next(total)
    body = list_body(at.q, total, at.page, found, root, root + nxt if nxt else None)
    return json_response(request, body)


async def researcher(request: Request) -> Response:
    check_params(request.query_params)
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
    return json_response(request, profile_body(profile, site_root(request)))


routes = [
    Route("/api/v1/researchers", researchers),
    Route("/api/v1/researchers/{id}", researcher),
]
