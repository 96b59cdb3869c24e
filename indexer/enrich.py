"""Enrichment: fold OpenAlex / Semantic Scholar work records into our papers.

A work is matched to a paper by arXiv id, else by DOI. Its authors are matched to the
paper's authors by position when the name agrees, else by a unique compatible name, and
never two to one. Matched authors gain external ids (ORCID, OpenAlex, Semantic Scholar;
an id of a source the author already has is kept, not overwritten) and institutions with
ROR ids; the paper gains its citation count (the larger of the sources). Writes go through
the store's upsert, so changed papers bump the change sequence and the lexical index and
researcher identities re-sync (which also refreshes the ``affiliations`` table: paper,
author position, ROR id). A record's references (and citers) replace what that source said
before in the citation graph (``engine.graph``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from papersift.core.authors import normalise_name
from papersift.core.names import compatible, split_name
from papersift.core.paper import Author, Paper, clean_doi
from papersift.core.records import RecordError, checked
from papersift.core.wording import counted
from papersift.engine.affiliation_match import matcher
from papersift.engine.enrichment import AFFILIATIONS_KEY
from papersift.engine.graph import Graph, Key, WorkLinks
from papersift.engine.institutions import Institutions
from papersift.engine.ror_match import Match
from papersift.engine.store import PaperStore

ID_SOURCES = ("orcid", "openalex", "s2")


@dataclass(frozen=True, slots=True)
class WorkAuthor:
    name: str
    position: str  # "first", "middle", "last" or "" when the source does not say
    ids: tuple[tuple[str, str], ...] = ()
    institutions: tuple[tuple[str, str], ...] = ()  # (bare ROR id, name)
    raw_affiliations: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class WorkRecord:
    """One work as a source describes it, reduced to what we enrich with."""

    source: str  # "openalex" or "s2"
    work_id: str
    arxiv_id: str | None
    doi: str | None  # lower case, no resolver prefix
    citation_count: int | None
    authors: tuple[WorkAuthor, ...] = ()
    keys: tuple[Key, ...] = ()  # the work's own identifiers (engine.graph)
    references: tuple[tuple[Key, ...], ...] | None = None  # None: the source did not say
    citers: tuple[tuple[Key, ...], ...] | None = None  # works citing it, where listed


@dataclass
class EnrichReport:
    records: int = 0
    matched: int = 0  # records that found their paper
    unmatched: list[str] = field(default_factory=list)  # work ids
    updated: int = 0  # papers whose record changed
    authors_matched: int = 0
    ids_added: int = 0
    id_conflicts: int = 0  # a source gave an id different from one we had: kept ours
    affiliations: int = 0  # (author, ROR id) pairs on enriched papers
    affiliations_matched: int = 0  # of which our ROR matcher found from raw strings
    graph_updated: int = 0  # papers whose references or citers changed
    skipped: list[str] = field(default_factory=list)  # "<id>: <field>: <reason>", not stored
    not_found: int = 0  # answers (online) saying a source does not know the paper: 404
    warnings: list[str] = field(default_factory=list)  # e.g. a source that found nothing

    def line(self) -> str:
        return (
            f"{counted(self.records, 'record')}, {self.matched:,} matched a paper, "
            f"{counted(self.updated, 'paper')} updated; {counted(self.authors_matched, 'author')} "
            f"matched, {counted(self.ids_added, 'id')} added, "
            f"{counted(self.affiliations, 'affiliation')} ({self.affiliations_matched:,} matched "
            "from raw affiliation strings)"
        )

    def as_json(self) -> dict[str, object]:
        return {
            "records": self.records, "matched": self.matched, "unmatched": self.unmatched,
            "updated": self.updated, "authors_matched": self.authors_matched,
            "ids_added": self.ids_added, "id_conflicts": self.id_conflicts,
            "affiliations": self.affiliations, "skipped": self.skipped,
            "affiliations_matched": self.affiliations_matched,
            "graph_updated": self.graph_updated, "not_found": self.not_found,
            "warnings": self.warnings,
        }  # fmt: skip


def match_authors(ours: Sequence[Author], theirs: Sequence[WorkAuthor]) -> dict[int, int]:
    """Our author index -> their author index: by position when the names are compatible,
    then by the only compatible name left; unsure pairs stay unmatched."""
    key = [split_name(a.key) for a in ours]
    other = [split_name(normalise_name(w.name)) for w in theirs]
    pairs: dict[int, int] = {}
    if len(ours) == len(theirs):
        for i in range(len(ours)):
            if compatible(key[i], other[i]):
                pairs[i] = i
    fits = {
        (i, j)
        for i in range(len(ours)) if i not in pairs
        for j in range(len(theirs)) if j not in pairs.values()
        if compatible(key[i], other[j])
    }  # fmt: skip
    for i, j in sorted(fits):  # a pair only when neither side has another candidate
        if sum(a == i for a, _ in fits) == 1 and sum(b == j for _, b in fits) == 1:
            pairs[i] = j
    return pairs


def _merge_ids(
    have: tuple[tuple[str, str], ...], new: Iterable[tuple[str, str]], report: EnrichReport
) -> tuple[tuple[str, str], ...]:
    out = list(have)
    sources = {s: v for s, v in have}
    for s, v in new:
        if s not in ID_SOURCES or not v:
            continue
        if s in sources:
            report.id_conflicts += sources[s] != v
            continue
        out.append((s, v))
        sources[s] = v
        report.ids_added += 1
    return tuple(out)


Matcher = Callable[[str], Match | None]


def enrich_paper(
    paper: Paper,
    records: Sequence[WorkRecord],
    report: EnrichReport,
    match: Matcher | None = None,
) -> Paper:
    """The paper with what these records (all of this paper) add; ``match`` turns an
    author's raw affiliation strings that the source tied to no institution into ROR ids."""
    authors = list(paper.authors)
    extra = dict(paper.extra)
    affs: dict[tuple[int, str], str] = {
        (int(p), r): n for p, r, n in json.loads(extra.get(AFFILIATIONS_KEY, "[]"))
    }
    cited = paper.citation_count
    for rec in records:
        if rec.citation_count is not None:
            cited = rec.citation_count if cited is None else max(cited, rec.citation_count)
        for i, j in match_authors(authors, rec.authors).items():
            report.authors_matched += 1
            w = rec.authors[j]
            authors[i] = replace(authors[i], ids=_merge_ids(authors[i].ids, w.ids, report))
            for ror_id, name in w.institutions:
                affs.setdefault((i, ror_id), name)
            for found in map(match, w.raw_affiliations) if match is not None else ():
                if found is not None and (i, found.ror_id) not in affs:
                    affs[(i, found.ror_id)] = found.name
                    report.affiliations_matched += 1
    if affs:
        rows = sorted([p, r, n] for (p, r), n in affs.items())
        extra[AFFILIATIONS_KEY] = json.dumps(rows, ensure_ascii=False)
    report.affiliations += len(affs)
    return replace(
        paper, authors=tuple(authors), citation_count=cited, extra=tuple(sorted(extra.items()))
    )


def _find(store: PaperStore, records: Sequence[WorkRecord]) -> dict[int, list[WorkRecord]]:
    """docid -> the records of that paper, matched by arXiv id, else DOI."""
    found: dict[int, list[WorkRecord]] = {}
    dois = {r.doi for r in records if r.doi}
    by_doi: dict[str, int] = {}
    if dois:
        for known, doi in store.dois():
            d = clean_doi(doi)
            if d is not None and d in dois:
                by_doi[d] = known
    for r in records:
        docid = store.docid_of(r.arxiv_id) if r.arxiv_id else None
        if docid is None and r.doi:
            docid = by_doi.get(r.doi)
        if docid is not None:
            found.setdefault(docid, []).append(r)
    return found


def _matcher(store: PaperStore, records: Sequence[WorkRecord]) -> Matcher | None:
    """The stored registry's matcher, when some author has raw strings to match (built or
    rebuilt only then) and a registry has been imported."""
    if not any(a.raw_affiliations for r in records for a in r.authors):
        return None
    registry = Institutions(store)
    if registry.count() == 0:
        return None
    return matcher(registry).match


def apply_records(
    store: PaperStore, records: Iterable[WorkRecord], graph: Graph | None = None
) -> EnrichReport:
    """Fold the records into the store (one upsert) and their references into ``graph``
    (default: the store's); the caller re-syncs the indexes."""
    recs = list(records)
    report = EnrichReport(records=len(recs))
    found = _find(store, recs)
    matched = {id(r) for rs in found.values() for r in rs}
    report.matched = len(matched)
    report.unmatched = [r.work_id for r in recs if id(r) not in matched]
    papers = store.get(sorted(found))
    match = _matcher(store, [r for rs in found.values() for r in rs])
    new: list[Paper] = []
    for d in sorted(found):
        if d in papers:
            try:  # a source's text or counts out of bounds skip that paper's enrichment
                new.append(checked(enrich_paper(papers[d], found[d], report, match)))
            except RecordError as exc:
                report.skipped.append(str(exc))
    counts, _ = store.upsert(new)
    report.updated = counts.updated
    graph = graph if graph is not None else Graph(store)
    for d in sorted(found):
        links = [WorkLinks(r.source, r.keys, r.references, r.citers) for r in found[d]]
        report.graph_updated += graph.replace(d, links)
    return report
