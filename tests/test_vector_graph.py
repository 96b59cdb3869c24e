"""The HNSW graph over the compacted segment (engine.ann): built by compaction above
``ann_above`` vectors, agrees with exact search, masks stale rows, keeps filters exact, and
falls back to exact search when its file is missing or damaged."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import faiss
import numpy as np
import pytest

from papersift.backup import backup
from papersift.core.config import Config
from papersift.engine import ann
from papersift.engine.datadir import DataDir
from papersift.engine.lexical_filters import keyword_filter
from papersift.engine.match import MatchRule
from papersift.engine.ranking import Ranking
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine
from papersift.engine.semantic_side import semantic_matches
from papersift.engine.vector_segments import read_segment
from papersift.engine.vectors import VectorIndex
from tests.search_checks import exact_cosines, zscore_cut


@pytest.fixture
def graph_config(built_config: Config, tmp_path: Path) -> Config:
    """A copy of the session corpus (~320 real papers, real vectors) with a low threshold."""
    shutil.copytree(built_config.data_dir, tmp_path / "data")
    search = dataclasses.replace(built_config.search, ann_above=50)
    data = dataclasses.replace(built_config.data, dir=str(tmp_path / "data"))
    return dataclasses.replace(built_config, data=data, search=search)


def _exact(data: DataDir) -> VectorIndex:
    vi = VectorIndex(data.vectors.folder, data.vectors.dim, graphs=False)
    vi.load(data.store.text_hashes)
    assert not vi.has_graph  # a flat scan of every vector: the exact reference
    return vi


def _queries(data: DataDir) -> list[np.ndarray]:
    emb = data.embedder
    texts = ["neural machine translation", "citation analysis", "galaxy clusters", "graphs"]
    return [emb.embed_query(t) for t in texts]


def _compacted(config: Config) -> DataDir:
    data = DataDir(config)
    vi = data.vectors
    assert not vi.has_graph  # the session corpus was compacted without a graph
    vi.compact(data.store.text_hashes)
    (seg,) = vi.segments()
    assert ann.graph_path(seg).exists() and vi.has_graph
    return data


def test_compaction_builds_a_graph_that_agrees_with_exact_search(graph_config: Config) -> None:
    data = _compacted(graph_config)
    exact = _exact(data)
    assert data.vectors.size == exact.size > 50
    for q in _queries(data):
        got = data.vectors.search(q, 10)
        want = exact.search(q, 10)
        assert [d for d, _ in got] == [d for d, _ in want]
        # The graph holds its vectors in float16: scores within ~6e-5 of float32's.
        assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-4)
    base = data.vectors._base
    assert base is not None and isinstance(base.flat, faiss.IndexScalarQuantizer)
    # A second open reads the graph from disk instead of rebuilding it.
    again = DataDir(graph_config)
    assert again.vectors.has_graph and again.vectors.size == exact.size
    q = _queries(data)[0]
    assert again.vectors.search(q, 5) == data.vectors.search(q, 5)


def test_filters_stay_exact_and_stale_rows_are_masked(graph_config: Config) -> None:
    data = _compacted(graph_config)
    vi, exact = data.vectors, _exact(data)
    q = _queries(data)[1]
    top = [d for d, _ in exact.search(q, 40)]
    allowed = np.array(sorted(top[::3]), np.int64)  # selective: every one scored
    got, want = vi.search(q, 5, allowed), exact.search(q, 5, allowed)
    assert [d for d, _ in got] == [d for d, _ in want]
    assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-4)  # float16
    vi.exact_below = 0  # broad path: the graph searched with the allowed rows as a mask
    assert {d for d, _ in vi.search(q, 5, allowed)} <= set(allowed.tolist())
    # A paper re-embedded (new vector in the flat index) and one deleted.
    moved, gone = top[0], top[1]
    vi.add(np.array([moved]), -q.reshape(1, -1))  # now the farthest paper
    vi.remove(np.array([gone]))
    found = [d for d, _ in vi.search(q, 20)]
    assert moved not in found and gone not in found
    assert found[:5] == [d for d in top if d not in (moved, gone)][:5]
    assert np.allclose(vi.vector(moved), -q)  # type: ignore[arg-type]
    assert vi.vector(gone) is None and not vi.has(gone)
    assert vi.size == exact.size - 1


def test_a_missing_or_damaged_graph_falls_back_to_exact_search(graph_config: Config) -> None:
    data = _compacted(graph_config)
    (seg,) = data.vectors.segments()
    q = _queries(data)[2]
    want = _exact(data).search(q, 10)
    ann.graph_path(seg).write_bytes(b"not a faiss index")
    damaged = DataDir(graph_config)
    got = damaged.vectors.search(q, 10)
    assert not damaged.vectors.has_graph
    # The same papers in the same order; two exact scans may sum a dot product in another
    # order (numpy/BLAS against FAISS), so the scores agree to float32 precision, not bits.
    assert [d for d, _ in got] == [d for d, _ in want]
    assert np.allclose([s for _, s in got], [s for _, s in want], rtol=0, atol=1e-6)
    # The next compaction (a crash after writing the segment but before its graph, or a
    # damaged file removed by the admin) builds it again.
    ann.graph_path(seg).unlink()
    damaged.vectors.compact(damaged.store.text_hashes)
    (rebuilt,) = damaged.vectors.segments()
    assert damaged.vectors.has_graph and ann.graph_path(rebuilt).exists()
    assert [d for d, _ in damaged.vectors.search(q, 10)] == [d for d, _ in want]


def test_small_harvests_keep_the_graph_and_another_process_sees_a_rebuild(
    graph_config: Config,
) -> None:
    data = _compacted(graph_config)
    vi = data.vectors
    (base,) = vi.segments()
    q = _queries(data)[3]
    # Two small checkpoints after the graph: folded together, the graph is kept.
    ids, hashes, vecs = read_segment(base, vi.dim)
    for i in (0, 1):
        vi.write_segment(ids[i : i + 1], hashes[i : i + 1], vecs[i : i + 1])
    reader = DataDir(graph_config)
    reader.vectors.search(q, 1)  # loaded: graph + the two small segments
    vi.compact(data.store.text_hashes)
    segs = vi.segments()
    assert segs[0] == base and len(segs) == 2 and ann.graph_path(base).exists()
    # Forcing a full rebuild writes a new graph; the reader switches to it on refresh.
    vi.ann_above = 0
    vi.write_segment(*read_segment(base, vi.dim))  # as large as the base
    vi.compact(data.store.text_hashes)
    (new,) = vi.segments()
    assert new != base and ann.graph_path(new).exists() and not ann.graph_path(base).exists()
    reader.refresh()
    assert reader.vectors.has_graph and reader.vectors.size == vi.size
    assert reader.vectors.search(q, 10) == vi.search(q, 10)


def test_semantic_search_through_the_engine_uses_the_graph(graph_config: Config) -> None:
    data = _compacted(graph_config)
    engine = SearchEngine(data)
    exact = _exact(data)
    q = "citation counts of scientific papers"
    res = engine.search(SearchRequest(q, mode="semantic", page_size=10))
    want = [d for d, _ in exact.search(data.embedder.embed_query(q), 10)]
    got = [data.store.docid_of(h.paper.arxiv_id) for h in res.hits]
    assert got == want
    cat = res.hits[0].paper.categories[0]
    filtered = engine.search(
        SearchRequest(q, mode="semantic", filters=Filters(categories=(cat,)), page_size=10)
    )
    assert filtered.hits and all(cat in h.paper.categories for h in filtered.hits)
    # The total is the semantic match set (``engine.match``) among the allowed papers,
    # by exact cosine of their stored vectors.
    allowed = data.lexical.allowed(keyword_filter(data.lexical, Filters(categories=(cat,))))  # type: ignore[arg-type]
    qvec = data.embedder.embed_query(q)
    scored = [
        (int(d), float(v @ qvec)) for d in allowed if (v := data.vectors.vector(int(d))) is not None
    ]
    scored.sort(key=lambda p: -p[1])
    cfg = engine.config.search
    rule = MatchRule(cfg.match_all_up_to, cfg.match_fraction, cfg.semantic_floor,
                     cfg.semantic_gate, cfg.semantic_band, cfg.semantic_zscore)  # fmt: skip
    # The z-score's background is every paper's similarity, not only the allowed ones'.
    background = zscore_cut(list(exact_cosines(data, qvec).values()), cfg.semantic_zscore)
    expected = semantic_matches(
        Ranking.from_pairs(scored[: cfg.candidates]), rule, None, background
    )
    assert abs(filtered.total - len(expected)) <= 1  # float noise at the band's edge


def test_a_backup_carries_the_graph(graph_config: Config, tmp_path: Path) -> None:
    data = _compacted(graph_config)
    q = _queries(data)[0]
    want = data.vectors.search(q, 10)
    data.close()
    backup(graph_config, tmp_path / "copy")
    copy = dataclasses.replace(
        graph_config, data=dataclasses.replace(graph_config.data, dir=str(tmp_path / "copy"))
    )
    restored = DataDir(copy)
    assert restored.vectors.has_graph and restored.vectors.search(q, 10) == want


def test_rows_of_changed_papers_are_masked_after_the_check(
    graph_config: Config, tmp_path: Path
) -> None:
    data = _compacted(graph_config)
    q = _queries(data)[1]
    first = data.vectors.search(q, 1)[0][0]
    paper = data.store.get([first])[first]
    data.close()
    changed = dataclasses.replace(paper, abstract=paper.abstract + " Revised.", version=9)
    writer = DataDir(graph_config)
    writer.store.upsert([changed])  # a new text: its vector in the graph is stale
    writer.close()
    reader = DataDir(graph_config)
    vi = reader.vectors
    assert vi.wait_checked(30) and vi.has_graph
    assert first not in [d for d, _ in vi.search(q, 20)] and vi.vector(first) is None


def test_the_servers_graph_is_read_into_memory_and_answers_alike(graph_config: Config) -> None:
    """``serve`` reads the graph (``[server] graph_in_memory``) where commands map it."""
    mapped = _compacted(graph_config)
    served = DataDir(graph_config, graph_in_memory=True)
    assert served.vectors.has_graph and served.vectors.size == mapped.vectors.size
    for q in _queries(mapped):
        assert served.vectors.search(q, 10) == mapped.vectors.search(q, 10)

    def in_graph_file(vi: VectorIndex) -> bool:
        """Whether the graph's vectors lie in a mapping of its .hnsw file."""
        base = vi._base
        assert base is not None
        address = int(base.flat.codes.data())
        for line in Path("/proc/self/maps").read_text().splitlines():
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if start <= address < end:
                return len(fields) == 6 and fields[5].endswith(".hnsw")
        raise AssertionError("the graph's vectors are in no mapping")

    assert in_graph_file(mapped.vectors) and not in_graph_file(served.vectors)
