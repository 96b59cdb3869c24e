"""For automated readers: /llms.txt, and markdown of any page on ``Accept: text/markdown``."""

from __future__ import annotations

from starlette.requests import Request

from engine.results import SearchResult, Stats
from papersift.paper import Paper
from server import meta
from server.params import search_url
from server.taxonomy import category_name
from server.urls import arxiv_abs, arxiv_pdf, paper_path, researcher_path

MARKDOWN = "text/markdown; charset=utf-8"


def _quality(accept: str, media: str) -> float:
    best = -1.0
    for part in accept.split(","):
        name, *params = (p.strip() for p in part.split(";"))
        if name.lower() != media:
            continue
        q = 1.0
        for p in params:
            if p.startswith("q="):
                try:
                    q = float(p[2:])
                except ValueError:
                    q = 0.0
        best = max(best, q)
    return best


def wants_markdown(request: Request) -> bool:
    """True when the client asks for text/markdown and prefers it to HTML."""
    accept = request.headers.get("accept", "")
    md = _quality(accept, "text/markdown")
    return md > 0 and md >= _quality(accept, "text/html")


def llms_txt(root: str, stats: Stats | None = None) -> str:
    size = f" It holds {stats.papers:,} papers." if stats else ""
    return f"""# papersift

> A search engine for research papers from arXiv: keyword (BM25) and semantic (embedding)
> search, fused into one ranking, over titles, abstracts and authors.{size} Every page is
> plain server-rendered HTML; the same data is available as JSON and as markdown.

Base URL: {root}

## Reading this site as a program

- Send `Accept: text/markdown` to any page URL to get markdown instead of HTML: a paper
  page returns the paper, a search page returns the results, any other page this guide.
- [JSON API]({root}/developers): `GET {root}/api/v1/...`, described by
  [OpenAPI 3.1]({root}/openapi.json). Errors are `{{"error": {{"status", "code", "message"}}}}`.
- Please keep to a few requests per second.

## URL forms

- `{root}/search?q=QUERY` - search. Parameters: `q` (words, "phrases", -exclusions, or an
  arXiv id), `mode` (keyword | semantic | hybrid), `category` (repeatable, e.g. cs.IR or an
  archive such as cs), `researcher` (author name, repeatable), `researcher_id` (the ID of a
  researcher page, repeatable), `from` and `to` (2024,
  2024-05 or 2024-05-17, by first publication), `sort` (relevance | newest | oldest |
  cited), `page`, `page_size`. Without `q` it lists papers newest first.
- `{root}/papers/ARXIV_ID-SLUG` - a paper, e.g. `{root}/papers/2401.10241`. The bare id, a
  versioned id (`2401.10241v2`) and old-style ids (`cmp-lg/9405001`) redirect to the
  canonical URL. Append `.bib` for BibTeX or `.md` for markdown
  (`{root}/papers/2401.10241.bib`).
- `{root}/categories` - every category with its paper count;
  `{root}/categories/CATEGORY` - the newest papers of one category (e.g. cs.IR).
- `{root}/api/v1/search`, `{root}/api/v1/papers/ARXIV_ID`,
  `{root}/api/v1/papers/ARXIV_ID/similar`, `{root}/api/v1/researchers?q=NAME`,
  `{root}/api/v1/researchers/ID`, `{root}/api/v1/institutions?q=NAME`,
  `{root}/api/v1/institutions/ID`, `{root}/api/v1/categories`, `{root}/api/v1/stats` - JSON.
- Feeds (RSS 2.0; `/atom/` instead of `/rss/` for Atom), newest first:
  `{root}/rss/latest.xml`, `{root}/rss/CATEGORY.xml` (a category or an archive such as
  `cs`), `{root}/rss/search.xml?q=QUERY` (the search parameters),
  `{root}/rss/researchers/ID.xml`, `{root}/rss/institutions/ID.xml` (the ID of the page's
  `/researchers/ID-name` or `/institutions/ID-name` address); all listed at
  `{root}/feeds`. Sitemap: `{root}/sitemap.xml`.
- `{root}/researchers?q=NAME` - researchers by name, most papers first;
  `{root}/researchers/ID-NAME` - a researcher: papers, author positions, fields,
  co-authors. Their papers in search: `{root}/search?researcher_id=ID` (or
  `researcher=NAME`, which matches the name on papers).
- `{root}/institutions?q=NAME` - institutions from the ROR registry;
  `{root}/institutions/ID-NAME` (also by ROR id: `{root}/institutions/ROR_ID`) - an
  institution and the papers enrichment links to it.
- `{root}/healthz` - liveness for orchestration.

## Optional

- [Developers]({root}/developers): the API with examples.
- [Home]({root}/): latest papers and corpus statistics.
"""


def _authors(paper: Paper, root: str, limit: int = 0) -> str:
    names = paper.authors[:limit] if limit else paper.authors
    text = ", ".join(f"[{a.name}]({root}{researcher_path(a.name)})" for a in names)
    if limit and len(paper.authors) > limit:
        text += f" and {len(paper.authors) - limit} more"
    return text


def paper_markdown(paper: Paper, root: str) -> str:
    lines = [
        f"# {meta.plain_text(paper.title)}",
        "",
        f"- arXiv: [{paper.arxiv_id}]({arxiv_abs(paper.arxiv_id)}) (version {paper.version}), "
        f"[PDF]({arxiv_pdf(paper.arxiv_id)})",
        f"- Authors: {_authors(paper, root)}",
        "- Categories: " + ", ".join(f"{c} ({category_name(c)})" for c in paper.categories),
        f"- Published: {paper.published.isoformat()}; updated: {paper.updated.isoformat()}",
    ]
    if paper.doi:
        lines.append(f"- DOI: [{paper.doi}](https://doi.org/{paper.doi})")
    if paper.journal_ref:
        lines.append(f"- Journal reference: {paper.journal_ref}")
    if paper.comments:
        lines.append(f"- Comments: {' '.join(paper.comments.split())}")
    lines += [
        f"- Page: {root}{paper_path(paper)}",
        "",
        "## Abstract",
        "",
        " ".join(paper.abstract.split()),
        "",
        "## BibTeX",
        "",
        "```bibtex",
        meta.bibtex(paper).rstrip(),
        "```",
        "",
    ]
    return "\n".join(lines)


def search_markdown(result: SearchResult, root: str) -> str:
    req = result.request
    heading = f"Search results for “{req.query}”" if req.query else "Latest papers"
    lines = [f"# {heading}", "", f"{result.total:,} papers; page {result.page} of {result.pages}."]
    lines += [f"> Note: {w}" for w in result.warnings]
    lines.append("")
    for i, hit in enumerate(result.hits, start=(result.page - 1) * result.page_size + 1):
        p = hit.paper
        lines += [
            f"{i}. [{meta.plain_text(p.title)}]({root}{paper_path(p)}) - arXiv {p.arxiv_id}, "
            f"{p.published.isoformat()}, {', '.join(p.categories)}",
            f"   {_authors(p, root, limit=5)}",
            f"   {meta.shorten(meta.plain_text(p.abstract), 300)}",
        ]
    if result.page < result.pages:
        lines += ["", f"Next page: {root}{search_url(req, page=result.page + 1)}"]
    lines.append("")
    return "\n".join(lines)
