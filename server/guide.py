"""The site's guides and their examples: the home page's "Try ...", the /developers page's
requests, and /llms.txt (also the markdown answer of a page that has no markdown form).

Every example comes from the index served (``engine.examples``): its papers, categories,
researchers and words, so each link finds something whatever data a lab imports. An
example the index has nothing for (no researcher yet, no institution) is left out, and
the forms stay as placeholders (``ARXIV_ID``).
"""

from __future__ import annotations

from dataclasses import dataclass

from papersift.core.urls import with_query
from papersift.engine.examples import Examples
from papersift.engine.results import Stats


@dataclass(frozen=True, slots=True)
class Guide:
    """The examples as the guides write them: site-relative URLs, or None to leave out."""

    tries: tuple[tuple[str, str], ...]  # the home page's (label, URL) of queries
    paper_id: str | None  # the newest paper
    paper_search: str | None  # the search for its id
    version: int  # of that paper, as the index holds it
    old_id: str | None  # an old-style id, when the index holds one
    cited_id: str | None  # references and citations: the most cited paper, else the newest
    category: str | None  # the largest category
    archive: str | None  # and its archive
    ror: str | None  # an institution's ROR id
    api_search: str | None  # /api/v1/search with a query, a category and a year
    search: str | None  # /search with the query
    feed_search: str | None  # /rss/search.xml with the query, a category and a year
    researcher_query: str | None  # /api/v1/researchers?q=...
    researcher_id: int | None
    institution_query: str | None  # /api/v1/institutions?q=...
    dates: tuple[str, str, str]  # a year, a month and a day, for ``from`` and ``to``


def guide(ex: Examples) -> Guide:
    newest = ex.newest
    tries: list[tuple[str, str]] = []
    if ex.terms:
        tries.append((ex.terms, with_query("/search", {"q": ex.terms})))
    if ex.phrase:
        quoted = f'"{ex.phrase}"'
        tries.append((quoted, with_query("/search", {"q": quoted, "mode": "keyword"})))
    if ex.question:
        tries.append((ex.question, with_query("/search", {"q": ex.question, "mode": "semantic"})))
    query: dict[str, str | int | None] = {"q": ex.terms}  # with a category and year it has
    if ex.filtered:
        query.update({"category": ex.filtered[0], "from": ex.filtered[1]})
    published = ex.published
    dates = (
        (str(published.year), f"{published:%Y-%m}", published.isoformat())
        if published
        else ("YYYY", "YYYY-MM", "YYYY-MM-DD")
    )
    rid = ex.researcher[0] if ex.researcher else None
    return Guide(
        tries=tuple(tries),
        paper_id=newest.arxiv_id if newest else None,
        paper_search=with_query("/search", {"q": newest.arxiv_id}) if newest else None,
        version=newest.version if newest else 1,
        old_id=ex.old_id,
        cited_id=ex.cited_id or (newest.arxiv_id if newest else None),
        category=ex.category,
        archive=ex.archive,
        ror=ex.institution[0].ror_id if ex.institution else None,
        api_search=with_query("/api/v1/search", query) if ex.terms else None,
        search=with_query("/search", {"q": ex.terms}) if ex.terms else None,
        feed_search=with_query("/rss/search.xml", query) if ex.terms else None,
        researcher_query=with_query("/api/v1/researchers", {"q": ex.researcher[1]})
        if ex.researcher
        else None,
        researcher_id=rid,
        institution_query=with_query("/api/v1/institutions", {"q": ex.institution[1]})
        if ex.institution
        else None,
        dates=dates,
    )


def llms_txt(root: str, stats: Stats | None = None, ex: Examples | None = None) -> str:
    size = f" It holds {stats.papers:,} papers." if stats else ""
    g = guide(ex or Examples())
    pid = g.paper_id or "ARXIV_ID"
    old = g.old_id or "archive/YYMMNNN"
    eg_paper = f", e.g. `{root}/papers/{pid}`" if g.paper_id else ""
    eg_bib = f"{root}/papers/{pid}.bib" if g.paper_id else "/papers/ARXIV_ID.bib"
    later = f" (`{pid}v{g.version + 1}` here)" if g.paper_id else ""
    cats = f", e.g. {g.category}" if g.category else ""
    cats += f" or {g.archive}" if g.archive != g.category else ""
    eg_cat = f" (e.g. {g.category})" if g.category else ""
    eg_arch = f" such as `{g.archive}`" if g.archive else ""
    year, month, day = g.dates
    return f"""# papersift

> A search engine for research papers from arXiv: keyword (BM25) and semantic (embedding)
> search, fused into one ranking, over titles, abstracts and authors.{size} Every page is
> plain server-rendered HTML; the same data is available as JSON and as markdown.

Base URL: {root}. The URL forms below are paths under it, with placeholders in capitals
(`ARXIV_ID`, `ID`) to fill in; the full URLs are examples to fetch.

## Reading this site as a program

- Send `Accept: text/markdown` to any page URL to get markdown instead of HTML: a paper
  page returns the paper, a search page the results, a category, researcher or
  institution page (or a list of them) itself, any other page this guide.
- [JSON API]({root}/developers): `GET /api/v1/...`, described by
  [OpenAPI 3.1]({root}/openapi.json). Errors are
  `{{"error": {{"status", "code", "message", "parameter"}}}}` (`parameter`: the query
  parameter to change, or null).
  The API is for programs acting for a person (an assistant answering a question, a
  reference manager), not for crawling: robots.txt keeps crawlers out of `/api/`, whose
  searches never end. To follow what is new, use the feeds; to list every paper, the
  sitemap.
- Please keep to a few requests per second (past the server's limit per minute, searches
  and API requests answer 429 with `Retry-After`), and follow redirects (a bare arXiv id
  answers 301 to the paper's canonical URL).

## URL forms

- `/search?q=QUERY` - search. Parameters: `q` (words, "phrases", -exclusions, or an
  arXiv id), `mode` (keyword | semantic | hybrid), `category` (repeatable: a category or
  an archive{cats}), `researcher` (author name, repeatable), `researcher_id` (the ID of a
  researcher page, repeatable), `institution` (a ROR id, repeatable), `from` and `to`
  ({year}, {month} or {day}, by first publication), `sort` (relevance | newest | oldest |
  cited), `page`, `page_size`, `autocorrect` (0: search a query no paper matches as typed,
  not its did-you-mean). Without `q` it lists papers newest first.
- `/papers/ARXIV_ID-SLUG` - a paper{eg_paper}. The bare id,
  old-style ids (`{old}`) and a version the index holds (`{pid}v{g.version}`) redirect
  to the canonical URL; a later version than the index holds{later} shows
  the latest it has, with a note. Append `.bib` for BibTeX or `.md` for markdown
  (`{eg_bib}`).
- `{root}/categories` - every category with its paper count;
  `/categories/CATEGORY` - the newest papers of one category{eg_cat}.
- `/api/v1/search`, `/api/v1/papers/ARXIV_ID`, `/api/v1/papers/ARXIV_ID/similar`,
  `/api/v1/researchers?q=NAME`, `/api/v1/researchers/ID`, `/api/v1/institutions?q=NAME`,
  `/api/v1/institutions/ID`, `{root}/api/v1/categories`, `{root}/api/v1/stats` - JSON.
- Feeds (RSS 2.0; `/atom/` instead of `/rss/` for Atom), newest first:
  `{root}/rss/latest.xml`, `/rss/CATEGORY.xml` (a category or an
  archive{eg_arch}), `/rss/search.xml?q=QUERY` (the search parameters),
  `/rss/researchers/ID.xml`, `/rss/institutions/ID.xml` (the ID of the page's
  `/researchers/ID-name` or `/institutions/ID-name` address); all listed at
  `{root}/feeds`. Sitemap: `{root}/sitemap.xml`.
- `/researchers?q=NAME` - researchers by name, most papers first;
  `/researchers/ID-NAME` - a researcher: papers, author positions, fields,
  co-authors. Their papers in search: `/search?researcher_id=ID` (or
  `researcher=NAME`, which matches the name on papers).
- `/institutions?q=NAME` - institutions from the ROR registry;
  `/institutions/ID-NAME` (also by ROR id: `/institutions/ROR_ID`) - an
  institution and the papers enrichment links to it.
- `{root}/healthz` - liveness for orchestration.

## Optional

- [Developers]({root}/developers): the API with examples.
- [Home]({root}/): latest papers and corpus statistics.
"""
