"""What the paper page and the API show of the citation graph (the counts, and the first few
references and citing papers in this index), and the API's graph and similar-text shapes as
msgspec Structs (declared once: they decode requests and give the OpenAPI schemas)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import msgspec

from papersift.core.paper import Paper
from papersift.engine.graph import GraphCounts
from papersift.engine.results import Hit, SearchRequest, SearchResult
from papersift.server.context import AppContext
from papersift.server.export_routes import export_links
from papersift.server.params import MAX_FILTER_VALUES, MAX_RESEARCHER_LENGTH, search_url
from papersift.server.schemas import PaperGraph
from papersift.server.search_openapi import DATE_PATTERN

GRAPH_QUERY = {"references": "citedby", "citations": "cites"}  # list -> search field
FIRST = 5  # papers of each list on the paper page


_Value = Annotated[str, msgspec.Meta(max_length=MAX_RESEARCHER_LENGTH)]
_Values = Annotated[list[_Value], msgspec.Meta(max_length=MAX_FILTER_VALUES)]
_Date = Annotated[str, msgspec.Meta(pattern=DATE_PATTERN)]


class SimilarRequest(msgspec.Struct, forbid_unknown_fields=True):
    """The body of ``POST /api/v1/similar``: the text and the search filters."""

    text: Annotated[str, msgspec.Meta(min_length=1)]  # maxLength: [search] max_text_length
    page: Annotated[int, msgspec.Meta(ge=1)] = 1
    page_size: Annotated[int, msgspec.Meta(ge=1)] | None = None  # maximum: max_page_size
    category: _Values = []
    researcher: _Values = []
    from_: _Date = msgspec.field(default="", name="from")
    to: _Date = ""


def paper_graph(counts: GraphCounts, arxiv_id: str, root: str) -> PaperGraph:
    base = f"{root}/api/v1/papers/{arxiv_id}"
    return PaperGraph(
        counts.references, counts.references_here, counts.citations_here,
        f"{base}/references", f"{base}/citations",
    )  # fmt: skip


def graph_query(paper: Paper, which: str, query: str = "") -> str:
    """The search that lists the papers this one cites (or that cite it)."""
    return f"{GRAPH_QUERY[which]}:{paper.arxiv_id} {query}".strip()


@dataclass(frozen=True, slots=True)
class GraphSection:
    """One list on the paper page: its first papers, how many there are, the full list."""

    hits: tuple[Hit, ...]
    total: int
    url: str  # the search page of the whole list
    exports: list[tuple[str, str]]  # (format label, export URL) of the whole list


@dataclass(frozen=True, slots=True)
class PaperGraphView:
    counts: GraphCounts
    references: GraphSection | None  # None: no reference in this index
    citations: GraphSection | None


async def paper_graph_view(c: AppContext, paper: Paper) -> PaperGraphView | None:
    """The graph sections of a paper page; None when enrichment gave it no edges (the
    page then has no such section at all)."""
    counts = await c.call(c.engine.paper_graph, paper.arxiv_id)
    if counts is None or counts.empty:
        return None
    sections: dict[str, GraphSection | None] = {}
    for which, n in (("references", counts.references_here), ("citations", counts.citations_here)):
        if not n:
            sections[which] = None
            continue
        req = SearchRequest(query=graph_query(paper, which), sort="newest", page_size=FIRST)
        result: SearchResult = await c.call(c.engine.search, req)
        url = search_url(req, page_size=None)
        sections[which] = GraphSection(result.hits, result.total, url, export_links(req))
    return PaperGraphView(counts, sections["references"], sections["citations"])
