"""A query that is a list of paper identifiers: two or more arXiv ids or DOIs, each in a
form one of them alone is read in (``engine.direct``), separated by spaces, commas,
semicolons or lines. The answer lists the papers this index holds, in the order given (or
the request's sort), each once, and a note names the ids it does not hold. One word that is
no identifier makes it an ordinary search.

Someone pasting the ids of a reading list or a bibliography got nothing useful before: as
words they matched nothing, or noise.

The request's filters apply, as to any search; a note says how many listed papers they
hide, so that a filter left on does not look like missing papers.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from typing import TYPE_CHECKING

from papersift.core.paper import Paper
from papersift.engine.direct import PaperId, paper_id_in
from papersift.engine.hits import snippets
from papersift.engine.plan import canonical_filters, filter_query
from papersift.engine.results import FacetCount, Hit, Mode, SearchRequest, SearchResult, Sort

if TYPE_CHECKING:
    from papersift.engine.search import SearchEngine

# Ids looked up at most (the largest page size a request may ask for, by default): past it a
# note says the rest were left out.
MAX_IDS = 100
# What separates the ids; a DOI may hold a comma or a semicolon (10.1002/(SICI)...;2-X),
# so a piece that splits into non-ids is read whole.
_SPACES = re.compile(r"\s+")
_PUNCTUATION = re.compile(r"[,;]+")
# "doi: 10.1234/x" and "arXiv: 2401.10241", as a single id may be written.
_PREFIX_SPACE = re.compile(r"\b(doi|arxiv):\s+", re.IGNORECASE)
FACET_SIZE = 30  # categories counted, as the other lists count them


def ids_in(query: str) -> list[PaperId] | None:
    """The identifiers, in order and each once, if ``query`` is two or more of them and
    nothing else; else None."""
    named: list[PaperId] = []
    for chunk in _SPACES.split(_PREFIX_SPACE.sub(r"\1:", query.strip())):
        pieces = [p for p in _PUNCTUATION.split(chunk) if p]
        ids = [paper_id_in(p) for p in pieces]
        if not all(ids):
            whole = paper_id_in(chunk.strip(",;"))
            if whole is None:
                return None
            ids = [whole]
        named.extend(i for i in ids if i is not None)
    return list(dict.fromkeys(named)) if len(named) >= 2 else None


def id_list_answer(
    engine: SearchEngine, request: SearchRequest, mode: Mode, size: int, start: float
) -> SearchResult | None:
    """The answer to a query that lists papers by identifier, or None when it is not such
    a list."""
    named = ids_in(request.query)
    if named is None:
        return None
    notes: list[str] = []
    if len(named) > MAX_IDS:
        notes.append(f"the query names {len(named):,} ids: only the first {MAX_IDS} are looked up")
        named = named[:MAX_IDS]
    docids: dict[int, None] = {}  # in the order given; an id and its DOI name one paper
    missing: list[PaperId] = []
    for pid in named:
        docid = pid.docid(engine)
        if docid is None:
            missing.append(pid)
        else:
            docids[docid] = None
    if missing:
        notes.append(
            f"{len(missing)} of {len(named)} ids {'is' if len(missing) == 1 else 'are'} not in "
            "this index: " + ", ".join(pid.missing() for pid in missing)
        )
    found = engine.data.store.get(list(docids))
    listed = {d: found[d] for d in docids if d in found}
    shown, filter_notes = _filtered(engine, request, listed)
    papers = _sorted(engine, request.sort, shown, notes)
    offset = (request.page - 1) * size
    hits = tuple(Hit(p, 1.0, *snippets(p, None), {}) for p in papers[offset : offset + size])
    return SearchResult(
        request, mode, hits, len(papers), request.page, size, _facets(papers),
        tuple([*filter_notes, *notes]), took_ms=(time.perf_counter() - start) * 1000,
    )  # fmt: skip


def _filtered(
    engine: SearchEngine, request: SearchRequest, listed: dict[int, Paper]
) -> tuple[list[Paper], list[str]]:
    """The listed papers (by docid, in the order given) that the request's filters let
    through, and the notes on the filters: those an ordinary search gives, and how many
    listed papers they hide."""
    if request.filters.empty or not listed:
        return list(listed.values()), []
    filters, notes = canonical_filters(engine, request.filters)
    filt, unmatched = filter_query(engine, filters)
    notes = unmatched + notes
    if filt is None:
        return list(listed.values()), notes
    lex = engine.data.lexical
    passing, _ = lex.top(lex.combine(lex.docids_for(list(listed)), filt), len(listed))
    kept = set(passing)
    if hidden := len(listed) - len(kept):
        notes.append(f"the filters hide {hidden} of the {len(listed)} listed papers")
    return [p for d, p in listed.items() if d in kept], notes


def _sorted(engine: SearchEngine, sort: Sort, papers: list[Paper], notes: list[str]) -> list[Paper]:
    """The papers in the request's order: relevance is the order given; dates and citations
    as the index sorts them, ties in the order given (a note when no paper has a citation
    count, as an ordinary search gives)."""
    if sort == "relevance":
        return papers
    if sort == "cited":
        if not engine.data.lexical.has_citations():
            notes.append(
                "no paper has a citation count yet (`papersift enrich` adds them); "
                "listed in the order given"
            )
            return papers
        return sorted(papers, key=lambda p: -(p.citation_count or 0))
    return sorted(papers, key=lambda p: p.published.toordinal(), reverse=sort == "newest")


def _facets(papers: list[Paper]) -> dict[str, tuple[FacetCount, ...]]:
    """Categories (most papers first, then by name) and years (newest first) of the listed
    papers, as the other lists count them."""
    cats = Counter(c for p in papers for c in p.categories)
    years = Counter(p.published.year for p in papers)
    top = sorted(cats.items(), key=lambda kv: (-kv[1], kv[0]))[:FACET_SIZE]
    return {
        "categories": tuple(FacetCount(c, n) for c, n in top),
        "years": tuple(FacetCount(str(y), years[y]) for y in sorted(years, reverse=True)),
    }
