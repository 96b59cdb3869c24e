"""A paper's neighbourhood, for the graph on its page: the papers here closest to it by
bibliographic coupling (reference works both list) and co-citation (works citing both),
topped up with the papers nearest in meaning when the citation graph gives few.

Each relation is counted two ways and the larger count kept, so that a work is never
counted twice: by the identifiers the sources gave (``Graph.shared_links``, which also sees
works outside this index) and through the papers here (the references and citers
``Graph.references`` / ``Graph.citations`` resolve, whichever direction recorded the edge).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from papersift.core.paper import Paper
from papersift.engine.datadir import DataDir

MAX_NODES = 12  # neighbours drawn
FILL_TO = 8  # fewer from the citation graph than this: topped up by meaning
WALK = 200  # references or citers followed, works compared (bounds a request's work)
FANOUT = 500  # a work more papers here link to is a hub: it relates a paper to everything


@dataclass(frozen=True, slots=True)
class Neighbour:
    paper: Paper
    coupling: int  # reference works it shares with the paper
    cocited: int  # works citing both
    similarity: float | None  # cosine of the two papers' vectors; None without both

    @property
    def by_graph(self) -> bool:
        return bool(self.coupling or self.cocited)


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    paper: Paper
    neighbours: tuple[Neighbour, ...]  # the citation graph's first (strongest first)

    @property
    def by_graph(self) -> int:
        return sum(n.by_graph for n in self.neighbours)

    @property
    def by_meaning(self) -> int:
        return len(self.neighbours) - self.by_graph


def _through_index(data: DataDir, docid: int, fanout: int) -> tuple[Counter[int], Counter[int]]:
    """Coupling and co-citation counted through the papers here (hubs skipped)."""
    graph = data.graph
    coupling: Counter[int] = Counter()
    for ref in graph.references(docid, WALK)[:WALK]:
        citers = graph.citations(ref, fanout)
        if len(citers) <= fanout:
            coupling.update(d for d in citers if d != docid)
    cocited: Counter[int] = Counter()
    for citer in graph.citations(docid, WALK)[:WALK]:
        refs = graph.references(citer, fanout)
        if len(refs) <= fanout:
            cocited.update(d for d in refs if d != docid)
    return coupling, cocited


def graph_neighbours(data: DataDir, docid: int, fanout: int = FANOUT) -> dict[int, tuple[int, int]]:
    """docid -> (coupling, co-citation) of every paper here related to ``docid`` so; a
    work more than ``fanout`` papers here link to counts for none (``FANOUT``)."""
    coupling, cocited = _through_index(data, docid, fanout)
    graph = data.graph
    by_keys = (
        graph.shared_links(docid, "ref", fanout, WALK),
        graph.shared_links(docid, "citer", fanout, WALK),
    )
    out: dict[int, tuple[int, int]] = {}
    for d in set(coupling) | set(cocited) | set(by_keys[0]) | set(by_keys[1]):
        out[d] = (
            max(coupling[d], by_keys[0].get(d, 0)),
            max(cocited[d], by_keys[1].get(d, 0)),
        )
    return out


def neighbourhood(data: DataDir, docid: int, nodes: int = MAX_NODES) -> Neighbourhood | None:
    """The paper's closest papers, at most ``nodes``: strongest coupling plus co-citation
    first (ties: the nearer in meaning, then the more cited); when the graph gives some but
    fewer than ``FILL_TO``, the nearest by cosine fill up to that (none at all: no
    neighbourhood, as the page's similar papers already list those). None for an unknown
    docid."""
    paper = data.store.get([docid]).get(docid)
    if paper is None:
        return None
    related = graph_neighbours(data, docid)
    vec = data.vectors.vector(docid) if data.vectors.size else None

    def cosine(d: int) -> float | None:
        other = data.vectors.vector(d) if vec is not None else None
        return None if other is None or vec is None else float(np.dot(vec, other))

    sims = {d: cosine(d) for d in related}
    papers = data.store.get(list(related))
    order = sorted(
        (d for d in related if d in papers),
        key=lambda d: (-sum(related[d]), -(sims[d] or -1.0), -(papers[d].citation_count or 0), d),
    )[:nodes]
    chosen = [Neighbour(papers[d], *related[d], sims[d]) for d in order]
    want = min(nodes, FILL_TO) - len(chosen)
    if chosen and want > 0 and vec is not None:  # none: the similar-papers list says it
        taken = {docid, *order}
        near = [(d, s) for d, s in data.vectors.search(vec, want + len(taken)) if d not in taken]
        more = data.store.get([d for d, _ in near[:want]])
        chosen += [Neighbour(more[d], 0, 0, s) for d, s in near[:want] if d in more]
    return Neighbourhood(paper, tuple(chosen))
