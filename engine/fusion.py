"""Fusing two ranked lists into one: reciprocal-rank fusion and normalised convex combination.

Pure functions over rankings (``engine.ranking``), best first; the result is the union of
both lists, best first, with ties broken by id so the order is deterministic. The arithmetic
runs in numpy: with 1,000 candidates a side, the dict-and-sort version cost 2-4 ms of a
hybrid query's Python time at 663k papers. ``rrf`` and ``convex`` take and give
(id, score) lists for callers that hold those.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from papersift.engine.ranking import EMPTY, Ranking

Pairs = Sequence[tuple[int, float]]


def _combine(lists: tuple[Ranking, ...], parts: tuple[npt.NDArray[np.float64], ...]) -> Ranking:
    """Sum each id's parts over the lists; best first, ties by id."""
    all_ids = np.concatenate([r.ids for r in lists])
    if not len(all_ids):
        return EMPTY
    union, where = np.unique(all_ids, return_inverse=True)
    total: npt.NDArray[np.float64] = np.bincount(  # type: ignore[assignment]  # weighted: float
        where, weights=np.concatenate(parts), minlength=len(union)
    )
    order = np.lexsort((union, -total))
    return Ranking(union[order], total[order])


def rrf_ranking(
    keyword: Ranking, semantic: Ranking, k: int = 60, semantic_weight: float = 1.0
) -> Ranking:
    """Reciprocal-rank fusion (Cormack et al. 2009): score = sum of 1 / (k + rank), the
    semantic side's terms times ``semantic_weight``."""
    parts = tuple(
        w / (k + np.arange(1, len(r) + 1, dtype=np.float64))
        for r, w in ((keyword, 1.0), (semantic, semantic_weight))
    )
    return _combine((keyword, semantic), parts)


def _minmax(scores: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    if not len(scores):
        return scores
    lo, hi = float(scores.min()), float(scores.max())
    if hi <= lo:
        return np.ones_like(scores)
    normalised: npt.NDArray[np.float64] = (scores - lo) / (hi - lo)
    return normalised


def convex_ranking(keyword: Ranking, semantic: Ranking, weight: float) -> Ranking:
    """``weight * semantic + (1 - weight) * keyword`` on min-max normalised scores.

    A document missing from one list gets 0 from that side (it scored at or below that
    list's minimum).
    """
    parts = ((1.0 - weight) * _minmax(keyword.scores), weight * _minmax(semantic.scores))
    return _combine((keyword, semantic), parts)


def rrf(
    keyword: Pairs, semantic: Pairs, k: int = 60, semantic_weight: float = 1.0
) -> list[tuple[int, float]]:
    """``rrf_ranking`` on (id, score) lists."""
    kw, sem = Ranking.from_pairs(keyword), Ranking.from_pairs(semantic)
    return rrf_ranking(kw, sem, k, semantic_weight).pairs()


def convex(keyword: Pairs, semantic: Pairs, weight: float) -> list[tuple[int, float]]:
    """``convex_ranking`` on (id, score) lists."""
    return convex_ranking(Ranking.from_pairs(keyword), Ranking.from_pairs(semantic), weight).pairs()
