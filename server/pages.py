"""The HTML pages: home, search, paper (with its redirects and BibTeX), categories, developers."""

from __future__ import annotations

from dataclasses import replace

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from papersift.core.errors import PapersiftError
from papersift.core.taxonomy import category_name
from papersift.core.tex import plain_text, shorten
from papersift.core.urls import LATEST_FEED, category_feed, category_path, paper_path, version_links
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine
from papersift.server import meta, no_results, views
from papersift.server.context import ctx
from papersift.server.digest_pages import save_search_path
from papersift.server.export_routes import export_links
from papersift.server.feed_routes import search_feed_path
from papersift.server.graph_views import paper_graph_view
from papersift.server.guide import guide, llms_txt
from papersift.server.lab_view import home_section
from papersift.server.markdown import (
    MARKDOWN,
    author_links_of,
    list_markdown,
    paper_markdown,
    search_markdown,
    wants_markdown,
)
from papersift.server.neighbourhood_svg import neighbourhood_svg
from papersift.server.page_cache import cached_page
from papersift.server.params import parse_search, search_url
from papersift.server.radar_view import for_lab, for_you
from papersift.server.sessions import finish
from papersift.server.templating import cached_response, markdown_response, page_meta, render
from papersift.server.urls import parse_paper_path, site_root

HOME_LATEST = 10
SIMILAR = 8
LATEST = ("Latest papers", LATEST_FEED)


async def _guide(request: Request) -> Response:
    """The llms.txt guidance, for a markdown request to a page that has no markdown form."""
    c = ctx(request)
    stats = await c.stats()
    return markdown_response(request, llms_txt(site_root(request), stats, await c.examples()))


async def home(request: Request) -> Response:
    if wants_markdown(request):
        return await _guide(request)
    c = ctx(request)
    stats = await c.stats()
    latest = await c.call(c.engine.search, SearchRequest(sort="newest", page_size=HOME_LATEST))
    lab = await c.call(home_section, c.engine, c.config)  # None without a [lab] declaration
    mine = await c.call(for_you, request)  # None unless signed in
    lab_picks = await c.call(for_lab, request) if lab else None
    context = page_meta(
        request,
        title="papersift: search research papers",
        description=meta.SITE_DESCRIPTION,
        path="/",
        feeds=[LATEST],
        extra_ld=[lab.jsonld(site_root(request))] if lab else None,
    )
    context.update(stats=stats, latest=latest.hits, top_categories=stats.categories[:24], lab=lab,
                   for_you=mine, lab_picks=lab_picks, guide=guide(await c.examples()))  # fmt: skip
    # A member's home page is theirs: never kept by a shared cache, and it depends on the cookie.
    vary = {"Vary": "Accept, Accept-Encoding, Cookie"}
    page = render(request, "home.html", context, headers=vary)
    return finish(request, page) if mine is not None else page


def _index_empty(engine: SearchEngine) -> bool:
    """Whether the index holds no paper (none imported yet): then nothing matches any search,
    and the page says how to fill it. Asked of the index's searcher, not of the stats
    snapshot, so a cached page agrees with the data generation it was kept under."""
    return engine.data.lexical.num_docs == 0


@cached_page
async def search(request: Request) -> Response:
    c = ctx(request)
    req = parse_search(
        request.query_params,
        c.config.search,
        known_categories=await c.known_categories(),
        known_institution=c.engine.holds_institution,
        window=False,  # a page past the window but after the last page says so, as any past it
    )
    result = await c.call(views.list_page, c.engine, req, c.config.search)
    if wants_markdown(request):
        return markdown_response(
            request,
            search_markdown(
                result, site_root(request), author_links_of(request), c.config.search.max_window
            ),
        )
    if req.query:
        title, description = f"{req.query} - papersift search", f"Papers matching “{req.query}”."
    else:
        title, description = "Browse papers - papersift", "The newest papers, with filters."
    feeds = [(f"Latest in {cat}", category_feed(cat)) for cat in req.filters.categories]
    # Results of the spelling suggestion: the feed follows what the page lists. A search
    # that finds nothing has no feed to offer (the page offers looser searches instead).
    searched = replace(req, query=result.corrected) if result.corrected else req
    follow = (
        search_feed_path(searched)
        if result.total and (req.query or not req.filters.empty)
        else None
    )
    if follow:
        feeds.insert(0, ("This search", follow))
    # Filtered or paged variations of a search are not worth indexing on their own.
    robots = (
        "noindex,follow" if (req.query or not req.filters.empty or req.page > 1) else "index,follow"
    )
    last = views.last_page(result, c.config.search.max_window)
    empty_index = not result.total and await c.call(_index_empty, c.engine)
    # Nothing matched: the looser searches that would find papers (they run searches).
    nothing = not result.total and not empty_index
    offers = await c.call(no_results.suggestions, c.engine, result) if nothing else []
    context = page_meta(
        request,
        title=title,
        description=description,
        path="/search",
        trail=[("Search", "/search")],
        feeds=feeds or [LATEST],
        robots=robots,
    )
    context.update(
        result=result,
        req=req,
        category_facets=views.category_facets(result),
        year_facets=views.year_facets(result),
        facet_window_note=views.facet_window_note(result),
        facet_limit=views.FACET_LIMIT,
        chips=views.filter_chips(result),
        clear_url=views.clear_filters_url(result),
        sorts=views.sort_links(result, cited := await c.citations_known()),
        citations=cited,
        modes=views.mode_links(result),
        pager=views.pagination(result, c.config.search.max_window),
        suggestions=offers,
        spelling_hint=bool(req.query) and no_results.spelling_may_help(result),
        suggestion_url=(
            search_url(req, query=result.suggestion, autocorrect=True)
            if result.suggestion and not result.corrected
            else None
        ),
        as_typed_url=search_url(req, autocorrect=False) if result.corrected else None,
        first=(result.page - 1) * result.page_size + 1,
        last_page=last,
        past_last=bool(result.total) and not result.hits and result.page > last,
        first_url=search_url(req, page=1),
        last_url=search_url(req, page=last),
        empty_index=empty_index,
        follow_feed=follow,
        save_search=save_search_path(searched) if follow else None,
        save_filters=bool(req.mode) or not req.filters.empty,
        exports=export_links(req),
        window=c.config.search.max_window,
    )
    return render(request, "search.html", context)


@cached_page
async def paper(request: Request) -> Response:
    rest: str = request.path_params["rest"]
    parsed = parse_paper_path(rest)
    if parsed is None:
        raise HTTPException(
            404,
            f"“{rest[:100]}” is not an arXiv id. Paper URLs look like "
            "/papers/2401.10241 or /papers/cmp-lg/9405001.",
        )
    c = ctx(request)
    found = await c.call(c.engine.paper, parsed.arxiv_id)
    if found is None:
        raise HTTPException(404, f"There is no paper {parsed.arxiv_id} in this index.")
    canonical = paper_path(found)
    if parsed.ext == ".bib":
        filename = found.arxiv_id.replace("/", "-") + ".bib"
        return cached_response(
            request,
            meta.bibtex(found),
            "application/x-bibtex; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{filename}"'},
        )
    if parsed.ext == ".md":
        return cached_response(
            request, paper_markdown(found, site_root(request), author_links_of(request)), MARKDOWN
        )
    # A version the index does not have (newer than its last harvest, or none at all) gets
    # the page of the latest one with a notice saying so, not a silent redirect.
    missing = parsed.missing_version(found)
    if request.url.path != canonical and missing is None:
        return RedirectResponse(canonical, status_code=301)
    if wants_markdown(request):
        return markdown_response(
            request, paper_markdown(found, site_root(request), author_links_of(request))
        )
    try:
        similar = await c.call(c.engine.similar, found.arxiv_id, SIMILAR)
    except PapersiftError:  # e.g. no vector for this paper yet: the page is still useful
        similar = []
    primary = found.primary_category
    trail = [(primary, category_path(primary))] if primary else []
    trail.append((shorten(plain_text(found.title), 60), canonical))
    root = site_root(request)
    context = page_meta(
        request,
        title=f"{plain_text(found.title)} - papersift",
        description=plain_text(found.abstract),
        path=canonical,
        trail=trail,
        feeds=[(f"Latest in {primary}", category_feed(primary))] if primary else [LATEST],
        og_type="article",
        extra_ld=[meta.article_ld(found, root + canonical)],
        robots="noindex,follow" if missing else "index,follow",
    )
    hood = await c.call(c.engine.neighbourhood, found.arxiv_id)
    context.update(
        graph=await paper_graph_view(c, found),
        hood=hood,
        hood_svg=neighbourhood_svg(hood, paper_path) if hood else "",
        window=c.config.search.max_window,
        missing_version=missing,
        paper=found,
        versions=version_links(found),
        similar=similar,
        bibtex=meta.bibtex(found),
        bib_path=f"/papers/{found.arxiv_id}.bib",
    )
    return render(request, "paper.html", context)


async def papers_index(request: Request) -> Response:
    """``/papers`` and ``/papers/``: there is no list of every paper but the search page."""
    query = request.url.query
    return RedirectResponse("/search" + ("?" + query if query else ""), status_code=302)


async def abs_redirect(request: Request) -> Response:
    """``/abs/2401.10241`` (the arXiv form, handy when swapping hosts) -> the paper page."""
    rest: str = request.path_params["rest"]
    parsed = parse_paper_path(rest)
    c = ctx(request)
    found = await c.call(c.engine.paper, parsed.arxiv_id) if parsed else None
    if found is None or parsed is None:
        raise HTTPException(404, f"There is no paper “{rest[:100]}” in this index.")
    if missing := parsed.missing_version(found):  # the paper page says it is missing
        return RedirectResponse(f"/papers/{found.arxiv_id}v{missing}", status_code=301)
    return RedirectResponse(paper_path(found), status_code=301)


async def categories(request: Request) -> Response:
    stats = await ctx(request).stats()
    if wants_markdown(request):  # the list itself, as the page lists it
        root = site_root(request)
        items = [(f.value, root + category_path(f.value), _category_note(f.value, f.count))
                 for f in stats.categories]  # fmt: skip
        return markdown_response(request, list_markdown("Categories", items, len(items), None))
    context = page_meta(
        request,
        title="Categories - papersift",
        description="Every arXiv category in this index with its paper count.",
        path="/categories",
        trail=[("Categories", "/categories")],
        feeds=[LATEST],
    )
    context.update(stats=stats)
    return render(request, "categories.html", context)


def _category_note(cat: str, count: int) -> str:
    name = category_name(cat)
    papers = f"{count:,} paper{'s' if count != 1 else ''}"
    return f"{name}, {papers}" if name != cat else papers


async def category(request: Request) -> Response:
    cat: str = request.path_params["cat"]
    c = ctx(request)
    canonical = (await c.known_categories()).get(cat.lower())
    if canonical is not None and canonical != cat:
        return RedirectResponse(category_path(canonical), status_code=301)
    if canonical is None:
        raise HTTPException(
            404,
            f"There are no papers in category “{cat[:60]}” here. "
            "See /categories for the ones there are.",
        )
    req = parse_search(request.query_params, c.config.search, window=False)
    req = SearchRequest(
        sort=req.sort if req.sort != "relevance" else "newest",
        filters=Filters(categories=(cat,)),
        page=req.page,
        page_size=req.page_size,
    )
    result = await c.call(views.list_page, c.engine, req, c.config.search)
    name = category_name(cat)
    title = f"{cat}: {name}" if name != cat else cat
    if wants_markdown(request):
        root, window = site_root(request), c.config.search.max_window
        text = search_markdown(result, root, author_links_of(request), window, heading=title)
        return markdown_response(request, text)
    context = page_meta(
        request,
        title=f"{title} - papersift",
        path=category_path(cat),
        description=f"The newest papers in {title}.",
        trail=[("Categories", "/categories"), (cat, category_path(cat))],
        feeds=[(f"Latest in {cat}", category_feed(cat)), LATEST],
    )
    context.update(
        cat=cat,
        name=name,
        result=result,
        req=req,
        pager=views.pagination(result, c.config.search.max_window),
        first=(result.page - 1) * result.page_size + 1,
    )
    return render(request, "category.html", context)


async def developers(request: Request) -> Response:
    if wants_markdown(request):
        return await _guide(request)
    context = page_meta(
        request,
        title="Developers: JSON API - papersift",
        description="The papersift JSON API, OpenAPI document, markdown views "
        "and llms.txt, with examples.",
        path="/developers",
        trail=[("Developers", "/developers")],
    )
    c = ctx(request)
    search = c.config.search
    context.update(
        root=site_root(request),
        window=search.max_window,
        max_page_size=search.max_page_size,
        guide=guide(await c.examples()),
    )
    return render(request, "developers.html", context)


async def llms(request: Request) -> Response:
    c = ctx(request)
    stats = await c.stats()
    return cached_response(
        request,
        llms_txt(site_root(request), stats, await c.examples()),
        "text/plain; charset=utf-8",
    )


# Crawlers keep out of the API, an endless space of search URLs; /llms.txt says the same.
ROBOTS = """User-agent: *
# /api/ is for programs acting for a person (see /llms.txt), not for crawling:
# every paper is in the sitemap, and the feeds say what is new.
Disallow: /api/
Allow: /

Sitemap: {root}/sitemap.xml
"""


async def robots(request: Request) -> Response:
    return PlainTextResponse(
        ROBOTS.format(root=site_root(request)), headers={"Cache-Control": "public, max-age=86400"}
    )


async def favicon(request: Request) -> Response:
    return RedirectResponse(request.app.state.templates.globals["static"]("favicon.svg"), 302)


routes = [
    Route("/", home, name="home"),
    Route("/search", search, name="search"),
    Route("/papers", papers_index),
    Route("/papers/", papers_index),
    Route("/papers/{rest:path}", paper, name="paper"),
    Route("/abs/{rest:path}", abs_redirect),
    Route("/categories", categories, name="categories"),
    Route("/categories/{cat}", category, name="category"),
    Route("/developers", developers, name="developers"),
    Route("/llms.txt", llms),
    Route("/robots.txt", robots),
    Route("/favicon.ico", favicon),
]
