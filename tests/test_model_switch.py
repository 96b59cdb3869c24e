"""A model change never leaves semantic search without vectors: queries keep the old model's
vectors until the new model's cover as much, then switch, and the two never mix."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.embed import Embedder
from papersift.engine.model_graphs import float32_graph
from papersift.engine.model_id import default_model_path
from papersift.engine.model_id import default_tokenizer_path as vendored_tokenizer
from papersift.engine.model_id import sha256_file as _sha256
from papersift.engine.results import SearchRequest
from papersift.engine.search import open_engine
from papersift.engine.vector_segments import model_dir_name
from papersift.indexer.build import embed_backlog, import_files
from tests.corpus import make_config, sample_records, write_jsonl

pytestmark = pytest.mark.slow  # left out by `make test-fast`

QUERY = "neural networks for language"


@pytest.fixture(scope="module")
def other_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second real model of the same width but another vector space: MiniLM's float32
    graph with its token embeddings perturbed."""
    root = tmp_path_factory.mktemp("other")
    src = default_model_path()
    model = onnx.load(str(float32_graph(src, _sha256(src), root / "f32")))
    table = max(model.graph.initializer, key=lambda t: np.prod(t.dims))  # the vocabulary
    rng = np.random.default_rng(7)
    values = numpy_helper.to_array(table)
    noisy = values + rng.normal(0, 0.05, values.shape).astype(values.dtype)
    table.CopyFrom(numpy_helper.from_array(noisy, table.name))
    path = root / "other" / "model.onnx"
    path.parent.mkdir()
    onnx.save(model, str(path))
    return path


def config_for(root: Path, model: Path | None) -> Config:
    if model is None:  # float32, whose vectors a paper embedded alone reproduces exactly
        return make_config(root, embedding={"quantize": False})
    tokenizer = str(vendored_tokenizer())
    return make_config(
        root, embedding={"model": str(model), "tokenizer": tokenizer, "float32_cache": False}
    )


def top_hit_score(config: Config) -> tuple[str, float, str]:
    engine = open_engine(config)
    try:
        r = engine.search(SearchRequest(QUERY, mode="semantic", page_size=1))
        return r.hits[0].paper.arxiv_id, r.hits[0].score, engine.data.embedder.model_id
    finally:
        engine.close()


def score_with(emb: Embedder, config: Config, arxiv_id: str) -> float:
    data = DataDir(config, create=False)
    try:
        paper = data.store.get([data.store.docid_of(arxiv_id) or 0])
        (p,) = paper.values()
        return float(emb.embed([p.embed_text])[0] @ emb.embed_query(QUERY))
    finally:
        data.close()


def test_queries_keep_the_old_model_until_the_new_one_covers_it(
    tmp_path: Path, other_model: Path
) -> None:
    old_cfg = config_for(tmp_path, None)
    data = DataDir(old_cfg)
    import_files(data, [write_jsonl(tmp_path / "s.jsonl", sample_records(60))])
    papers = data.store.count()
    embed_backlog(data)
    old_id = data.indexing_embedder.model_id
    data.close()
    old_emb = Embedder(default_model_path(), vendored_tokenizer())
    new_emb = Embedder(other_model, vendored_tokenizer())
    assert new_emb.model_id != old_id

    new_cfg = config_for(tmp_path, other_model)  # the lab configures another model
    server = open_engine(new_cfg)  # a running server sees the change on its next refresh
    try:
        assert server.data.embedder.model_id == old_id
        assert server.data.indexing_embedder.model_id == new_emb.model_id

        data = DataDir(new_cfg, create=False)
        assert embed_backlog(data, limit=papers // 2) == papers // 2
        data.close()
        hit, score, used = top_hit_score(new_cfg)
        assert used == old_id  # half covered: still the old vectors, all of them
        assert score == pytest.approx(score_with(old_emb, new_cfg, hit), abs=1e-4)
        assert score != pytest.approx(score_with(new_emb, new_cfg, hit), abs=1e-3)
        assert not server.refresh()  # nothing to switch to yet
        assert server.data.vectors.size == papers
        assert server.data.vectors.folder.name == model_dir_name(old_id)
        stats = server.stats_with_progress()
        assert stats.model_id == old_id and stats.embedded == papers
        assert stats.embedding is not None and stats.embedding.model_id == new_emb.model_id
        assert stats.embedding.embedded == papers // 2

        data = DataDir(new_cfg, create=False)
        assert embed_backlog(data) == papers - papers // 2
        data.close()
        hit, score, used = top_hit_score(new_cfg)
        assert used == new_emb.model_id  # covered: the new vectors, only those
        assert score == pytest.approx(score_with(new_emb, new_cfg, hit), abs=1e-4)

        generation = server.data.vectors_generation
        assert server.refresh()  # the server switches too
        assert server.data.embedder.model_id == new_emb.model_id
        assert server.data.vectors.size == papers
        assert server.data.vectors.folder.name == model_dir_name(new_emb.model_id)
        assert server.data.vectors_generation > generation  # no cached old-model results
    finally:
        server.close()


def test_a_missing_old_model_falls_back_to_the_new_one(tmp_path: Path, other_model: Path) -> None:
    # The old model's files are gone: searching the new model's (partial) vectors beats
    # searching nothing, and it says so in the log.
    copy = tmp_path / "copy" / "model.onnx"
    copy.parent.mkdir()
    copy.write_bytes(other_model.read_bytes())
    cfg = config_for(tmp_path, copy)
    data = DataDir(cfg)
    import_files(data, [write_jsonl(tmp_path / "s.jsonl", sample_records(200))])
    embed_backlog(data)
    data.close()
    copy.unlink()
    new_cfg = config_for(tmp_path, None)
    data = DataDir(new_cfg, create=False)
    try:
        assert data.embedder.model_id == data.indexing_embedder.model_id
    finally:
        data.close()


def test_an_int8_corpus_keeps_its_vectors_when_the_cache_is_turned_off(tmp_path: Path) -> None:
    # The int8 graph is built in the model cache; turning `float32_cache` off makes the
    # configured model the plain one (another space), and queries must keep the int8
    # vectors meanwhile, loading their graph from the cache all the same.
    data = DataDir(make_config(tmp_path, embedding={"quantize": True}))
    import_files(data, [write_jsonl(tmp_path / "s.jsonl", sample_records(60))])
    embed_backlog(data)
    int8_id = data.indexing_embedder.model_id
    data.close()
    assert int8_id.endswith("-int8pc2")
    server = open_engine(
        make_config(tmp_path, embedding={"quantize": True, "float32_cache": False})
    )
    try:
        assert server.data.indexing_embedder.model_id != int8_id
        assert server.data.embedder.model_id == int8_id
        r = server.search(SearchRequest(QUERY, mode="semantic", page_size=3))
        assert len(r.hits) == 3
    finally:
        server.close()
