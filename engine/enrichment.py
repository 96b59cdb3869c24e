"""Enrichment that belongs to a paper rather than to one of its versions.

A new arXiv version arrives from a snapshot or a harvest without citation counts, author
ids or affiliations; those come from OpenAlex and Semantic Scholar runs. The store keeps
them across versions (``carry_enrichment``) so a researcher's ORCID-anchored identity or the
most-cited sort do not flicker until the next enrichment run.
"""

from __future__ import annotations

import json
from dataclasses import replace

from papersift.core.paper import Author, Paper

# Paper.extra key written by enrichment: JSON [[author position, bare ROR id, name], ...].
AFFILIATIONS_KEY = "affiliations"


def carry_enrichment(old: Paper, new: Paper) -> Paper:
    """``new`` with ``old``'s enrichment wherever ``new`` has none of its own. Author ids
    and affiliations follow the authors by normalised key, so a version that reorders,
    adds or drops authors keeps each remaining author's data and loses a dropped one's."""
    if old.citation_count is None and not old.extra and not any(a.ids for a in old.authors):
        return new
    position: dict[str, int] = {}
    for i, a in enumerate(new.authors):
        position.setdefault(a.key, i)
    old_ids = {a.key: a.ids for a in old.authors if a.ids}
    authors = tuple(
        a if a.ids or a.key not in old_ids else Author(a.name, a.key, old_ids[a.key])
        for a in new.authors
    )
    extra = dict(new.extra)
    for key, value in old.extra:
        if key in extra:
            continue
        if key == AFFILIATIONS_KEY:
            moved = _moved_affiliations(value, old.authors, position)
            if moved:
                extra[key] = moved
        else:
            extra[key] = value
    return replace(
        new,
        authors=authors,
        citation_count=old.citation_count if new.citation_count is None else new.citation_count,
        extra=tuple(sorted(extra.items())),
    )


def _moved_affiliations(raw: str, old_authors: tuple[Author, ...], position: dict[str, int]) -> str:
    rows = []
    for pos, ror, name in json.loads(raw):
        p = int(pos)
        if p < len(old_authors) and old_authors[p].key in position:
            rows.append([position[old_authors[p].key], ror, name])
    return json.dumps(sorted(rows), ensure_ascii=False) if rows else ""
