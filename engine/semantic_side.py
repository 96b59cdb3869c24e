"""The semantic side of one search: the nearest papers by cosine under the request's
filters, and what the semantic match rule measures them against (``engine.match``): the
unfiltered candidates' best and last similarity when the request has filters, and the
query's similarity to the whole corpus (``engine.background``)."""

from __future__ import annotations

import numpy as np
import tantivy

from papersift.engine.datadir import DataDir
from papersift.engine.match import SemanticReference
from papersift.engine.ranking import EMPTY, Ranking


def semantic_candidates(
    data: DataDir, qvec: np.ndarray, filt: tantivy.Query | None, k: int
) -> Ranking:
    """Top ``k`` by cosine among papers passing ``filt``, correct at any selectivity
    (the vector index scores a selective filter's papers exactly)."""
    if filt is None:
        return data.vectors.ranking(qvec, k)
    allowed = data.lexical.allowed(filt)
    return data.vectors.ranking(qvec, k, allowed) if len(allowed) else EMPTY


def unfiltered_reference(
    data: DataDir, qvec: np.ndarray, constraint: tantivy.Query | None, n: int
) -> SemanticReference:
    """The unfiltered semantic candidates' best and last similarity, which a filtered
    search's semantic rule measures against (``engine.match.SemanticReference``): one
    more vector search, made only when the request has filters (``constraint``: the
    query's own required and excluded clauses, which do apply)."""
    scores = semantic_candidates(data, qvec, constraint, n).scores
    best = float(scores[0]) if len(scores) else None
    return SemanticReference(best, float(scores[-1]) if len(scores) >= n else None)


def query_background(data: DataDir, qvec: np.ndarray, zscore: float) -> tuple[float, float] | None:
    """The query's mean similarity to every paper with a vector and its standard
    deviation, which the semantic rule's z-score measures against (``engine.background``);
    None: no such rule (``zscore`` 0), or too few vectors."""
    if zscore <= 0:
        return None
    background = data.vectors.background()
    return background.of(qvec) if background is not None else None
