"""The semantic rule's background (``engine.background``): a query's mean similarity to every
paper with a vector, and its spread, read from the vectors' mean and covariance. Real
vectors of the session corpus; expected values computed from each stored vector on its own."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import pytest

from papersift.core.config import Config
from papersift.engine.background import MIN_VECTORS, strided, summarise
from papersift.engine.datadir import DataDir
from papersift.engine.match import MatchRule
from papersift.engine.ranking import Ranking
from papersift.engine.semantic_side import semantic_matches
from papersift.serve import _warm_up
from tests.search_checks import exact_cosines

QUERIES = ("language models", "citation analysis", "galaxy clusters", "xkqzvwp flurbish")


@pytest.fixture
def data(built_config: Config, tmp_path: Path) -> DataDir:
    """A copy of the session corpus (~320 real papers), its vectors folded into a graph."""
    shutil.copytree(built_config.data_dir, tmp_path / "data")
    search = dataclasses.replace(built_config.search, ann_above=50)
    cfg = dataclasses.replace(
        built_config, data=dataclasses.replace(built_config.data, dir=str(tmp_path / "data")),
        search=search,
    )  # fmt: skip
    data = DataDir(cfg)
    data.vectors.compact(data.store.text_hashes)
    assert data.vectors.has_graph
    return data


def _stored(data: DataDir) -> np.ndarray:
    vectors = (data.vectors.vector(d) for d in sorted(data.store.all_text_hashes()))
    return np.stack([v for v in vectors if v is not None])


def test_a_querys_background_is_its_similarity_to_every_paper(data: DataDir) -> None:
    """Mean and standard deviation of the cosines to every stored vector, graph rows and
    vectors added since alike, without a pass over them."""
    vi = data.vectors
    # Five papers re-embedded after the graph was built: their graph rows are masked and
    # the flat index holds the new vectors, which the background must count instead.
    rng = np.random.default_rng(5)
    moved = np.arange(5, dtype=np.int64) + 1
    fresh = rng.normal(size=(5, vi.dim)).astype(np.float32)
    fresh /= np.linalg.norm(fresh, axis=1, keepdims=True)
    vi.add(moved, fresh)
    background = vi.background()
    assert background is not None and background.count == vi.size
    for text in QUERIES:
        q = data.embedder.embed_query(text)
        cosines = np.asarray(list(exact_cosines(data, q).values()))
        assert len(cosines) == vi.size
        mean, spread = background.of(q)
        assert mean == pytest.approx(cosines.mean(), abs=1e-5)
        assert spread == pytest.approx(cosines.std(), abs=1e-5)


def test_the_summary_is_made_again_only_when_the_corpus_grows(data: DataDir) -> None:
    vi = data.vectors
    first = vi.background()
    assert first is not None and vi.background() is first  # kept
    vectors = _stored(data)
    vi.add(np.array([10_000], np.int64), vectors[:1])  # one more: under a fiftieth
    assert vi.background() is first
    n = vi.size // 50 + 1
    vi.add(np.arange(10_001, 10_001 + n, dtype=np.int64), vectors[:n])
    again = vi.background()
    assert again is not first and again is not None and again.count == vi.size


def test_a_sample_is_evenly_spread() -> None:
    assert strided(5, 10).tolist() == [0, 1, 2, 3, 4]
    picks = strided(1_000_003, 1000)
    assert len(picks) == len(set(picks.tolist())) == 1000
    assert picks[0] == 0 and picks[-1] == 1_000_002
    gaps = np.diff(picks)
    assert gaps.min() >= 1000 and gaps.max() <= 1002


def test_a_handful_of_papers_has_no_background() -> None:
    """Below MIN_VECTORS the z-score does not apply: the best of three papers can never be
    1.5 standard deviations above their mean, and a new lab's first papers must match."""
    rng = np.random.default_rng(3)
    few = rng.normal(size=(MIN_VECTORS - 1, 8)).astype(np.float32)
    assert summarise(few) is None
    assert summarise(np.concatenate([few, few[:1]])) is not None


def test_the_background_cut_binds_like_the_others() -> None:
    rule = MatchRule(floor=0.2, gate=0.35, band=0.3, zscore=1.5)
    ranked = Ranking.from_pairs([(1, 0.6), (2, 0.5), (3, 0.4), (4, 0.32)])
    assert semantic_matches(ranked, rule).ids.tolist() == [1, 2, 3, 4]
    assert semantic_matches(ranked, rule, background=0.45).ids.tolist() == [1, 2]
    assert semantic_matches(ranked, rule, background=0.1).ids.tolist() == [1, 2, 3, 4]
    # Above the best: nothing stands out from the corpus.
    assert semantic_matches(ranked, rule, background=0.7).ids.tolist() == []


def test_serve_summarises_the_vectors_before_the_first_search(data: DataDir) -> None:
    config = data.config
    assert config.search.semantic_zscore > 0
    _warm_up(data, config)
    assert data.vectors._background is not None
    search = config.search
    # Hybrid sorted by date has its own z-score rule (semantic_zscore_sorted).
    sorted_only = dataclasses.replace(search, semantic_zscore=0)
    off = dataclasses.replace(sorted_only, semantic_zscore_sorted=0)
    for searching, wanted in ((sorted_only, True), (off, False)):
        other_config = dataclasses.replace(config, search=searching)
        other = DataDir(other_config)
        _warm_up(other, other_config)
        assert (other.vectors._background is not None) is wanted
        other.close()
