"""Recommendations: rank a window of recent papers by a model of seed papers (a tag, a
library, a researcher's own papers). Stateless: the seeds come with each request.

The model is the seeds' vector centroid: every paper in the window (and the request's
filters) is scored by its cosine to the normalised mean of the seeds' MiniLM vectors, exactly
(or through the HNSW graph for a window of more than ``[search] exact_below`` papers). It was
chosen by measurement against a logistic model and a linear SVM on the vectors, arxiv-sanity's
tf-idf SVM and a fusion (bench/recommend_eval.py, bench/RESULTS.md, issue 19). Seeds are
never recommended.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np
import numpy.typing as npt

from engine.hits import make_hits
from engine.results import Filters, Hit
from engine.search import SearchEngine
from papersift.errors import QueryError
from papersift.paper import parse_arxiv_id

FloatArray = npt.NDArray[np.float32]
DEFAULT_DAYS = 30  # the window when a request names no dates
MAX_SEEDS = 1000


@dataclass(frozen=True, slots=True)
class Recommendations:
    hits: tuple[Hit, ...]
    total: int  # papers in the window (and filters) that were ranked
    page: int
    page_size: int
    date_from: date | None
    date_to: date | None
    seeds: tuple[str, ...]  # the seed ids found here, with a vector
    warnings: tuple[str, ...] = ()


def centroid_scores(seeds: FloatArray, window: FloatArray) -> npt.NDArray[np.float64]:
    """Cosine of each window row to the normalised mean of the (unit) seed rows."""
    centre = _centre(seeds)
    if centre is None:
        return np.zeros(len(window))
    return np.asarray(window, np.float64) @ centre.astype(np.float64)


def _centre(seeds: FloatArray) -> FloatArray | None:
    centre = np.asarray(seeds, np.float64).mean(axis=0)
    norm = float(np.linalg.norm(centre))
    return None if norm == 0.0 else (centre / norm).astype(np.float32)


def window(
    engine: SearchEngine, filters: Filters, days: int = DEFAULT_DAYS
) -> tuple[Filters, str | None]:
    """The filters with a date window: the request's, or the ``days`` up to the newest paper."""
    if filters.date_from or filters.date_to:
        return filters, None
    _, newest = engine.data.lexical.date_range()
    if newest is None:
        return filters, None
    start = newest - timedelta(days=days - 1)
    note = f"no dates given: the {days} days up to the newest paper, {start} .. {newest}"
    return dataclasses.replace(filters, date_from=start, date_to=newest), note


def recommend(
    engine: SearchEngine,
    seed_ids: Sequence[str],
    filters: Filters | None = None,
    page: int = 1,
    page_size: int | None = None,
) -> Recommendations:
    """Papers of the window most like the seeds, best first. QueryError for a request out
    of bounds (no seeds, too many, a page past the window)."""
    cfg = engine.config.search
    size = page_size or cfg.page_size
    if not 1 <= size <= cfg.max_page_size:
        raise QueryError(f"page size must be between 1 and {cfg.max_page_size}")
    if page < 1 or page * size > cfg.max_window:
        raise QueryError(f"page {page} is past the result window of {cfg.max_window} results")
    if not seed_ids:
        raise QueryError("name at least one seed paper (an arXiv id)")
    if len(seed_ids) > MAX_SEEDS:
        raise QueryError(f"at most {MAX_SEEDS} seed papers")
    data = engine.data
    filters = filters or Filters()
    warnings: list[str] = []
    found: dict[int, str] = {}
    for raw in dict.fromkeys(seed_ids):
        parsed = parse_arxiv_id(raw)
        docid = data.store.docid_of(parsed[0]) if parsed else None
        if docid is None:
            warnings.append(f"not in this index, left out: {raw[:40]}")
        else:
            found[docid] = parsed[0] if parsed else raw
    vectors = {d: v for d in found if (v := data.vectors.vector(d)) is not None}
    if len(vectors) < len(found):
        warnings.append(f"{len(found) - len(vectors)} seed papers have no vector yet, left out")
    filters, note = window(engine, filters)
    if note:
        warnings.append(note)
    centre = _centre(np.stack(list(vectors.values()))) if vectors else None
    filt = data.lexical.filter_query(filters)
    allowed = data.lexical.allowed(filt) if filt is not None else None
    if allowed is not None:
        allowed = allowed[~np.isin(allowed, np.fromiter(found, np.int64, len(found)))]
    total = len(allowed) if allowed is not None else max(0, data.store.count() - len(found))
    ranked: list[tuple[int, float]] = []
    if centre is not None and total:
        want = page * size
        ranked = [
            p for p in data.vectors.search(centre, want + len(found), allowed) if p[0] not in found
        ]
        ranked = ranked[(page - 1) * size : want]
    ranks = {"recommended": {d: (page - 1) * size + i + 1 for i, (d, _) in enumerate(ranked)}}
    hits = make_hits(data, ranked, None, {}, ranks) if ranked else []
    return Recommendations(
        hits=tuple(hits),
        total=total if centre is not None else 0,
        page=page,
        page_size=size,
        date_from=filters.date_from,
        date_to=filters.date_to,
        seeds=tuple(found[d] for d in vectors),
        warnings=tuple(warnings),
    )
