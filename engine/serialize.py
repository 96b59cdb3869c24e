"""Plain-JSON forms of papers, hits, results and stats, shared by the CLI and the JSON API."""

from __future__ import annotations

from typing import Any

from papersift.core.paper import Paper
from papersift.engine.results import FacetCount, Hit, SearchResult, Stats


def paper_json(p: Paper) -> dict[str, Any]:
    return {
        "id": p.arxiv_id,
        "version": p.version,
        "title": p.title,
        "abstract": p.abstract,
        "authors": [a.name for a in p.authors],
        "categories": list(p.categories),
        "published": p.published.isoformat(),
        "updated": p.updated.isoformat(),
        "doi": p.doi,
        "journal_ref": p.journal_ref,
        "comments": p.comments,
        "license": p.license,
        "citation_count": p.citation_count,
    }


def hit_json(h: Hit) -> dict[str, Any]:
    p = h.paper
    return {
        "id": p.arxiv_id,
        "title": p.title,
        "authors": [a.name for a in p.authors],
        "categories": list(p.categories),
        "published": p.published.isoformat(),
        "updated": p.updated.isoformat(),
        "score": round(h.score, 6),
        "ranks": h.ranks,
        "title_html": h.title_html,
        "snippet_html": h.abstract_html,
    }


def _facets(facets: dict[str, tuple[FacetCount, ...]]) -> dict[str, list[dict[str, Any]]]:
    return {k: [{"value": f.value, "count": f.count} for f in v] for k, v in facets.items()}


def result_json(r: SearchResult) -> dict[str, Any]:
    return {
        "query": r.request.query,
        "mode": r.mode,
        "sort": r.request.sort,
        "total": r.total,
        "page": r.page,
        "page_size": r.page_size,
        "pages": r.pages,
        "hits": [hit_json(h) for h in r.hits],
        "facets": _facets(r.facets),
        "warnings": list(r.warnings),
        "direct": r.direct.arxiv_id if r.direct else None,
        "missing_id": r.missing_id,
        "researchers": [{"id": x.rid, "name": x.name, "papers": x.papers} for x in r.researchers],
        "took_ms": round(r.took_ms, 3),
    }


def stats_json(s: Stats) -> dict[str, Any]:
    return {
        "papers": s.papers,
        "embedded": s.embedded,
        "coverage": round(s.coverage, 6),
        "researchers_pending": s.people_pending,
        "embedding": s.embedding.json() if s.embedding is not None else None,
        "model_id": s.model_id,
        "dimension": s.dimension,
        "oldest": s.oldest.isoformat() if s.oldest else None,
        "newest": s.newest.isoformat() if s.newest else None,
        "categories": [{"value": f.value, "count": f.count} for f in s.categories],
    }
