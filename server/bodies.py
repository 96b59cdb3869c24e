"""The JSON API's response bodies built from the engine's results: the Structs of
``server.schemas`` filled in field order (positional: a Struct of 17 fields builds ~5x
faster so than by keyword), with each paper's links on this site and on arXiv."""

from __future__ import annotations

from collections.abc import Mapping

from papersift.core import paper as core
from papersift.core.taxonomy import category_name
from papersift.core.urls import arxiv_abs, arxiv_pdf, category_path, paper_path, researcher_url
from papersift.engine import results
from papersift.engine.serialize import facets, number, why_body
from papersift.server.schemas import (
    Author,
    CategoriesResponse,
    Category,
    Error,
    ErrorDetail,
    FacetNames,
    Hit,
    NamedFacetCount,
    Paper,
    ResearcherMatch,
    SearchEcho,
    SearchFacets,
    SearchResponse,
)


def error_body(status: int, code: str, message: str, parameter: str | None = None) -> Error:
    return Error(ErrorDetail(status, code, message, parameter or None))


def paper_body(p: core.Paper, root: str) -> Paper:
    """A paper with its author ids and its links on this site and on arXiv."""
    # Positional, in field order: a Struct of 17 fields builds ~5x faster so than by keyword
    # (bench/serialize_bench.py checks the bytes against the old dict form).
    return Paper(
        p.arxiv_id,
        p.version,
        p.title,
        p.abstract,
        [Author(a.name, dict(a.ids)) for a in p.authors],
        list(p.categories),
        p.published,
        p.updated,
        p.doi,
        p.journal_ref,
        p.comments,
        p.license,
        p.citation_count,
        p.primary_category,
        root + paper_path(p),
        arxiv_abs(p.arxiv_id),
        arxiv_pdf(p.arxiv_id),
    )


def hit_body(h: results.Hit, root: str) -> Hit:
    why = why_body(h.why) if h.why is not None else None
    return Hit(
        paper_body(h.paper, root), number(h.score), h.title_html, h.abstract_html, dict(h.ranks),
        why,
    )  # fmt: skip


def search_facets(
    counted: Mapping[str, tuple[results.FacetCount, ...]], names: FacetNames,
    window: int | None = None,
) -> SearchFacets:  # fmt: skip
    """The four facets, the id-valued ones with the names ``names`` has for their values;
    ``window``: how many first results the id-valued ones counted (None: all)."""

    def named(facet: str) -> list[NamedFacetCount]:
        known = names.get(facet, {})
        return [
            NamedFacetCount(f.value, f.count, known.get(f.value)) for f in counted.get(facet, ())
        ]

    return SearchFacets(
        facets(counted.get("categories", ())),
        facets(counted.get("years", ())),
        named("researchers"),
        named("institutions"),
        window,
    )


def search_body(
    result: results.SearchResult, root: str, next_url: str | None, names: FacetNames
) -> SearchResponse:
    """``names``: the names of the id-valued facets' values (``server.api.facet_names``)."""
    req = result.request
    f = req.filters
    return SearchResponse(
        request=SearchEcho(
            q=req.query,
            mode=req.mode,
            sort=req.sort,
            page=req.page,
            page_size=result.page_size,
            category=list(f.categories),
            researcher=list(f.researchers),
            researcher_id=list(f.researcher_ids),
            institution=list(f.institutions),
            date_from=f.date_from,
            date_to=f.date_to,
            autocorrect=req.autocorrect,
        ),
        mode=result.mode,
        total=result.total,
        page=result.page,
        page_size=result.page_size,
        pages=result.pages,
        reachable=min(result.total, result.pages * result.page_size),
        took_ms=number(result.took_ms),
        warnings=list(result.warnings),
        suggestion=result.suggestion,
        corrected=result.corrected,
        direct=paper_body(result.direct, root) if result.direct else None,
        missing_id=result.missing_id,
        researchers=[
            ResearcherMatch(r.rid, r.name, r.papers, root + researcher_url(r.rid, r.name))
            for r in result.researchers
        ],
        facets=search_facets(result.facets, names, result.facet_window),
        hits=[hit_body(h, root) for h in result.hits],
        next=next_url,
    )


def categories_body(stats: results.Stats, root: str) -> CategoriesResponse:
    return CategoriesResponse(
        [
            Category(fc.value, category_name(fc.value), fc.count, root + category_path(fc.value))
            for fc in stats.categories
        ]
    )
