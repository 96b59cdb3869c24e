"""The per-window term counts against scikit-learn's vectorizer on real demo texts: for any
request (seeds inside or outside the window, the window with papers left out, papers that
come twice, a vocabulary cut to the most frequent terms with ties at the cut) the matrix
and its terms are exactly those the vectorizer fits from all the request's texts."""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest

from papersift.engine.recommend_terms import WindowTerms, WindowTermsCache, count_texts
from tests.corpus import demo_records


@pytest.fixture(scope="module")
def texts() -> dict[int, str]:
    records = demo_records()[:700]
    return {i + 1: f"{r['title']}. {r['abstract']}" for i, r in enumerate(records)}


def check(window: WindowTerms, texts: dict[int, str], docids: list[int], cap: int) -> None:
    want = count_texts([texts[d] for d in docids], cap)
    got = window.counts(docids, {d: texts[d] for d in window.missing(docids)})
    assert want is not None and got is not None
    x, terms = got
    expect_terms = [
        t for t, _ in sorted(_vocabulary(texts, docids, cap).items(), key=lambda kv: kv[1])
    ]
    assert terms == expect_terms
    assert x.shape == want.shape
    assert np.array_equal(x.indptr, want.indptr)
    assert np.array_equal(x.indices, want.indices)
    assert np.array_equal(x.data, want.data)


def _vocabulary(texts: dict[int, str], docids: list[int], cap: int) -> dict[str, int]:
    from papersift.engine.recommend_terms import vectorizer

    v = vectorizer(cap)
    v.fit([texts[d] for d in docids])
    return {str(t): int(j) for t, j in v.vocabulary_.items()}


@pytest.mark.parametrize("cap", [50_000, 300, 40])
def test_counts_equal_the_vectorizers(texts: dict[int, str], cap: int) -> None:
    """Base: papers 1-600 (a window and negatives); requests mix them with unseen papers,
    in any order, with some base papers left out. A small ``cap`` forces the cut to the
    most frequent terms, with many ties at it."""
    window = WindowTerms({d: texts[d] for d in range(1, 601)}, max_features=cap)
    rng = random.Random(cap)
    for _ in range(6):
        seeds = rng.sample(range(1, 701), rng.randint(1, 12))  # some seen, some not
        rest = [d for d in range(1, 601) if d not in seeds and rng.random() > 0.1]
        negatives = rng.sample(rest, 40)  # a paper may be a negative and in the window
        check(window, texts, [*seeds, *negatives, *rest], cap)
    # Seeds that repeat a term found in just one base text bring it back as a column.
    check(window, texts, [650, 651, *range(1, 601)], cap)
    check(window, texts, list(range(601, 701)), cap)  # nothing seen before


def test_no_terms_left_is_none(texts: dict[int, str]) -> None:
    window = WindowTerms({1: "the and of", 2: "of the"})
    assert window.counts([1, 2], {}) is None
    assert window.counts([1], {}) is None  # one text: no term can be in two
    assert count_texts(["the and of", "of the"]) is None


def test_cache_builds_each_window_once(texts: dict[int, str]) -> None:
    cache: WindowTermsCache[WindowTerms] = WindowTermsCache(size=2)
    built: list[str] = []

    def window_of(key: str) -> WindowTerms:
        built.append(key)
        return WindowTerms({d: texts[d] for d in range(1, 51)})

    results: list[WindowTerms] = []
    threads = [
        threading.Thread(target=lambda: results.append(cache.get("a", lambda: window_of("a"))))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert built == ["a"] and len({id(r) for r in results}) == 1
    cache.get("b", lambda: window_of("b"))
    cache.get("c", lambda: window_of("c"))  # the oldest, "a", is let go
    cache.get("b", lambda: window_of("b"))
    cache.get("a", lambda: window_of("a"))
    assert built == ["a", "b", "c", "a"]
