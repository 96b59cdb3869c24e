"""Query by example, as CSFCube poses it (a paper is the query; rank the others by how
alike they are): over HTTP against the real app on the session's real index, the ranking of
``/api/v1/papers/<id>/similar`` and of ``POST /api/v1/similar`` with a paper's abstract is
plain cosine over the stored vectors, computed here with numpy, for papers across the
corpus."""

from __future__ import annotations

from typing import Any

import httpx
import numpy as np
import numpy.typing as npt
import pytest

from papersift.engine.search import SearchEngine
from papersift.server.api import MAX_SIMILAR

pytest_plugins = ["tests.web_fixtures"]

QUERIES = 6  # query papers, spread over the corpus


@pytest.fixture(scope="module")
def vectors(engine: SearchEngine) -> tuple[list[int], npt.NDArray[np.float32]]:
    """Every stored vector, by docid: the reference's whole collection."""
    data = engine.data
    docids = sorted(data.store.all_text_hashes())
    held = [(d, v) for d in docids if (v := data.vectors.vector(d)) is not None]
    assert len(held) == len(docids) > 100  # the session corpus is fully embedded
    return [d for d, _ in held], np.stack([v for _, v in held])


def _queries(engine: SearchEngine, docids: list[int]) -> list[Any]:
    picked = docids[:: len(docids) // QUERIES][:QUERIES]
    return [engine.data.store.get([d])[d] for d in picked]


def _assert_same_ranking(
    got: list[tuple[int, float]], docids: list[int], scores: npt.NDArray[np.float32]
) -> None:
    """``got`` (docid, score) is the exact cosine ranking: the same scores in order, and
    the same papers wherever two scores are not tied."""
    order = np.argsort(-scores, kind="stable")[: len(got)]
    want = [(docids[i], float(scores[i])) for i in order]
    assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
    for (d, s), (wd, _) in zip(got, want, strict=True):
        if d != wd:  # only a tie may swap two papers
            assert abs(s - float(scores[docids.index(d)])) < 1e-5
            assert abs(s - float(scores[docids.index(wd)])) < 1e-5


def test_paper_similar_is_exact_cosine(
    engine: SearchEngine, http: httpx.Client, vectors: tuple[list[int], Any]
) -> None:
    docids, matrix = vectors
    for paper in _queries(engine, docids):
        r = http.get(f"/api/v1/papers/{paper.arxiv_id}/similar", params={"limit": MAX_SIMILAR})
        assert r.status_code == 200
        hits = r.json()["similar"]
        assert len(hits) == MAX_SIMILAR
        me = docids.index(engine.data.store.docid_of(paper.arxiv_id))
        scores = matrix @ matrix[me]
        scores[me] = -np.inf  # the paper itself is never its own neighbour
        got = [(engine.data.store.docid_of(h["paper"]["id"]), h["score"]) for h in hits]
        _assert_same_ranking(got, docids, scores)  # type: ignore[arg-type]


def test_pasted_abstract_ranks_the_whole_corpus_by_exact_cosine(
    engine: SearchEngine, http: httpx.Client, vectors: tuple[list[int], Any]
) -> None:
    """Every page to the last: the whole corpus in exact cosine order of the pasted
    abstract's embedding."""
    docids, matrix = vectors
    for paper in _queries(engine, docids):
        text = paper.abstract
        got: list[tuple[int | None, float]] = []
        page, pages = 1, 1
        while page <= pages:  # a POST has no next URL: the pages it says it has
            body = http.post(
                "/api/v1/similar", json={"text": text, "page_size": 100, "page": page}
            ).json()
            got += [
                (engine.data.store.docid_of(h["paper"]["id"]), h["score"]) for h in body["hits"]
            ]
            page, pages = page + 1, body["pages"]
        assert len(got) == len(docids)
        q = engine.data.embedder.embed_query(" ".join(text.split()))
        _assert_same_ranking(got, docids, matrix @ q)  # type: ignore[arg-type]
