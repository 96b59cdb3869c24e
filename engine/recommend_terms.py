"""Term counts for recommendations, analysed once per window instead of once per request.

A recommendation fits its model on tf-idf of the seeds, a fixed sample of other papers (the
negatives) and the papers of the window (``engine.recommend``). Between two requests over
the same window only the seeds change, yet analysing and counting the other texts was
nearly all of a request's time (6-13 s at 663k papers for a 30-day window of 6,634 papers,
bench/RESULTS.md). ``WindowTerms`` analyses the window and the negatives once; ``counts``
then builds a request's document-term matrix from them and the few texts it has not seen
(mostly the seeds). The matrix is the one scikit-learn's vectorizer builds from all the
texts, entry for entry (tests/test_recommend_terms.py).
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Generic, TypeVar

import numpy as np
import numpy.typing as npt
from cachetools import LRUCache
from scipy.sparse import coo_matrix, csr_matrix
from sklearn.feature_extraction.text import CountVectorizer

MIN_DF = 2  # a term must be in two texts of the request to count
MAX_DF = 0.5  # and in at most half of them
MAX_FEATURES = 50_000  # the most frequent terms kept
WINDOWS_KEPT = 4  # windows whose counts are kept (a digest's sections filter differently)
T = TypeVar("T")


def vectorizer(max_features: int = MAX_FEATURES) -> CountVectorizer:
    """Words and word pairs of a text, English stop words left out (float counts, as
    ``TfidfVectorizer`` counts)."""
    return CountVectorizer(
        min_df=MIN_DF, max_df=MAX_DF, ngram_range=(1, 2), max_features=max_features,
        stop_words="english", dtype=np.float64,
    )  # fmt: skip


def count_texts(texts: Sequence[str], max_features: int = MAX_FEATURES) -> csr_matrix | None:
    """The document-term counts of ``texts`` as scikit-learn fits them (indices sorted);
    None when no term is left (all stop words, or none in two texts)."""
    try:
        x = vectorizer(max_features).fit_transform(texts)
    except ValueError:
        return None
    x = csr_matrix(x)
    x.sort_indices()
    return x


class WindowTerms:
    """The analysed texts of a fixed set of papers (a window and the negatives): the terms
    in two or more of them as a sorted vocabulary and a count matrix, the rest by hash."""

    def __init__(self, texts: Mapping[int, str], max_features: int = MAX_FEATURES) -> None:
        self.max_features = max_features
        self._analyze: Callable[[str], list[str]] = vectorizer().build_analyzer()
        self._texts = list(texts.values())
        self._row_of = {d: i for i, d in enumerate(texts)}
        counted = [Counter(self._analyze(t)) for t in self._texts]
        seen: Counter[str] = Counter()
        for c in counted:
            seen.update(c.keys())
        self.terms = sorted(t for t, n in seen.items() if n >= MIN_DF)
        column = {t: j for j, t in enumerate(self.terms)}
        self._column = column
        indptr: list[int] = [0]
        indices: list[int] = []
        values: list[int] = []
        single_hash: list[int] = []
        single_row: list[int] = []
        for row, c in enumerate(counted):
            cols = []
            for term, n in c.items():
                j = column.get(term)
                if j is None:  # in this text only: found again by hash if a seed has it
                    single_hash.append(hash(term))
                    single_row.append(row)
                else:
                    cols.append((j, n))
            cols.sort()
            indices.extend(j for j, _ in cols)
            values.extend(n for _, n in cols)
            indptr.append(len(indices))
        self._rows = csr_matrix(
            (np.asarray(values, np.float64), np.asarray(indices, np.int32), indptr),
            shape=(len(counted), len(self.terms)),
        )
        order = np.argsort(np.asarray(single_hash, np.int64), kind="stable")
        self._single_hash = np.asarray(single_hash, np.int64)[order]
        self._single_row = np.asarray(single_row, np.int64)[order]

    def __contains__(self, docid: int) -> bool:
        return docid in self._row_of

    def missing(self, docids: Sequence[int]) -> list[int]:
        """The docids whose text this window has not analysed."""
        return [d for d in docids if d not in self._row_of]

    def counts(
        self, docids: Sequence[int], texts: Mapping[int, str]
    ) -> tuple[csr_matrix, list[str]] | None:
        """The document-term counts of the papers ``docids`` in that order (``texts`` holds
        those this window lacks) and the terms of its columns, as ``count_texts`` would
        give for all their texts; None when no term is left."""
        n = len(docids)
        high = MAX_DF * n
        if high < MIN_DF:
            return None
        positions: dict[int, list[int]] = {}  # a paper may come twice (a negative in the window)
        extra: list[tuple[int, Counter[str]]] = []
        for pos, d in enumerate(docids):
            row = self._row_of.get(d)
            if row is None:
                extra.append((pos, Counter(self._analyze(texts[d]))))
            else:
                positions.setdefault(row, []).append(pos)
        width = len(self.terms)
        added: dict[str, int] = {}  # terms of the extra texts that are not columns yet
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        for pos, counter in extra:
            for term, k in counter.items():
                j = self._column.get(term)
                if j is None:
                    j = added.setdefault(term, width + len(added))
                rows.append(pos)
                cols.append(j)
                vals.append(k)
        analysed: dict[int, Counter[str]] = {}
        for row, places in positions.items():  # a paper that comes twice doubles its terms
            if len(places) > 1:
                analysed[row] = Counter(self._analyze(self._texts[row]))
                for term in analysed[row]:
                    if term not in self._column:
                        added.setdefault(term, width + len(added))
        for term, j in added.items():  # it may be in one analysed text: count it there
            for row in self._single_rows(term).tolist():
                if row not in positions:
                    continue
                if row not in analysed:
                    analysed[row] = Counter(self._analyze(self._texts[row]))
                k = analysed[row][term]  # zero when only the hash matched
                for pos in positions[row] if k else ():
                    rows.append(pos)
                    cols.append(j)
                    vals.append(k)
        base_rows = np.asarray([r for r, places in positions.items() for _ in places], np.int64)
        base_pos = np.asarray([p for places in positions.values() for p in places], np.int64)
        base = self._rows[base_rows].tocoo()
        x = csr_matrix(
            coo_matrix(
                (
                    np.concatenate([base.data, np.asarray(vals, np.float64)]),
                    (
                        np.concatenate([base_pos[base.row], np.asarray(rows, np.int64)]),
                        np.concatenate([base.col, np.asarray(cols, np.int64)]),
                    ),
                ),
                shape=(n, width + len(added)),
            )
        )
        x.sort_indices()
        kept = self._kept_columns(x, list(added), high)
        if not len(kept):
            return None
        names = [*self.terms, *added]
        out = csr_matrix(x[:, kept])
        out.sort_indices()
        return out, [names[j] for j in kept]

    def _single_rows(self, term: str) -> npt.NDArray[np.int64]:
        h = hash(term)
        lo = int(np.searchsorted(self._single_hash, h, "left"))
        hi = int(np.searchsorted(self._single_hash, h, "right"))
        return np.unique(self._single_row[lo:hi])  # two terms of one text may share a hash

    def _kept_columns(self, x: csr_matrix, added: list[str], high: float) -> npt.NDArray[np.int64]:
        """The columns scikit-learn keeps, in its (alphabetical) order: in at least MIN_DF
        and at most ``high`` rows, and of those the ``max_features`` most frequent, ties
        broken as its ``argsort`` breaks them over the terms in alphabetical order."""
        width = len(self.terms)
        df = np.bincount(x.indices, minlength=x.shape[1])
        keep = (df >= MIN_DF) & (df <= high)
        # Alphabetical order of all columns: the vocabulary is sorted, and an added term
        # goes before the first vocabulary term greater than it.
        at = np.asarray([bisect_left(self.terms, t) for t in added], np.int64)
        by_name = np.asarray(sorted(range(len(added)), key=lambda i: (at[i], added[i])), np.int64)
        primary = np.concatenate([np.arange(width), at[by_name]])
        after = np.concatenate([np.ones(width, np.int64), np.zeros(len(added), np.int64)])
        rank = np.concatenate([np.zeros(width, np.int64), np.arange(len(added))])
        columns = np.concatenate([np.arange(width), width + by_name])
        alphabetical = columns[np.lexsort((rank, after, primary))]
        survivors: npt.NDArray[np.int64] = alphabetical[keep[alphabetical]]
        if len(survivors) <= self.max_features:
            return survivors
        totals = np.asarray(x.sum(axis=0)).ravel()
        pick = (-totals[survivors]).argsort()[: self.max_features]
        kept: npt.NDArray[np.int64] = survivors[np.sort(pick)]
        return kept


class WindowTermsCache(Generic[T]):
    """What was built for each of the last few windows (a ``WindowTerms`` and whatever goes
    with it), by key (the index generation and the window's filters); one is built at a
    time, so two requests never analyse a window twice."""

    def __init__(self, size: int = WINDOWS_KEPT) -> None:
        self._items: LRUCache[Hashable, T] = LRUCache(size)
        self._lock = threading.Lock()
        self._building = threading.Lock()

    def get(self, key: Hashable, build: Callable[[], T]) -> T:
        """The window's value, built by ``build()`` when not kept."""
        with self._lock:
            found = self._items.get(key)
        if found is not None:
            return found
        with self._building:
            with self._lock:
                found = self._items.get(key)
            if found is None:
                found = build()
                with self._lock:
                    self._items[key] = found
        return found
