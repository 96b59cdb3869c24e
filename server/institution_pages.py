"""Institution pages: ``/institutions`` and ``/institutions/<id>-<slug>``, also reachable by
ROR id (bare or as the ror.org URL) and by name."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from papersift.core.urls import institution_url, researcher_url, with_query
from papersift.engine.institutions import Institution, Institutions
from papersift.engine.ror import ROR_PREFIX, parse_ror_id
from papersift.server.context import ctx
from papersift.server.feed_routes import institution_feed_path
from papersift.server.markdown import institution_markdown, list_markdown, wants_markdown
from papersift.server.paging import name_page
from papersift.server.templating import markdown_response, page_meta, render
from papersift.server.urls import site_root

INDEX_PAGE = 50
_OURS = re.compile(r"^(?P<id>\d{1,12})(?:-(?P<slug>[A-Za-z0-9-]*))?/?$")
_ROR_URL = re.compile(r"^https?:/+ror\.org/", re.IGNORECASE)


def _place(i: Institution) -> str:
    return ", ".join(x for x in (i.city, i.country) if x)


def _registry(request: Request) -> Institutions:
    return ctx(request).engine.institutions


def organization_ld(i: Institution, url: str) -> dict[str, Any]:
    ld: dict[str, Any] = {
        "@context": "https://schema.org",
        "@type": "Organization",
        "name": i.name,
        "url": url,
        "sameAs": [ROR_PREFIX + i.ror_id],
        "identifier": ROR_PREFIX + i.ror_id,
    }
    if i.aliases:
        ld["alternateName"] = list(i.aliases)
    if i.city or i.country:
        ld["address"] = {
            "@type": "PostalAddress",
            "addressLocality": i.city,
            "addressCountry": i.country,
        }
    return ld


async def index(request: Request) -> Response:
    reg = _registry(request)
    at = name_page(request, "/institutions", size=INDEX_PAGE)
    found, total = await ctx(request).call(reg.search, at.q, at.size, at.offset)
    q, nxt = at.q, at.next(total)
    if wants_markdown(request):
        root = site_root(request)
        items = [(i.name, root + institution_url(i.iid, i.name), _place(i)) for i in found]
        heading = f"Institutions matching “{q}”" if q else "Institutions"
        text = list_markdown(heading, items, total, root + nxt if nxt else None)
        return markdown_response(request, text)
    context = page_meta(
        request,
        title=f"Institutions matching {q} - papersift" if q else "Institutions - papersift",
        description="Research institutions from the ROR registry; search by name.",
        path="/institutions",
        trail=[("Institutions", "/institutions")],
        robots="noindex,follow" if q or at.page > 1 else "index,follow",
    )
    last = at.last(total)
    # No match: say whether only because no registry is imported (the empty state's steps).
    empty = total == 0 and (not q or (await ctx(request).call(reg.search, "", 1, 0))[1] == 0)
    context.update(
        q=q,
        registry_empty=empty,
        institutions=[(i, institution_url(i.iid, i.name)) for i in found],
        total=total,
        first=at.offset + 1,
        candidates=False,
        prev=at.link(last) if at.page > last else at.prev(),  # past the end: back to the last
        next=nxt,
        last_page=last,
        first_url=at.link(1),
    )
    return render(request, "institutions.html", context)


async def institution(request: Request) -> Response:
    rest = unquote(request.path_params["rest"]).strip()
    reg = _registry(request)
    c = ctx(request)
    m = _OURS.match(rest)
    found: Institution | None = None
    if m is not None:
        found = await c.call(reg.get, int(m.group("id")))
    else:
        ror_id = parse_ror_id(_ROR_URL.sub("", rest))
        if ror_id is not None:
            found = await c.call(reg.by_ror, ror_id)
        else:
            named = await c.call(reg.by_name, rest)
            if len(named) > 1:
                return _candidates(request, rest, named)
            found = named[0] if named else None
    if found is None:
        raise HTTPException(404, f"There is no institution “{rest[:100]}” in this index.")
    canonical = institution_url(found.iid, found.name)
    if request.url.path != canonical:
        return RedirectResponse(canonical, status_code=301)
    parents = [p for r in found.parents if (p := await c.call(reg.by_ror, r)) is not None]
    root = site_root(request)
    members = [
        (name, researcher_url(rid, name), n)
        for rid, name, n in await c.call(reg.members, found.ror_id, 50)
    ]
    papers_url = with_query("/search", {"institution": found.ror_id})
    if wants_markdown(request):
        text = institution_markdown(
            found, root + canonical, ROR_PREFIX + found.ror_id,
            [(name, root + url, n) for name, url, n in members], root + papers_url,
        )  # fmt: skip
        return markdown_response(request, text)
    context = page_meta(
        request,
        title=f"{found.name} - papersift",
        description=f"{found.name}"
        + (f", {found.city}, {found.country}" if found.country else "")
        + ": researchers and papers in this index.",
        path=canonical,
        trail=[("Institutions", "/institutions"), (found.name, canonical)],
        feeds=[(f"New papers from {found.name}", institution_feed_path("rss", found.iid))],
        extra_ld=[organization_ld(found, root + canonical)],
    )
    context.update(
        feed={f: institution_feed_path(f, found.iid) for f in ("rss", "atom")},
        inst=found,
        ror_url=ROR_PREFIX + found.ror_id,
        parents=[(p, institution_url(p.iid, p.name)) for p in parents],
        linked=await c.call(reg.linked, found.ror_id),
        members=members,
        papers_url=papers_url,
    )
    return render(request, "institution.html", context)


def _candidates(request: Request, name: str, found: list[Institution]) -> Response:
    context = page_meta(
        request,
        title=f"Institutions named {name} - papersift",
        description=f"Several institutions are called {name}.",
        path="/institutions",
        trail=[("Institutions", "/institutions")],
        robots="noindex,follow",
    )
    context.update(
        q=name,
        institutions=[(i, institution_url(i.iid, i.name)) for i in found],
        total=len(found),
        first=1,
        candidates=True,
        registry_empty=False,
        prev=None,
        next=None,
    )
    return render(request, "institutions.html", context)


routes = [
    Route("/institutions", index, name="institutions"),
    Route("/institutions/{rest:path}", institution, name="institution"),
]
