"""RSS 2.0 and Atom feeds from papers: a pure transform (feedgen), it queries nothing itself.

The body is a function of its inputs only (the feed's date is its newest paper's, never
"now"), so equal inputs give equal bytes and an ETag over them is stable.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from typing import Any, Literal

from feedgen.entry import FeedEntry
from feedgen.feed import FeedGenerator

from papersift.core.paper import Paper
from papersift.core.tex import plain_text
from papersift.core.urls import arxiv_abs, arxiv_pdf

FeedFormat = Literal["rss", "atom"]
FORMATS: tuple[FeedFormat, ...] = ("rss", "atom")
CONTENT_TYPES: dict[FeedFormat, str] = {
    "rss": "application/rss+xml; charset=utf-8",
    "atom": "application/atom+xml; charset=utf-8",
}
GENERATOR = "papersift"
# An empty feed still needs a date; a fixed one keeps its body (and ETag) stable.
EMPTY_FEED_DATE = date(1991, 8, 14)
# Characters XML 1.0 cannot carry at all (lxml refuses them): drop them.
_XML_ILLEGAL = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass(frozen=True, slots=True)
class FeedInfo:
    """What a feed says about itself; URLs are absolute."""

    title: str
    description: str
    page_url: str  # the HTML page this feed follows
    self_url: str  # this feed


def xml_text(text: str) -> str:
    """Text safe to put in XML: characters XML cannot represent removed."""
    return _XML_ILLEGAL.sub("", text)


def _when(day: date) -> datetime:
    return datetime.combine(day, time(), UTC)


def feed_updated(papers: Sequence[Paper]) -> date:
    """The feed's own date: the newest first-publication or update among its papers."""
    return max((max(p.published, p.updated) for p in papers), default=EMPTY_FEED_DATE)


def guid(paper: Paper) -> str:
    """Stable item id: the arXiv id with its version (``2401.10241v2``)."""
    return f"{paper.arxiv_id}v{paper.version}"


def item_html(paper: Paper) -> str:
    """The item body as HTML: abstract, authors, categories and the arXiv links (escaped)."""
    authors = ", ".join(a.name for a in paper.authors)
    cats = ", ".join(paper.categories)
    abs_url, pdf_url = arxiv_abs(paper.arxiv_id), arxiv_pdf(paper.arxiv_id)
    parts = [
        f"<p>{html.escape(plain_text(paper.abstract))}</p>",
        f"<p>Authors: {html.escape(authors)}</p>" if authors else "",
        f"<p>Categories: {html.escape(cats)}</p>" if cats else "",
        f'<p><a href="{html.escape(abs_url)}">arXiv:{html.escape(paper.arxiv_id)}</a>'
        f' · <a href="{html.escape(pdf_url)}">PDF</a></p>',
    ]
    return xml_text("".join(parts))


class _AtomEntry(FeedEntry):  # type: ignore[misc]
    """feedgen 1.0.0 drops the rel/type/title of entry links in Atom; put them back."""

    def atom_entry(self, extensions: bool = True) -> Any:
        entry = super().atom_entry(extensions)
        for element, data in zip(entry.findall("link"), self.link() or [], strict=False):
            for key in ("rel", "type", "title"):
                if data.get(key):
                    element.set(key, data[key])
        return entry


def _add_item(fg: FeedGenerator, fmt: FeedFormat, paper: Paper, url: str) -> None:
    fe: Any = fg.add_entry(_AtomEntry() if fmt == "atom" else None, order="append")
    fe.title(xml_text(plain_text(paper.title)) or paper.arxiv_id)
    fe.guid(guid(paper), permalink=False)
    if fmt == "atom":
        fe.id(arxiv_abs(paper.arxiv_id, paper.version))
    fe.link(href=url, rel="alternate", type="text/html")
    if fmt == "atom":
        fe.link(href=arxiv_abs(paper.arxiv_id), rel="related", type="text/html", title="arXiv")
        fe.link(href=arxiv_pdf(paper.arxiv_id), rel="related", type="application/pdf", title="PDF")
    fe.published(_when(paper.published))
    fe.updated(_when(max(paper.published, paper.updated)))
    body = item_html(paper)
    if fmt == "rss":
        fe.description(body)
        for author in paper.authors:
            fe.dc.dc_creator(xml_text(author.name))
    else:
        fe.summary(body, type="html")
        for author in paper.authors:
            fe.author(name=xml_text(author.name))
    for cat in paper.categories:
        fe.category(term=xml_text(cat))


def render_feed(
    info: FeedInfo,
    papers: Sequence[Paper],
    fmt: FeedFormat,
    paper_url: Callable[[Paper], str],
) -> bytes:
    """The feed document (UTF-8 XML) with ``papers`` as items, in the order given.

    ``paper_url`` gives the absolute URL of a paper's page on this site (the item link).
    """
    fg = FeedGenerator()
    if fmt == "rss":
        fg.load_extension("dc", atom=False, rss=True)
    fg.title(xml_text(info.title))
    fg.id(info.self_url)
    fg.link(href=info.self_url, rel="self")
    fg.link(href=info.page_url, rel="alternate")  # RSS's <link> is the last one given
    fg.description(xml_text(info.description) or info.title)
    fg.language("en")
    fg.generator(GENERATOR)
    updated = _when(feed_updated(papers))
    fg.updated(updated)
    fg.lastBuildDate(updated)
    for paper in papers:
        _add_item(fg, fmt, paper, paper_url(paper))
    out: bytes = fg.rss_str(pretty=False) if fmt == "rss" else fg.atom_str(pretty=False)
    return out
