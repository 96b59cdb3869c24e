"""Fusing two ranked lists into one: reciprocal-rank fusion and normalised convex combination.

Pure functions over (id, score) lists, best first; the result is the union of both lists,
best first, with ties broken by id so the order is deterministic. The arithmetic runs in
numpy: with 1,000 candidates a side, the dict-and-sort version cost 2-4 ms of a hybrid
query's Python time at 663k papers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Ranked = Sequence[tuple[int, float]]


def _ids(ranked: Ranked) -> npt.NDArray[np.int64]:
    return np.fromiter((d for d, _ in ranked), np.int64, len(ranked))


def _scores(ranked: Ranked) -> npt.NDArray[np.float64]:
    return np.fromiter((s for _, s in ranked), np.float64, len(ranked))


def _combine(
    ids: tuple[npt.NDArray[np.int64], ...], parts: tuple[npt.NDArray[np.float64], ...]
) -> list[tuple[int, float]]:
    """Sum each id's parts over the lists; best first, ties by id."""
    all_ids = np.concatenate(ids)
    if not len(all_ids):
        return []
    union, where = np.unique(all_ids, return_inverse=True)
    total = np.bincount(where, weights=np.concatenate(parts), minlength=len(union))
    order = np.lexsort((union, -total))
    return list(zip(union[order].tolist(), total[order].tolist(), strict=True))


def rrf(
    keyword: Ranked, semantic: Ranked, k: int = 60, semantic_weight: float = 1.0
) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion (Cormack et al. 2009): score = sum of 1 / (k + rank), the
    semantic side's terms times ``semantic_weight``."""
    parts = tuple(
        w / (k + np.arange(1, len(r) + 1, dtype=np.float64))
        for r, w in ((keyword, 1.0), (semantic, semantic_weight))
    )
    return _combine((_ids(keyword), _ids(semantic)), parts)


def _minmax(ranked: Ranked) -> npt.NDArray[np.float64]:
    scores = _scores(ranked)
    if not len(scores):
        return scores
    lo, hi = float(scores.min()), float(scores.max())
    if hi <= lo:
        return np.ones_like(scores)
    normalised: npt.NDArray[np.float64] = (scores - lo) / (hi - lo)
    return normalised


def convex(keyword: Ranked, semantic: Ranked, weight: float) -> list[tuple[int, float]]:
    """``weight * semantic + (1 - weight) * keyword`` on min-max normalised scores.

    A document missing from one list gets 0 from that side (it scored at or below that
    list's minimum).
    """
    parts = ((1.0 - weight) * _minmax(keyword), weight * _minmax(semantic))
    return _combine((_ids(keyword), _ids(semantic)), parts)
