"""Semantic Scholar Graph API paper JSON -> :class:`WorkRecord`, and its request path."""

from __future__ import annotations

from typing import Any

from papersift.core.paper import clean_doi, parse_arxiv_id
from papersift.indexer.enrich import WorkAuthor, WorkRecord
from papersift.indexer.openalex import orcid_of, parse_json_work

FIELDS = (
    "externalIds,citationCount,authors.name,authors.externalIds,authors.affiliations,"
    "references.externalIds,citations.externalIds"
)


def work_keys(paper: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The identifiers of one S2 paper object (engine.graph keys)."""
    ext = paper.get("externalIds") or {}
    arxiv = parse_arxiv_id(str(ext.get("ArXiv") or ""))
    keys = [
        ("s2", str(paper.get("paperId") or "")),
        ("doi", clean_doi(str(ext.get("DOI") or "")) or ""),
        ("arxiv", arxiv[0] if arxiv else ""),
        ("mag", str(ext.get("MAG") or "")),
    ]
    return tuple((k, v) for k, v in keys if v)


def _works(items: object) -> tuple[tuple[tuple[str, str], ...], ...] | None:
    if not isinstance(items, list):
        return None  # not asked for, or null: the source did not say
    return tuple(work_keys(x) if isinstance(x, dict) else () for x in items)


def parse_paper(paper: dict[str, Any]) -> WorkRecord:
    """One S2 paper object; raises ValueError if it is none. S2 gives no author positions
    beyond the order, and affiliations only as raw strings (for our ROR matcher)."""
    paper_id = str(paper.get("paperId") or "")
    if not paper_id:
        raise ValueError("not a Semantic Scholar paper: no paperId")
    ext = paper.get("externalIds") or {}
    arxiv = parse_arxiv_id(str(ext.get("ArXiv") or ""))
    authors = []
    people = paper.get("authors") or []
    for n, a in enumerate(people):
        ids: list[tuple[str, str]] = []
        if a.get("authorId"):
            ids.append(("s2", str(a["authorId"])))
        a_ext = a.get("externalIds") or {}
        orcid = a_ext.get("ORCID")
        if orcid := orcid_of(orcid[0] if isinstance(orcid, list) and orcid else orcid):
            ids.append(("orcid", orcid))
        where = "first" if n == 0 else "last" if n == len(people) - 1 else "middle"
        affs = a.get("affiliations")
        raw = tuple(str(x) for x in affs if x) if isinstance(affs, list) else ()
        authors.append(WorkAuthor(str(a.get("name") or ""), where, tuple(ids), (), raw))
    cited = paper.get("citationCount")
    return WorkRecord(
        source="s2",
        work_id=paper_id,
        arxiv_id=arxiv[0] if arxiv else None,
        doi=clean_doi(str(ext.get("DOI") or "")),
        citation_count=int(cited) if isinstance(cited, int) else None,
        authors=tuple(authors),
        keys=work_keys(paper),
        references=_works(paper.get("references")),
        citers=_works(paper.get("citations")),
    )


def parse_response(status: int, body: bytes) -> WorkRecord | None:
    return parse_json_work(status, body, "Semantic Scholar", parse_paper)


def paper_path(arxiv_id: str, doi: str | None) -> str:
    return f"/paper/arXiv:{arxiv_id}"
