"""The semantic side of one search: the nearest papers by cosine under the request's
filters, and what the semantic match rule measures them against (``engine.match``): the
unfiltered candidates' best and last similarity when the request has filters, and the
query's similarity to the whole corpus (``engine.background``); and which candidates are
close enough to count as matches (``semantic_matches``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import tantivy

from papersift.engine.datadir import DataDir
from papersift.engine.match import MatchRule
from papersift.engine.ranking import EMPTY, Ranking


@dataclass(frozen=True, slots=True)
class SemanticReference:
    """What the semantic rule measures against when filters narrow a search: the same
    query's unfiltered candidates, so that a filter only narrows the match set (a facet's
    count is what clicking it gives). ``best``: the closest paper's similarity (None: no
    candidate); ``last``: the similarity of the last of a full list of candidates (None: the
    list held every paper it could), below which the unfiltered search admits nothing."""

    best: float | None
    last: float | None


def semantic_matches(
    ranked: Ranking,
    rule: MatchRule,
    reference: SemanticReference | None = None,
    background: float | None = None,
) -> Ranking:
    """The semantic candidates (best first) close enough to count as matches: none when
    even the best is under the gate (the model does not recognise the query: a nonsense
    string, a word it never saw), else those within the band of the best and above the
    floor. With a ``reference`` (a filtered search) the gate and the band are those of the
    unfiltered best, and nothing below the unfiltered list's last candidate matches.
    ``background``: the similarity ``rule.zscore`` standard deviations above the query's
    mean over the corpus (``engine.background``), below which nothing matches; a filter
    does not change it."""
    if reference is None:
        best, last = (float(ranked.scores[0]) if len(ranked) else None), None
    else:
        best, last = reference.best, reference.last
    if not len(ranked) or best is None or best < rule.gate:
        return EMPTY
    if rule.floor <= 0 and rule.band <= 0 and last is None and background is None:
        return ranked
    cut = max(rule.floor, best - rule.band) if rule.band > 0 else rule.floor
    if last is not None:
        cut = max(cut, last)
    if background is not None:
        cut = max(cut, background)
    return ranked.where(ranked.scores >= cut)


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
    search's semantic rule measures against (``SemanticReference``): one
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
