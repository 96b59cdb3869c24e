"""Fetch papers by id from the arXiv API (an Atom feed), for on-demand additions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

from lxml import etree

from papersift.core.authors import parse_authors
from papersift.core.paper import MAX_VERSION, Paper, parse_arxiv_id, version_out_of_range
from papersift.core.records import RecordError, checked
from papersift.indexer.fetch import Fetcher, HarvestError, RetryableResponse
from papersift.indexer.oai import all_text, safe_parser
from papersift.indexer.snapshot import _categories, _clean, _doi

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
ERROR_ID = "arxiv.org/api/errors"
IDS_PER_REQUEST = 100


class ArxivApiError(HarvestError):
    """The API answered with an error entry (a malformed id, a bad query)."""


@dataclass(frozen=True)
class Feed:
    papers: list[Paper] = field(default_factory=list)
    total: int | None = None
    skipped: list[str] = field(default_factory=list)


def parse_feed(status: int, body: bytes) -> Feed:
    """Parse one API response; raises ArxivApiError, or RetryableResponse if truncated."""
    try:
        root = etree.fromstring(body, parser=safe_parser())
    except etree.XMLSyntaxError as exc:
        if status != 200:
            raise HarvestError(f"HTTP {status} with a body that is no Atom") from None
        raise RetryableResponse(f"unparseable Atom (truncated?): {exc}") from None
    if root.tag != f"{ATOM}feed":
        raise HarvestError(f"not an Atom feed (HTTP {status}, root {root.tag!r})")
    entries = root.findall(f"{ATOM}entry")
    for entry in entries:
        if ERROR_ID in (_find_text(entry, f"{ATOM}id") or ""):
            message = " ".join((_find_text(entry, f"{ATOM}summary") or "error").split())
            raise ArxivApiError(f"arXiv API error: {message}")
    if status != 200:
        raise HarvestError(f"arXiv API request failed with HTTP {status}")
    total_text = (root.findtext(f"{OPENSEARCH}totalResults") or "").strip()
    ok = total_text.isdecimal() and total_text.isascii() and len(total_text) <= 15
    feed = Feed(total=int(total_text) if ok else None)
    for entry in entries:
        try:
            feed.papers.append(entry_to_paper(entry))
        except ValueError as exc:
            feed.skipped.append(str(exc))
    return feed


def _find_text(el: etree._Element, path: str) -> str | None:
    found = el.find(path)
    return None if found is None else all_text(found)


def _date(entry: etree._Element, name: str) -> date | None:
    text = (_find_text(entry, f"{ATOM}{name}") or "").strip()
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        return None


def entry_to_paper(entry: etree._Element) -> Paper:
    """One Atom ``<entry>`` as a Paper; raises ValueError(reason) if it cannot be one."""
    raw_id = (_find_text(entry, f"{ATOM}id") or "").strip()
    parsed = parse_arxiv_id(raw_id.split("/abs/", 1)[-1])
    if parsed is None:
        shown = raw_id if len(raw_id) <= 60 else raw_id[:60] + "…"
        if version_out_of_range(raw_id.split("/abs/", 1)[-1]):
            raise RecordError(shown, "id", f"version outside 1..{MAX_VERSION}")
        raise ValueError(f"invalid id {shown!r}")
    arxiv_id, version = parsed
    title = _clean(_find_text(entry, f"{ATOM}title"))
    if not title:
        raise ValueError(f"{arxiv_id}: no title")
    published = _date(entry, "published")
    updated = _date(entry, "updated") or published
    if published is None or updated is None:
        raise ValueError(f"{arxiv_id}: no published date")
    primary_el = entry.find(f"{ARXIV}primary_category")
    primary = primary_el.get("term", "") if primary_el is not None else ""
    terms = [c.get("term", "") for c in entry.findall(f"{ATOM}category")]
    names = [_clean(_find_text(a, f"{ATOM}name")) or "" for a in entry.findall(f"{ATOM}author")]
    return checked(
        Paper(
            arxiv_id=arxiv_id,
            version=version or 1,
            title=title,
            abstract=_clean(_find_text(entry, f"{ATOM}summary")) or "",
            authors=parse_authors(", ".join(n for n in names if n)),
            categories=_categories(" ".join([primary, *terms])),
            published=published,
            updated=max(updated, published),
            doi=_doi(_find_text(entry, f"{ARXIV}doi")),
            journal_ref=_clean(_find_text(entry, f"{ARXIV}journal_ref")),
            comments=_clean(_find_text(entry, f"{ARXIV}comment")),
        )
    )


def fetch_ids(
    fetcher: Fetcher, api_url: str, ids: Sequence[str], skipped: list[str] | None = None
) -> list[Paper]:
    """The papers of these arXiv ids (at most 100 per request); unknown ids are left out,
    and entries that fail their checks are added to ``skipped`` ("<id>: <field>: <reason>")."""
    papers: list[Paper] = []
    for i in range(0, len(ids), IDS_PER_REQUEST):
        chunk = ids[i : i + IDS_PER_REQUEST]
        params = {"id_list": ",".join(chunk), "start": "0", "max_results": str(len(chunk))}
        feed = fetcher.get(api_url, params, parse_feed)
        papers.extend(feed.papers)
        if skipped is not None:
            skipped.extend(feed.skipped)
    return papers
