"""For automated readers: markdown of any page on ``Accept: text/markdown`` (the pages
without a markdown form of their own answer with /llms.txt, ``server.guide``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from urllib.parse import quote, urlsplit

from starlette.requests import Request

from papersift.core.paper import Author, Paper
from papersift.core.taxonomy import category_name
from papersift.core.tex import plain_text, shorten
from papersift.core.urls import arxiv_abs, arxiv_pdf, name_search_path, paper_path, researcher_url
from papersift.engine.institutions import Institution
from papersift.engine.people import Profile, Researcher
from papersift.engine.results import SearchResult
from papersift.server import meta
from papersift.server.negotiate import qualities
from papersift.server.params import search_url
from papersift.server.views import last_page, past_last, window_note

MARKDOWN = "text/markdown; charset=utf-8"
AuthorLinks = Callable[[Paper], Sequence[tuple[Author, str]]]

# Characters that open inline markup anywhere (links, images, raw HTML, entities, emphasis,
# code, tables, strikethrough), and the block markup a line may start with (headings,
# lists, quotes, setext underlines, thematic breaks).
_INLINE = re.compile(r"([\\`*_\[\]<>|~&])")
_LINE_START = re.compile(r"^([#+=-]|\d+(?=[.)]))")
_URL_SAFE = ":/?#@!$&*+,;=%"  # besides letters, digits and _.-~; never ( ) [ ] < > ' " space


def md_text(text: str, *, line_start: bool = False) -> str:
    """``text`` as literal markdown on one line: markup characters backslash-escaped, so a
    title such as ``x](javascript:alert(1)) [y`` or ``<img onerror=...>`` stays text;
    ``line_start``: it begins a line, where ``- ``, ``# ``, ``1. `` and ``=`` are markup too."""
    out = _INLINE.sub(r"\\\1", " ".join(text.split()))
    m = _LINE_START.match(out) if line_start else None
    if m is None:
        return out
    lead = m.group(1)
    return (lead + "\\" + out[len(lead) :]) if lead.isdigit() else "\\" + out


def md_url(url: str) -> str:
    """A link destination: site-relative or http(s) only (never ``javascript:``/``data:``),
    percent-encoded so no parenthesis, bracket or space can end it early."""
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ("", "http", "https") or (not scheme and not url.startswith("/")):
        return "#"
    return quote(url, safe=_URL_SAFE)


def md_link(label: str, url: str) -> str:
    return f"[{md_text(label)}]({md_url(url)})"


def _fence(code: str) -> str:
    """A backtick fence longer than any run of backticks in ``code``."""
    longest = max((len(r) for r in re.findall(r"`+", code)), default=0)
    return "`" * max(3, longest + 1)


def author_links_of(request: Request) -> AuthorLinks:
    """The app's author -> researcher page mapping (the templates' ``author_links``)."""
    links = request.app.state.templates.globals.get("author_links")
    if links is None:
        return lambda paper: [(a, name_search_path(a.name)) for a in paper.authors]
    return links  # type: ignore[no-any-return]


def wants_markdown(request: Request) -> bool:
    """True when the client asks for text/markdown and prefers it to HTML."""
    accept = request.headers.get("accept", "")
    q = qualities(accept)
    md = q.get("text/markdown", -1.0)
    return md > 0 and md >= q.get("text/html", -1.0)


MARKDOWN_AUTHORS = 100  # a paper's markdown names this many authors, then "and N more"


def _authors(paper: Paper, root: str, links: AuthorLinks, limit: int = MARKDOWN_AUTHORS) -> str:
    """Each author linked to their researcher page (a name search until clustered)."""
    shown = list(links(paper))[:limit]
    text = ", ".join(md_link(a.name, root + url) for a, url in shown)
    if len(paper.authors) > limit:
        text += f" and {len(paper.authors) - limit:,} more ({md_url(root + paper_path(paper))})"
    return text


def paper_markdown(paper: Paper, root: str, links: AuthorLinks) -> str:
    bib = meta.bibtex(paper).rstrip()
    fence = _fence(bib)
    lines = [
        f"# {md_text(plain_text(paper.title))}",
        "",
        f"- arXiv: {md_link(paper.arxiv_id, arxiv_abs(paper.arxiv_id))} (version "
        f"{paper.version}), {md_link('PDF', arxiv_pdf(paper.arxiv_id))}",
        f"- Authors: {_authors(paper, root, links)}",
        "- Categories: "
        + ", ".join(md_text(f"{c} ({category_name(c)})") for c in paper.categories),
        f"- Published: {paper.published.isoformat()}; updated: {paper.updated.isoformat()}",
    ]
    if paper.doi:
        lines.append(f"- DOI: {md_link(paper.doi, 'https://doi.org/' + paper.doi)}")
    if paper.journal_ref:
        lines.append(f"- Journal reference: {md_text(paper.journal_ref)}")
    if paper.comments:
        lines.append(f"- Comments: {md_text(paper.comments)}")
    lines += [
        f"- Page: {md_url(root + paper_path(paper))}",
        "",
        "## Abstract",
        "",
        md_text(paper.abstract, line_start=True),
        "",
        "## BibTeX",
        "",
        f"{fence}bibtex",
        bib,
        fence,
        "",
    ]
    return "\n".join(lines)


def search_markdown(
    result: SearchResult, root: str, links: AuthorLinks, window: int, heading: str = ""
) -> str:
    """Search results (or a category's papers: ``heading``) as a numbered list; ``window``:
    the result window, which ends the pages (said so when it cuts the list short)."""
    req = result.request
    if not heading:
        heading = f"Search results for “{req.query}”" if req.query else "Latest papers"
    last = last_page(result, window)
    where = f"page {result.page} of {last}" if result.page <= last else f"{last} pages"
    lines = [f"# {md_text(heading)}", "", f"{result.total:,} papers; {where}."]
    cut, past = window_note(result, window), past_last(result, window)
    notes = [*result.warnings, *([cut.text()] if cut else []), *([past] if past else [])]
    lines += [f"> Note: {md_text(w)}" for w in notes]
    if result.corrected:
        typed = md_link(req.query, root + search_url(req, autocorrect=False))
        lines.append(f"> Showing results for {md_text(result.corrected)}: no paper matches "
                     f"the query as typed. Search instead for {typed}.")  # fmt: skip
    elif result.suggestion:
        fixed = md_link(
            result.suggestion, root + search_url(req, query=result.suggestion, autocorrect=True)
        )
        lines.append(f"> Did you mean: {fixed}?")
    lines.append("")
    lines += hit_lines(result, root, links)
    if result.page < last:
        lines += ["", f"Next page: {md_url(root + search_url(req, page=result.page + 1))}"]
    for link in (cut.continue_link, cut.sort_link) if cut else ():
        if link:
            label = link.label[:1].upper() + link.label[1:]
            lines += ["", f"{md_text(label)}: {md_url(root + link.url)}"]
    lines.append("")
    return "\n".join(lines)


def hit_lines(result: SearchResult, root: str, links: AuthorLinks) -> list[str]:
    lines: list[str] = []
    for i, hit in enumerate(result.hits, start=(result.page - 1) * result.page_size + 1):
        p = hit.paper
        lines += [
            f"{i}. {md_link(plain_text(p.title), root + paper_path(p))} - arXiv "
            f"{md_text(p.arxiv_id)}, {p.published.isoformat()}, {md_text(', '.join(p.categories))}",
            f"   {_authors(p, root, links, limit=5)}",
            f"   {md_text(shorten(plain_text(p.abstract), 300), line_start=True)}",
        ]
    return lines


def researcher_markdown(
    person: Researcher, profile: Profile, result: SearchResult, root: str, links: AuthorLinks
) -> str:
    """A researcher page as markdown: who, identifiers, co-authors, then their papers."""
    page = root + researcher_url(person.rid, person.name)
    lines = [f"# {md_text(person.name)}", "", f"- Page: {md_url(page)}",
             f"- Papers in this index: {person.papers:,}"]  # fmt: skip
    lines += [f"- {md_text(scheme)}: {md_text(value)}" for scheme, value in person.ids]
    if person.variants:
        lines.append("- Also written: " + md_text("; ".join(person.variants[:20])))
    if profile.coauthors:
        lines.append("- Co-authors: " + ", ".join(
            f"{md_link(r.name, root + researcher_url(r.rid, r.name))} ({n})"
            for r, n in profile.coauthors[:20]
        ))  # fmt: skip
    lines += ["", f"## Papers ({result.total:,}; page {result.page} of {result.pages})", ""]
    lines += hit_lines(result, root, links)
    lines.append("")
    return "\n".join(lines)


def institution_markdown(
    inst: Institution, page: str, ror_url: str, members: Sequence[tuple[str, str, int]],
    papers_url: str,
) -> str:  # fmt: skip
    """An institution page as markdown; ``members`` are (name, absolute URL, papers)."""
    place = ", ".join(x for x in (inst.city, inst.country) if x)
    lines = [f"# {md_text(inst.name)}", "", f"- Page: {md_url(page)}",
             f"- ROR: {md_link(inst.ror_id, ror_url)}"]  # fmt: skip
    if place:
        lines.append(f"- Location: {md_text(place)}")
    if inst.aliases:
        lines.append("- Also known as: " + md_text("; ".join(inst.aliases[:20])))
    lines.append(f"- Papers: {md_url(papers_url)}")
    if members:
        lines += ["", "## Researchers", ""]
        lines += [f"- {md_link(name, url)} ({n:,} papers)" for name, url, n in members]
    lines.append("")
    return "\n".join(lines)


def list_markdown(
    heading: str, items: Sequence[tuple[str, str, str]], total: int, next_url: str | None
) -> str:
    """A list page (researchers, institutions) as markdown: (label, absolute URL, note)."""
    lines = [f"# {md_text(heading)}", "", f"{total:,} in all.", ""]
    lines += [f"- {md_link(label, url)}" + (f" ({md_text(note)})" if note else "")
              for label, url, note in items]  # fmt: skip
    if next_url:
        lines += ["", f"Next page: {md_url(next_url)}"]
    lines.append("")
    return "\n".join(lines)
