"""Parse arXiv OAI-PMH responses (``ListRecords``/``GetRecord``, ``arXiv`` and ``arXivRaw``).

The parser never touches the network, loads no DTD and expands no entities (their references
contribute nothing). A response that declares a DTD (OAI-PMH never uses one) and does not
parse, such as a "billion laughs" that libxml2 refuses to amplify, is a HostileXmlError and
not retried as a truncated body would be. Metadata elements are matched by local name, since
recorded responses disagree on namespaces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import date

from lxml import etree

from papersift.core.authors import parse_authors
from papersift.core.paper import MAX_VERSION, Paper, parse_arxiv_id, version_out_of_range
from papersift.core.records import RecordError, checked
from papersift.indexer.fetch import HarvestError, RetryableResponse
from papersift.indexer.snapshot import _categories, _clean, _doi, _parse_date, _version_number

OAI_NS = "http://www.openarchives.org/OAI/2.0/"
PREFIXES = ("arXiv", "arXivRaw")
_FIRST_ELEMENT = re.compile(rb"<[A-Za-z_]")


class OaiError(HarvestError):
    """The repository answered with an OAI-PMH error (``badResumptionToken``, ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"OAI-PMH error {code}: {message}")
        self.code = code


class NotOaiError(HarvestError):
    """The answer is no OAI-PMH at all (an HTML page, another API): the URL is wrong."""


class HostileXmlError(HarvestError):
    """A response with a DTD that does not parse (entity tricks); refused, never retried."""


def declares_dtd(body: bytes) -> bool:
    """Whether a ``<!DOCTYPE`` precedes the root element (NULs dropped, so UTF-16 too)."""
    text = body.replace(b"\x00", b"")
    first = _FIRST_ELEMENT.search(text)
    return b"<!DOCTYPE" in text[: first.start() if first else len(text)]


def safe_parser() -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


@dataclass(frozen=True)
class OaiPage:
    """One response: papers, deleted ids and where the list goes on."""

    papers: list[Paper] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    token: str | None = None  # None or empty: the list is complete
    complete_size: int | None = None
    cursor: int | None = None
    response_date: date | None = None
    versioned: bool = True  # False for metadataPrefix=arXiv, which carries no version number
    skipped: list[str] = field(default_factory=list)


def _local(el: etree._Element) -> str:
    return etree.QName(el).localname


def _child(el: etree._Element, name: str) -> etree._Element | None:
    for c in el:
        if isinstance(c.tag, str) and _local(c) == name:
            return c
    return None


def _children(el: etree._Element, name: str) -> list[etree._Element]:
    return [c for c in el if isinstance(c.tag, str) and _local(c) == name]


def all_text(el: etree._Element) -> str:
    """The text of an element and its descendants; unexpanded entity references (which
    the safe parser leaves as nodes) contribute nothing but the text after them."""
    parts = [el.text or ""]
    for c in el:
        if not isinstance(c, etree._Entity):
            parts.append(all_text(c))
        parts.append(c.tail or "")
    return "".join(parts)


def _text(el: etree._Element, name: str) -> str | None:
    c = _child(el, name)
    return None if c is None else _clean(all_text(c))


def parse_response(status: int, body: bytes) -> OaiPage:
    """Parse one OAI-PMH response; raises OaiError, HostileXmlError, or RetryableResponse
    if truncated."""
    try:
        root = etree.fromstring(body, parser=safe_parser())
    except etree.XMLSyntaxError as exc:
        if declares_dtd(body):
            raise HostileXmlError(
                f"HTTP {status} response declares a DTD and does not parse ({exc}): entity "
                "tricks such as a 'billion laughs'; refused, not retried"
            ) from None
        if status != 200:
            raise NotOaiError(f"HTTP {status} with a body that is no OAI-PMH") from None
        raise RetryableResponse(f"unparseable XML (truncated?): {exc}") from None
    if root.tag != f"{{{OAI_NS}}}OAI-PMH":
        raise NotOaiError(f"not an OAI-PMH response (HTTP {status}, root {root.tag!r})")
    err = root.find(f"{{{OAI_NS}}}error")
    if err is not None:
        raise OaiError(err.get("code", "unknown"), " ".join((err.text or "").split()))
    if status != 200:
        raise HarvestError(f"OAI-PMH request failed with HTTP {status}")
    response_date = _parse_date((root.findtext(f"{{{OAI_NS}}}responseDate") or "")[:10])
    body_el = root.find(f"{{{OAI_NS}}}ListRecords")
    if body_el is None:
        body_el = root.find(f"{{{OAI_NS}}}GetRecord")
    if body_el is None:
        raise HarvestError("OAI-PMH response has neither ListRecords nor GetRecord")
    page = OaiPage(response_date=response_date)
    versioned = True
    for record in body_el.findall(f"{{{OAI_NS}}}record"):
        header = record.find(f"{{{OAI_NS}}}header")
        if header is None:
            continue
        oai_id = (header.findtext(f"{{{OAI_NS}}}identifier") or "").strip()
        if header.get("status") == "deleted":
            parsed = parse_arxiv_id(oai_id.rpartition(":")[2])
            if parsed is not None:
                page.deleted.append(parsed[0])
            continue
        meta = record.find(f"{{{OAI_NS}}}metadata")
        fmt = next((c for c in meta if isinstance(c.tag, str)), None) if meta is not None else None
        try:
            if fmt is None:
                raise ValueError(f"{oai_id}: no metadata")
            if _local(fmt) == "arXivRaw":
                page.papers.append(_raw_paper(fmt))
            elif _local(fmt) == "arXiv":
                page.papers.append(_arxiv_paper(fmt))
                versioned = False
            else:
                raise ValueError(f"{oai_id}: unsupported metadata format {_local(fmt)!r}")
        except ValueError as exc:
            page.skipped.append(str(exc))
    token_el = body_el.find(f"{{{OAI_NS}}}resumptionToken")
    token = None
    size = cursor = None
    if token_el is not None:
        token = (token_el.text or "").strip() or None
        size = _int(token_el.get("completeListSize"))
        cursor = _int(token_el.get("cursor"))
    return replace(page, token=token, complete_size=size, cursor=cursor, versioned=versioned)


def _int(value: str | None) -> int | None:
    """A count of the resumption token; None if absent or not a sane number (checked before
    ``int()``, which refuses thousands of digits)."""
    text = (value or "").strip()
    return int(text) if text.isdecimal() and text.isascii() and len(text) <= 15 else None


def _arxiv_id(meta: etree._Element) -> str:
    raw = _text(meta, "id") or ""
    parsed = parse_arxiv_id(raw)
    if parsed is None:
        shown = raw if len(raw) <= 40 else raw[:40] + "…"
        if version_out_of_range(raw):
            raise RecordError(shown, "id", f"version outside 1..{MAX_VERSION}")
        raise ValueError(f"invalid id {shown!r}")
    return parsed[0]


def _common(meta: etree._Element, arxiv_id: str) -> dict[str, object]:
    title = _text(meta, "title")
    if not title:
        raise ValueError(f"{arxiv_id}: no title")
    return {
        "arxiv_id": arxiv_id,
        "title": title,
        "abstract": _text(meta, "abstract") or "",
        "categories": _categories(_text(meta, "categories")),
        "doi": _doi(_text(meta, "doi")),
        "journal_ref": _text(meta, "journal-ref"),
        "comments": _text(meta, "comments"),
        "license": _text(meta, "license"),
    }


def _raw_paper(meta: etree._Element) -> Paper:
    """``arXivRaw``: the authors string as submitted and every version with its date."""
    arxiv_id = _arxiv_id(meta)
    versions: list[tuple[int, date]] = []
    for v in _children(meta, "version"):
        n = _version_number(v.get("version"), arxiv_id)
        d = _parse_date(_text(v, "date"))
        if n is not None and d is not None:
            versions.append((n, d))
    if not versions:
        raise ValueError(f"{arxiv_id}: no dated version")
    versions.sort()
    return checked(
        Paper(
            version=versions[-1][0],
            authors=parse_authors(_text(meta, "authors") or ""),
            published=versions[0][1],
            updated=max(versions[-1][1], versions[0][1]),
            **_common(meta, arxiv_id),  # type: ignore[arg-type]
        )
    )


def _arxiv_paper(meta: etree._Element) -> Paper:
    """``arXiv``: structured authors and created/updated dates, but no version number."""
    arxiv_id = _arxiv_id(meta)
    created = _parse_date(_text(meta, "created"))
    updated = _parse_date(_text(meta, "updated")) or created
    if created is None or updated is None:
        raise ValueError(f"{arxiv_id}: no created date")
    parsed: list[list[str]] = []
    names: list[str] = []
    authors_el = _child(meta, "authors")
    for a in _children(authors_el, "author") if authors_el is not None else []:
        key = _text(a, "keyname") or ""
        fore = _text(a, "forenames") or ""
        suffix = _text(a, "suffix") or ""
        parsed.append([key, fore, suffix])
        names.append(" ".join(x for x in (fore, key, suffix) if x))
    return checked(
        Paper(
            version=1,
            authors=parse_authors(", ".join(names), parsed),
            published=created,
            updated=max(updated, created),
            **_common(meta, arxiv_id),  # type: ignore[arg-type]
        )
    )
