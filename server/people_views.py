"""Researcher links and view helpers shared by the researcher pages, search and paper pages."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from papersift.core.paper import Author, Paper
from papersift.core.urls import name_search_path, researcher_url
from papersift.engine.people import People
from papersift.engine.results import SearchResult
from papersift.server.params import with_filters
from papersift.server.views import FACET_LIMIT, Link


def author_links(people: People | None) -> Callable[[Paper], list[tuple[Author, str]]]:
    """The template global: each author of a paper with the URL of their researcher page
    (the name search until identities are computed for the paper)."""

    def links(paper: Paper) -> list[tuple[Author, str]]:
        rids = people.author_rids(paper.arxiv_id) if people is not None else []
        if len(rids) != len(paper.authors):
            return [(a, name_search_path(a.name)) for a in paper.authors]
        return [
            (a, researcher_url(r, a.name) if r is not None else name_search_path(a.name))
            for a, r in zip(paper.authors, rids, strict=True)
        ]

    return links


def researcher_names(people: People | None, rids: Iterable[int]) -> dict[int, str]:
    """The names of these researchers, in one batched read (an id no longer known is left
    out): the search page's facet and chips, and the API's researcher facet."""
    if people is None:
        return {}
    return {rid: r.name for rid, r in people.many(rids).items()}


def researcher_filters(people: People | None) -> Callable[[SearchResult], dict[str, Any]]:
    """The template global for the search page: researcher chips and facet links."""

    def build(result: SearchResult) -> dict[str, Any]:
        req = result.request
        chosen = req.filters.researcher_ids
        facet = result.facets.get("researchers", ())[:FACET_LIMIT]
        wanted = [*chosen, *(int(f.value) for f in facet)]
        names = researcher_names(people, wanted)

        def label(rid: int) -> str:
            return names.get(rid, f"#{rid}")

        chips = [
            Link(
                f"Researcher: {label(r)}",
                with_filters(req, researcher_ids=tuple(x for x in chosen if x != r)),
            )
            for r in chosen
        ]
        facets = []
        for f in facet:
            rid = int(f.value)
            active = rid in chosen
            ids = tuple(x for x in chosen if x != rid) if active else (*chosen, rid)
            facets.append(Link(label(rid), with_filters(req, researcher_ids=ids), active, f.count))
        return {"chips": chips, "facets": facets}

    return build
