"""The page's hits: ranked docids turned into papers from the store with HTML-escaped
title and abstract snippets, the query's terms highlighted by Tantivy."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

import tantivy

from engine.datadir import DataDir
from engine.results import Hit
from papersift.paper import Paper

ABSTRACT_SNIPPET = 300  # characters of abstract shown when there is no query to highlight


def make_hits(
    data: DataDir,
    ranked: Sequence[tuple[int, float]],
    q: tantivy.Query | None,
    fixed_ranks: dict[str, int],
    *,
    keyword_ranks: dict[int, int] | None = None,
    semantic_ranks: dict[int, int] | None = None,
) -> list[Hit]:
    """One hit per ranked docid still in the store, with each retriever's rank."""
    papers = data.store.get([d for d, _ in ranked])
    gens = data.lexical.snippet_generators(q) if q is not None else None
    hits = []
    for docid, score in ranked:
        paper = papers.get(docid)
        if paper is None:  # deleted between the index read and now
            continue
        ranks = dict(fixed_ranks)
        if keyword_ranks and docid in keyword_ranks:
            ranks["keyword"] = keyword_ranks[docid]
        if semantic_ranks and docid in semantic_ranks:
            ranks["semantic"] = semantic_ranks[docid]
        title_html, abstract_html = snippets(paper, gens)
        score = score if math.isfinite(score) else 0.0
        hits.append(Hit(paper, float(score), title_html, abstract_html, ranks))
    return hits


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
