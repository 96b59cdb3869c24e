"""The page's hits: ranked docids turned into papers from the store with HTML-escaped
title and abstract snippets, the query's terms highlighted by Tantivy; and the answer to a
query that names one paper."""

from __future__ import annotations

import html
import math
import time
from collections.abc import Mapping, Sequence

import tantivy

from papersift.core.paper import Paper
from papersift.engine.datadir import DataDir
from papersift.engine.results import FacetCount, Hit, Mode, SearchRequest, SearchResult
from papersift.engine.why import Evidence, explain

ABSTRACT_SNIPPET = 300  # characters of abstract shown when there is no query to highlight


def make_hits(
    data: DataDir,
    ranked: Sequence[tuple[int, float]],
    q: tantivy.Query | None,
    fixed_ranks: dict[str, int],
    ranks_by: Mapping[str, Mapping[int, int]] | None = None,
    evidence: Evidence | None = None,
) -> list[Hit]:
    """One hit per ranked docid still in the store, with its rank in each list of
    ``ranks_by`` (retriever name -> docid -> 1-based rank) that holds it, and why it is
    there when the search gave its ``evidence`` (``engine.why``)."""
    papers = data.store.get([d for d, _ in ranked])
    gens = data.lexical.snippet_generators(q) if q is not None else None
    hits = []
    for docid, score in ranked:
        paper = papers.get(docid)
        if paper is None:  # deleted between the index read and now
            continue
        ranks = dict(fixed_ranks)
        for name, rank_of in (ranks_by or {}).items():
            if docid in rank_of:
                ranks[name] = rank_of[docid]
        title_html, abstract_html = snippets(paper, gens)
        score = score if math.isfinite(score) else 0.0
        why = explain(evidence, paper, ranks) if evidence is not None else None
        hits.append(Hit(paper, float(score), title_html, abstract_html, ranks, why))
    return hits


def direct_result(
    request: SearchRequest, mode: Mode, paper: Paper, size: int, start: float
) -> SearchResult:
    """The answer to a query that is one paper's arXiv id: that paper alone."""
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
    request: SearchRequest, mode: Mode, arxiv_id: str, size: int, start: float
) -> SearchResult:
    """The answer to a query that is an arXiv id this index does not hold: nothing, said so."""
    took_ms = (time.perf_counter() - start) * 1000
    warning = f"arXiv:{arxiv_id} is not in this index (https://arxiv.org/abs/{arxiv_id})"
    facets: dict[str, tuple[FacetCount, ...]] = {"categories": (), "years": ()}
    return SearchResult(
        request, mode, (), 0, request.page, size, facets, (warning,), None, took_ms,
        missing_id=arxiv_id,
    )  # fmt: skip


def snippets(
    paper: Paper, gens: tuple[tantivy.SnippetGenerator, tantivy.SnippetGenerator] | None
) -> tuple[str, str]:
    """HTML-escaped title and abstract snippet, query terms in <b> when there is a query."""
    plain = paper.abstract
    if len(plain) > ABSTRACT_SNIPPET:
        plain = plain[:ABSTRACT_SNIPPET].rsplit(" ", 1)[0] + " …"
    if gens is None:
        return html.escape(paper.title), html.escape(plain)
    title = gens[0].snippet_from_doc(tantivy.Document(ti=paper.title)).to_html()
    abstract = gens[1].snippet_from_doc(tantivy.Document(abs=paper.abstract)).to_html()
    return title or html.escape(paper.title), abstract or html.escape(plain)
