"""OpenAlex work JSON -> :class:`WorkRecord`, and fetching one work by arXiv id or DOI."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from papersift.core.paper import arxiv_doi_suffix, clean_doi, parse_arxiv_id
from papersift.engine.ror import parse_ror_id
from papersift.indexer.enrich import WorkAuthor, WorkRecord
from papersift.indexer.fetch import HarvestError, RetryableResponse

_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/([^?#]+?)(?:\.pdf)?$", re.I)
_ORCID = re.compile(r"(\d{4}-\d{4}-\d{4}-\d{3}[\dX])$", re.I)


def _tail(url: object) -> str:
    """``https://openalex.org/A5023888391`` -> ``A5023888391``."""
    return str(url or "").rstrip("/").rsplit("/", 1)[-1]


def orcid_of(text: object) -> str | None:
    m = _ORCID.search(str(text or "").strip())
    return m.group(1).upper() if m else None


def _arxiv_id(work: dict[str, Any]) -> str | None:
    dois = [str(work.get("doi") or "")]
    ids = work.get("ids") or {}
    dois.append(str(ids.get("doi") or ""))
    for d in dois:
        suffix = arxiv_doi_suffix(clean_doi(d) or "")
        if suffix and (parsed := parse_arxiv_id(suffix)):
            return parsed[0]
    for loc in work.get("locations") or []:
        for key in ("landing_page_url", "pdf_url"):
            m = _ARXIV_URL.search(str((loc or {}).get(key) or ""))
            if m and (parsed := parse_arxiv_id(m.group(1))):
                return parsed[0]
    return None


def _unlinked(authorship: dict[str, Any], insts: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """The raw affiliation strings OpenAlex tied to no institution (for our ROR matcher):
    ``affiliations`` entries without ``institution_ids``; in older records, which lack that
    list, every raw string of an author with no institution that has a ROR id."""
    listed = authorship.get("affiliations")
    if isinstance(listed, list):
        return tuple(
            str(x.get("raw_affiliation_string") or "")
            for x in listed
            if isinstance(x, dict) and not x.get("institution_ids")
            and x.get("raw_affiliation_string")
        )  # fmt: skip
    if insts:
        return ()
    return tuple(str(s) for s in authorship.get("raw_affiliation_strings") or [] if s)


def parse_work(work: dict[str, Any]) -> WorkRecord:
    """One OpenAlex work object; raises ValueError if it is none."""
    work_id = _tail(work.get("id"))
    if not work_id.startswith("W"):
        raise ValueError(f"not an OpenAlex work: id {work.get('id')!r}")
    doi = clean_doi(str(work.get("doi") or ""))
    authors = []
    for a in work.get("authorships") or []:
        person = a.get("author") or {}
        ids: list[tuple[str, str]] = []
        if orcid := orcid_of(person.get("orcid")):
            ids.append(("orcid", orcid))
        if (aid := _tail(person.get("id"))).startswith("A"):
            ids.append(("openalex", aid))
        insts = tuple(
            (ror, str(i.get("display_name") or ""))
            for i in a.get("institutions") or []
            if (ror := parse_ror_id(str(i.get("ror") or ""))) is not None
        )
        authors.append(
            WorkAuthor(
                name=str(a.get("raw_author_name") or person.get("display_name") or ""),
                position=str(a.get("author_position") or ""),
                ids=tuple(ids),
                institutions=insts,
                raw_affiliations=_unlinked(a, insts),
            )
        )
    cited = work.get("cited_by_count")
    arxiv_id = _arxiv_id(work)
    doi = None if doi and arxiv_doi_suffix(doi) else doi
    mag = str((work.get("ids") or {}).get("mag") or "")
    keys = [("openalex", work_id), ("doi", doi or ""), ("arxiv", arxiv_id or ""), ("mag", mag)]
    refs = work.get("referenced_works")
    return WorkRecord(
        source="openalex",
        work_id=work_id,
        arxiv_id=arxiv_id,
        doi=doi,
        citation_count=int(cited) if isinstance(cited, int) else None,
        authors=tuple(authors),
        keys=tuple((k, v) for k, v in keys if v),
        references=_references(refs) if isinstance(refs, list) else None,
    )


def _references(refs: list[Any]) -> tuple[tuple[tuple[str, str], ...], ...]:
    """``referenced_works`` (OpenAlex URLs) as graph keys; a malformed entry counts, bare."""
    return tuple((("openalex", w),) if (w := _tail(r)).startswith("W") else () for r in refs)


def parse_json_work(
    status: int, body: bytes, source: str, parse: Callable[[Any], WorkRecord]
) -> WorkRecord | None:
    """A fetched JSON work body of ``source``: the record, None for 404, an error otherwise
    (a body cut short is retryable)."""
    if status == 404:
        return None
    if status != 200:
        raise HarvestError(f"{source} answered HTTP {status}")
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise RetryableResponse(f"unparseable JSON (truncated?): {exc}") from None
    try:
        return parse(data)
    except (ValueError, AttributeError, TypeError) as exc:
        raise HarvestError(f"{source}: {exc}") from None


def parse_response(status: int, body: bytes) -> WorkRecord | None:
    """A fetched ``/works/...`` body: the record, None for 404, an error otherwise."""
    return parse_json_work(status, body, "OpenAlex", parse_work)


def work_path(arxiv_id: str, doi: str | None) -> str:
    """The ``/works/...`` path of a paper: its DOI if it has one, else arXiv's DOI."""
    doi = clean_doi(doi)
    return f"/works/doi:{doi}" if doi else f"/works/doi:10.48550/arXiv.{arxiv_id}"
