"""Researcher pages and their JSON API: ``/researchers``, ``/researchers/<id>-<slug>``."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from papersift.core.urls import researcher_url
from papersift.engine.people import People, Profile, Researcher
from papersift.engine.results import Filters, SearchRequest, SearchResult
from papersift.server import institution_pages, people_api, views
from papersift.server.context import ctx
from papersift.server.export_routes import export_links
from papersift.server.feed_routes import researcher_feed_path
from papersift.server.markdown import (
    author_links_of,
    list_markdown,
    researcher_markdown,
    wants_markdown,
)
from papersift.server.paging import name_page
from papersift.server.params import search_url, with_filters
from papersift.server.people_views import author_links, researcher_filters
from papersift.server.svg import Bar, Node, bar_chart, network
from papersift.server.templating import markdown_response, page_meta, render
from papersift.server.urls import site_root

INDEX_PAGE = 50
_PATH = re.compile(r"^(?P<id>\d{1,12})(?:-(?P<slug>[A-Za-z0-9-]*))?/?$")
ORCID_URL = "https://orcid.org/"
OPENALEX_URL = "https://openalex.org/"
S2_URL = "https://www.semanticscholar.org/author/"


def people_of(request: Request) -> People:
    return ctx(request).engine.people


def external_links(r: Researcher) -> list[tuple[str, str]]:
    out = []
    for source, value in r.ids:
        if source == "orcid":
            out.append((f"ORCID {value}", ORCID_URL + value))
        elif source == "openalex":
            out.append((f"OpenAlex {value}", OPENALEX_URL + value))
        elif source == "s2":
            out.append((f"Semantic Scholar {value}", S2_URL + value))
    return out


def person_ld(r: Researcher, url: str) -> dict[str, Any]:
    ld: dict[str, Any] = {"@context": "https://schema.org", "@type": "Person", "name": r.name}
    ld["url"] = url
    others = [v for v in r.variants if v != r.name]
    if others:
        ld["alternateName"] = others
    same = [href for _, href in external_links(r)]
    if same:
        ld["sameAs"] = same
    return ld


async def index(request: Request) -> Response:
    people = people_of(request)
    at = name_page(request, "/researchers", size=INDEX_PAGE)
    found, total = await ctx(request).call(people.search, at.q, at.size, at.offset)
    q, nxt = at.q, at.next(total)
    if wants_markdown(request):
        root = site_root(request)
        items = [(r.name, root + researcher_url(r.rid, r.name), f"{r.papers:,} papers")
                 for r in found]  # fmt: skip
        heading = f"Researchers matching “{q}”" if q else "Researchers"
        text = list_markdown(heading, items, total, root + nxt if nxt else None)
        return markdown_response(request, text)

    context = page_meta(
        request,
        title=f"Researchers matching {q} - papersift" if q else "Researchers - papersift",
        description="Researchers in this index with their paper counts; search by name.",
        path="/researchers",
        trail=[("Researchers", "/researchers")],
        robots="noindex,follow" if q or at.page > 1 else "index,follow",
    )
    last = at.last(total)
    context.update(
        q=q,
        researchers=[(r, researcher_url(r.rid, r.name)) for r in found],
        total=total,
        first=at.offset + 1,
        prev=at.link(last) if at.page > last else at.prev(),  # past the end: back to the last
        next=nxt,
        last_page=last,
        first_url=at.link(1),
    )
    return render(request, "researchers.html", context)


async def researcher(request: Request) -> Response:
    rest: str = request.path_params["rest"]
    m = _PATH.match(rest)
    if m is None:
        raise HTTPException(404, "Researcher URLs look like /researchers/42-jane-doe.")
    c = ctx(request)
    people = people_of(request)
    found = await c.call(people.get, int(m.group("id")))
    if found is None or found.papers == 0:
        raise HTTPException(404, f"There is no researcher {m.group('id')} in this index.")
    canonical = researcher_url(found.rid, found.name)
    if request.url.path != canonical:
        query = request.url.query
        return RedirectResponse(canonical + ("?" + query if query else ""), status_code=301)
    req = people_api.papers_request(
        request, c.config.search, await c.known_categories(), c.engine.holds_institution
    )
    mine = replace(req.filters, researcher_ids=(found.rid, *req.filters.researcher_ids))
    result = await c.call(views.list_page, c.engine, replace(req, filters=mine), c.config.search)
    profile = await c.call(people.profile, found)
    most_cited = None
    if await c.citations_known():
        top = SearchRequest(sort="cited", page_size=1, filters=Filters(researcher_ids=(found.rid,)))
        hits = (await c.call(c.engine.search, top)).hits
        most_cited = hits[0] if hits and hits[0].paper.citation_count else None
    root = site_root(request)
    if wants_markdown(request):
        text = researcher_markdown(found, profile, result, root, author_links_of(request))
        return markdown_response(request, text)
    context = page_meta(
        request,
        title=f"{found.name} - papersift",
        description=f"{found.name}: {found.papers} paper{'s' if found.papers != 1 else ''} "
        "in this index, co-authors, fields and publication years.",
        path=canonical,
        trail=[("Researchers", "/researchers"), (found.name, canonical)],
        og_type="profile",
        feeds=[(f"New papers by {found.name}", researcher_feed_path("rss", found.rid))],
        extra_ld=[person_ld(found, root + canonical)],
        robots="noindex,follow" if req.query or req.page > 1 else "index,follow",
    )
    cited = await c.citations_known()
    context.update(_profile_context(profile, result, canonical, cited, c.config.search.max_window))
    context.update(most_cited=most_cited)
    context.update(person=found, result=result, req=req, links=external_links(found))
    context.update(
        exports=export_links(replace(req, filters=mine)), window=c.config.search.max_window
    )
    context.update(feed={f: researcher_feed_path(f, found.rid) for f in ("rss", "atom")})
    return render(request, "researcher.html", context)


def _local(url: str, canonical: str) -> str:
    """A search-page URL made to point at the researcher page (same query string)."""
    return canonical + url.removeprefix("/search") if url.startswith("/search") else url


def _profile_context(
    p: Profile, result: SearchResult, canonical: str, cited: bool, window: int
) -> dict[str, Any]:
    rid = p.researcher.rid
    base = result.request  # without this researcher: links keep the page's own filters
    base = replace(base, filters=replace(base.filters, researcher_ids=()))
    shown = replace(result, request=base)
    pager = views.pagination(shown, window)
    pager["prev"] = _local(str(pager["prev"]), canonical) if pager["prev"] else None
    pager["next"] = _local(str(pager["next"]), canonical) if pager["next"] else None
    items = pager["items"]
    assert isinstance(items, list)
    pager["items"] = [replace(i, url=_local(i.url, canonical)) if i else None for i in items]
    if isinstance(note := pager["truncated"], views.WindowNote):
        pager["truncated"] = note.relinked(lambda url: _local(url, canonical))
    sorts = [replace(s, url=_local(s.url, canonical)) for s in views.sort_links(shown, cited)]
    in_search = with_filters(base, researcher_ids=(rid,))
    years = [
        Bar(str(y), n, search_url(base, filters=replace(base.filters, researcher_ids=(rid,),
            date_from=_year(y), date_to=_year(y, end=True))))
        for y, n in _fill_years(p.years)
    ]  # fmt: skip
    fields = [
        (cat, n, search_url(base, filters=replace(base.filters, researcher_ids=(rid,),
                                                  categories=(cat,))))
        for cat, n in p.categories[:20]
    ]  # fmt: skip
    centre = Node(rid, p.researcher.name, 0)
    others = [Node(r.rid, r.name, n, researcher_url(r.rid, r.name)) for r, n in p.coauthors]
    known = sum(p.positions.values())
    return {
        "profile": p,
        "known_positions": known,
        "pager": pager,
        "sorts": sorts,
        "search_url": in_search,
        "fields": fields,
        "years_svg": bar_chart(years, f"Papers per year by {p.researcher.name}", 320, 150),
        "network_svg": network(centre, others, p.edges, f"Co-authors of {p.researcher.name}"),
        "coauthors": [(r, n, researcher_url(r.rid, r.name)) for r, n in p.coauthors],
        "same_name": [(s, researcher_url(s.researcher.rid, s.researcher.name)) for s in
                      p.same_name],
        "first": (result.page - 1) * result.page_size + 1,
    }  # fmt: skip


def _fill_years(years: tuple[tuple[int, int], ...]) -> list[tuple[int, int]]:
    if not years:
        return []
    have = dict(years)
    return [(y, have.get(y, 0)) for y in range(years[0][0], years[-1][0] + 1)]


def _year(y: int, end: bool = False) -> Any:
    from datetime import date

    return date(y, 12, 31) if end else date(y, 1, 1)


def install(app: Starlette) -> None:
    """Add the researcher and institution routes; make author names link to researchers."""
    people = app.state.ctx.engine.people
    app.state.templates.globals["author_links"] = author_links(people)
    app.state.templates.globals["researcher_filters"] = researcher_filters(people)
    app.state.templates.globals["researcher_url"] = researcher_url
    app.router.routes[0:0] = [*routes, *people_api.routes, *institution_pages.routes]


routes = [
    Route("/researchers", index, name="researchers"),
    Route("/researchers/{rest:path}", researcher, name="researcher"),
]
