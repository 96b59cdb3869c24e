"""How similar a query is to the corpus as a whole: the mean and spread of its cosine
similarity over every paper with a vector, for the semantic match rule's z-score
(``engine.match``, ``[search] semantic_zscore``).

In a corpus on one field every paper is somewhat similar to a broad query, so a band below
the best admits hundreds of loosely related papers; what sets a relevant paper apart is that
it stands out from that background. The background of a query ``q`` over vectors ``V`` needs
no pass over them: ``mean(V q) = m . q`` and ``var(V q) = q' C q``, with ``m`` and ``C`` the
vectors' mean and covariance, summarised once (``summarise``) and read per query in ~20 us.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]
# Vectors a summary is made of; above this a strided sample stands in for all of them: at
# 663k papers a query's mean and spread from it were within 0.0005 of those from a sample
# ten times larger, and it took 0.11 s (bench/RESULTS.md, session 28).
SAMPLE = 20_000
# Fewer vectors have no background: the mean and spread of a handful of papers say little,
# and the best of n papers is at most sqrt(n - 1) standard deviations above their mean, so
# in a corpus of three no paper would stand out by 1.5.
MIN_VECTORS = 100


@dataclass(frozen=True, slots=True)
class Background:
    """The mean vector and covariance matrix of ``count`` unit vectors (float64)."""

    mean: npt.NDArray[np.float64]
    covariance: npt.NDArray[np.float64]
    count: int

    def of(self, query: FloatArray) -> tuple[float, float]:
        """The mean and standard deviation of ``query``'s cosine similarity to the vectors."""
        q = np.asarray(query, np.float64).ravel()
        variance = float(q @ self.covariance @ q)
        return float(self.mean @ q), math.sqrt(max(variance, 0.0))


def similarity_cut(background: tuple[float, float], zscore: float) -> float | None:
    """The similarity ``zscore`` standard deviations above a query's mean (``background``:
    ``Background.of``), which the semantic rule asks of a match; None: no such rule (0)."""
    mean, spread = background
    return mean + zscore * spread if zscore > 0 else None


def summarise(vectors: FloatArray) -> Background | None:
    """The ``Background`` of these vectors (rows); None for fewer than ``MIN_VECTORS``."""
    n = len(vectors)
    if n < MIN_VECTORS:
        return None
    x = np.asarray(vectors, np.float32)
    mean = x.mean(axis=0, dtype=np.float64)
    centred = x - mean.astype(np.float32)
    covariance = (centred.T @ centred).astype(np.float64) / n  # the population's
    return Background(mean, covariance, n)


def strided(total: int, limit: int = SAMPLE) -> npt.NDArray[np.int64]:
    """Up to ``limit`` positions out of ``total``, evenly spaced (all of them when fewer):
    docids follow import order, so a stride samples every period of the corpus."""
    if total <= limit:
        return np.arange(total, dtype=np.int64)
    return np.linspace(0, total - 1, limit).astype(np.int64)
