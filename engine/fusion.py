"""Fusing two ranked lists into one: reciprocal-rank fusion and normalised convex combination.

Pure functions over (id, score) lists, best first; the result is the union of both lists,
best first, with ties broken by id so the order is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence

Ranked = Sequence[tuple[int, float]]


def rrf(keyword: Ranked, semantic: Ranked, k: int = 60) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion (Cormack et al. 2009): score = sum of 1 / (k + rank)."""
    scores: dict[int, float] = {}
    for ranked in (keyword, semantic):
        for rank, (doc, _) in enumerate(ranked, start=1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


def _minmax(ranked: Ranked) -> dict[int, float]:
    if not ranked:
        return {}
    values = [s for _, s in ranked]
    lo, hi = min(values), max(values)
    if hi <= lo:
        return {doc: 1.0 for doc, _ in ranked}
    return {doc: (s - lo) / (hi - lo) for doc, s in ranked}


def convex(keyword: Ranked, semantic: Ranked, weight: float = 0.4) -> list[tuple[int, float]]:
    """``weight * semantic + (1 - weight) * keyword`` on min-max normalised scores.

    A document missing from one list gets 0 from that side (it scored at or below that
    list's minimum).
    """
    kw, sem = _minmax(keyword), _minmax(semantic)
    scores = {
        doc: (1.0 - weight) * kw.get(doc, 0.0) + weight * sem.get(doc, 0.0)
        for doc in kw.keys() | sem.keys()
    }
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
