"""A query that names one paper: its arXiv id (bare, ``arXiv:``-prefixed or a URL) or its
DOI (bare, ``doi:``-prefixed or a doi.org URL). The answer is that paper alone, which the
search page opens, or an empty one that says the paper is not in this index. A list of
identifiers is ``engine.id_list``'s.

A user review pasted the DOI a paper page shows: as words it matched 309 unrelated papers.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Literal

from papersift.core.paper import Paper, arxiv_doi_suffix, clean_doi
from papersift.engine.catalog import Catalog
from papersift.engine.hits import snippets
from papersift.engine.query import arxiv_id_in
from papersift.engine.results import FacetCount, Hit, Mode, SearchRequest, SearchResult

# Crossref's pattern for modern DOIs (10.prefix/suffix), once ``clean_doi`` has read the
# forms people paste (doi.org URLs, ``doi:``).
_DOI = re.compile(r"10\.\d{4,9}/\S+")


def doi_in(query: str) -> str | None:
    """The DOI if the whole query is one, lowercased (DOIs ignore case)."""
    doi = (clean_doi(query) or "").rstrip(".")
    return doi if _DOI.fullmatch(doi) else None


@dataclass(frozen=True, slots=True)
class PaperId:
    """A paper's identifier as a query names it: an arXiv id (without version) or a DOI
    (lowercased)."""

    kind: Literal["arxiv", "doi"]
    value: str

    def docid(self, catalog: Catalog) -> int | None:
        """The paper's docid in this index, if it holds the paper."""
        store = catalog.data.store
        return (
            store.docid_of(self.value) if self.kind == "arxiv" else store.docid_of_doi(self.value)
        )

    def missing(self) -> str:
        """How a note names it when this index does not hold the paper, with its link."""
        if self.kind == "arxiv":
            return f"arXiv:{self.value} (https://arxiv.org/abs/{self.value})"
        return f"doi:{self.value} (https://doi.org/{self.value})"


def paper_id_in(text: str) -> PaperId | None:
    """The identifier if the whole of ``text`` is one (any of the forms above)."""
    doi = doi_in(text)
    # arXiv's own DOIs (10.48550/arXiv.2401.10241) name the paper by its id.
    arxiv_id = arxiv_id_in((doi and arxiv_doi_suffix(doi)) or text)
    if arxiv_id is not None:
        return PaperId("arxiv", arxiv_id)
    return PaperId("doi", doi) if doi is not None else None


def direct_answer(
    catalog: Catalog, request: SearchRequest, mode: Mode, size: int, start: float
) -> SearchResult | None:
    """The answer to a query that names one paper, or None when it names none."""
    named = paper_id_in(request.query)
    if named is None:
        return None
    docid = named.docid(catalog)
    found = catalog.data.store.get([docid]) if docid is not None else {}
    if docid in found:
        return direct_result(request, mode, found[docid], size, start)
    if named.kind == "arxiv":
        warning = f"arXiv:{named.value} is not in this index (https://arxiv.org/abs/{named.value})"
        return missing_result(request, mode, warning, size, start, named.value)
    doi = named.value
    warning = f"no paper in this index has the DOI {doi} (https://doi.org/{doi})"
    return missing_result(request, mode, warning, size, start)


def direct_result(
    request: SearchRequest, mode: Mode, paper: Paper, size: int, start: float
) -> SearchResult:
    """The answer to a query that names one paper: that paper alone."""
    title, abstract = snippets(paper, None)
    hit = Hit(paper, 1.0, title, abstract, {})
    facets = {
        "categories": tuple(FacetCount(c, 1) for c in paper.categories),
        "years": (FacetCount(str(paper.published.year), 1),),
    }
    took_ms = (time.perf_counter() - start) * 1000
    page = (hit,) if request.page == 1 else ()
    return SearchResult(request, mode, page, 1, request.page, size, facets, (), paper, took_ms)


def missing_result(
    request: SearchRequest, mode: Mode, warning: str, size: int, start: float,
    arxiv_id: str | None = None,
) -> SearchResult:  # fmt: skip
    """The answer to a query that names a paper this index does not hold: nothing, said so
    (``arxiv_id``: the id it named, if it was one)."""
    took_ms = (time.perf_counter() - start) * 1000
    facets: dict[str, tuple[FacetCount, ...]] = {"categories": (), "years": ()}
    return SearchResult(
        request, mode, (), 0, request.page, size, facets, (warning,), None, took_ms,
        missing_id=arxiv_id,
    )  # fmt: skip
