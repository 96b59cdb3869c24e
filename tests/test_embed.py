"""The sentence embedder against the real bundled model and tokenizer (no mocks)."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import logging
import os
import shutil
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from tokenizers import Tokenizer

from papersift.core.config_search import EmbeddingConfig
from papersift.core.errors import PapersiftError
from papersift.core.resources import demo_corpus_path
from papersift.engine import model_graphs
from papersift.engine.embed import Embedder, ModelError
from papersift.engine.model_id import (
    default_model_id,
    default_model_path,
    default_tokenizer_path,
)
from papersift.engine.model_id import derive_model_id as _derive_model_id

# Real demo papers on clearly different topics, looked up by id.
TOPICS = {
    "2401.10241": "pipeline parallel training schedule that removes idle bubbles",
    "cmp-lg/9405001": "estimating probabilities of word pairs never seen in training data",
    "0707.1913": "removing license headers and preambles from digitised public-domain books",
    "0907.4740": "does appearing at the top of the daily listing bring more citations",
}


def embedder_for(**kwargs: object) -> Embedder:
    emb = Embedder(default_model_path(), default_tokenizer_path(), **kwargs)  # type: ignore[arg-type]
    emb.load()  # the session loads on first use: these tests look at what loading does
    return emb


@pytest.fixture(scope="module")
def emb() -> Embedder:
    """The bundled model as shipped, small batches; read-only."""
    return embedder_for(batch_size=4)


@pytest.fixture(scope="module")
def abstracts() -> dict[str, str]:
    found: dict[str, str] = {}
    with gzip.open(demo_corpus_path(), "rt", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            if rec["id"] in TOPICS or len(found) < 12:
                found[rec["id"]] = f"{rec['title']}. {' '.join(rec['abstract'].split())}"
    assert set(TOPICS) <= set(found)
    return found


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray((a * b).sum(axis=1))


def test_shape_dtype_and_unit_norm(emb: Embedder, abstracts: dict[str, str]) -> None:
    texts = [*list(abstracts.values())[:2], "", "BM25"]
    vecs = emb.embed(texts)
    assert vecs.shape == (len(texts), emb.dim) == (4, 384)
    assert vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert emb.embed([]).shape == (0, 384)
    q = emb.embed_query("dense retrieval")
    assert q.shape == (384,) and q.dtype == np.float32


def test_order_kept_and_padding_masked(emb: Embedder, abstracts: dict[str, str]) -> None:
    # Very different lengths, neither sorted nor reverse-sorted: batches mix short and long.
    long = list(abstracts.values())
    texts = ["retrieval", long[0], "a", long[1] + " " + long[2], "graph neural networks"]
    mixed = emb.embed(texts)  # batch_size 4: two batches, each padded to its longest
    alone = np.vstack([emb.embed_query(t) for t in texts])
    assert cosines(mixed, alone).min() >= 0.9999
    # Distinct texts got distinct rows (a mix-up of order would pair them wrongly).
    sims = mixed @ alone.T
    assert (sims.argmax(axis=1) == np.arange(len(texts))).all()


def test_matches_plain_reference_pooling(emb: Embedder, abstracts: dict[str, str]) -> None:
    """Mean of the raw model output over one unpadded text, computed independently."""
    text = next(iter(abstracts.values()))
    tok = Tokenizer.from_file(str(default_tokenizer_path()))
    tok.no_padding()
    tok.enable_truncation(256)
    ids = np.array([tok.encode(text).ids], np.int64)
    session = ort.InferenceSession(str(default_model_path()), providers=["CPUExecutionProvider"])
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": 0 * ids}
    ref = session.run(["last_hidden_state"], feed)[0][0].mean(axis=0)
    ref /= np.linalg.norm(ref)
    assert float(emb.embed_query(text) @ ref) >= 0.9999


def test_query_is_closest_to_its_topic(emb: Embedder, abstracts: dict[str, str]) -> None:
    ids = list(TOPICS)
    docs = emb.embed([abstracts[i] for i in ids])
    queries = emb.embed(list(TOPICS.values()))
    sims = queries @ docs.T
    assert [ids[j] for j in sims.argmax(axis=1)] == ids
    # ...and clearly so, not by a rounding error.
    margins = np.diag(sims) - np.where(np.eye(len(ids), dtype=bool), -1, sims).max(axis=1)
    assert margins.min() > 0.05


def test_truncation_at_max_length(emb: Embedder, abstracts: dict[str, str]) -> None:
    long = " ".join(abstracts.values())  # well over 256 tokens
    tail = " Unrelated closing remarks about cooking pasta and the weather in spring."
    base = emb.embed_query(long)
    assert float(base @ emb.embed_query(long + tail)) >= 0.9999  # the tail is cut off
    short = embedder_for(max_length=32)
    assert float(short.embed_query(long) @ base) < 0.99  # fewer tokens read: another vector
    assert float(short.embed_query("BM25") @ emb.embed_query("BM25")) >= 0.9999
    assert short.model_id == emb.model_id  # same vector space, see engine.embed


@pytest.fixture(scope="module")
def fused_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A models/ folder holding the fused graph, built once for this module."""
    cache = tmp_path_factory.mktemp("fused") / "models"
    embedder_for(cache_dir=cache)
    return cache


@pytest.fixture(scope="module")
def demo_texts() -> list[str]:
    """128 real demo papers spread over the corpus, as the indexer embeds them."""
    with gzip.open(demo_corpus_path(), "rt", encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh]
    return [" ".join(f"{r['title']}. {r['abstract']}".split()) for r in records[::48][:128]]


@pytest.mark.slow
def test_max_length_is_bounded_by_the_models_positions(abstracts: dict[str, str]) -> None:
    """``[embedding] max_length`` stops at 512, the positions of the bundled model: one more
    token and the model fails on a long text (a traceback from onnxruntime, before the
    setting had a maximum)."""
    field = next(f for f in dataclasses.fields(EmbeddingConfig) if f.name == "max_length")
    limit = field.metadata["maximum"]
    text = " ".join(abstracts.values())
    tok = Tokenizer.from_file(str(default_tokenizer_path()))
    tok.no_truncation()
    assert len(tok.encode(text).ids) > limit + 1
    assert embedder_for(max_length=limit).embed_query(text).shape == (384,)
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.Fail, match=f"512 by {limit + 1}"):
        embedder_for(max_length=limit + 1).embed_query(text)


def test_fused_cache_built_once_and_matches(
    emb: Embedder, abstracts: dict[str, str], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="papersift.engine.model_graphs")
    cache = tmp_path / "models"
    first = embedder_for(batch_size=4, cache_dir=cache)
    assert first.graph_path.parent == cache and "-fused" in first.graph_path.name
    assert [p.name for p in cache.iterdir()] == [first.graph_path.name]  # no temp file left
    assert first.graph_path.stat().st_size > default_model_path().stat().st_size * 3  # float32
    built = first.graph_path.stat()
    assert sum("saved the fused graph" in r.message for r in caplog.records) == 1
    assert not any(r.levelno >= logging.WARNING for r in caplog.records)

    second = embedder_for(batch_size=4, cache_dir=cache)
    assert second.graph_path == first.graph_path
    again = second.graph_path.stat()
    assert (again.st_ino, again.st_mtime_ns) == (built.st_ino, built.st_mtime_ns)
    assert sum("saved the fused graph" in r.message for r in caplog.records) == 1

    texts = [*list(abstracts.values())[:3], "BM25"]
    assert cosines(second.embed(texts), emb.embed(texts)).min() >= 0.9999
    assert second.model_id == emb.model_id == default_model_id()


@pytest.mark.slow
def test_fused_graph_fuses_and_equals_the_plain_session(
    fused_cache: Path, demo_texts: list[str]
) -> None:
    """The vector space must not move: fused vectors equal the shipped graph's, run by a
    plain onnxruntime session, on real papers in padded batches of every size."""
    import onnx

    fused = embedder_for(batch_size=8, cache_dir=fused_cache)
    ops = [n.op_type for n in onnx.load(str(fused.graph_path)).graph.node]
    assert ops.count("Attention") == 6 and ops.count("BiasGelu") == 6
    assert "Softmax" not in ops and "Erf" not in ops

    tok = Tokenizer.from_file(str(default_tokenizer_path()))
    tok.no_padding()
    tok.enable_truncation(256)
    session = ort.InferenceSession(str(default_model_path()), providers=["CPUExecutionProvider"])
    encodings = tok.encode_batch(demo_texts)
    ref = np.empty((len(demo_texts), 384), np.float32)
    for i in range(0, len(encodings), 5):  # other batches than the embedder's, unsorted
        rows = [e.ids for e in encodings[i : i + 5]]
        width = max(map(len, rows))
        ids = np.array([r + [0] * (width - len(r)) for r in rows], np.int64)
        mask = (np.arange(width)[None, :] < np.array([len(r) for r in rows])[:, None]).astype(
            np.int64
        )
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": 0 * ids}
        hidden = session.run(["last_hidden_state"], feed)[0]
        pooled = (hidden * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        ref[i : i + 5] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    lengths = sorted(len(e.ids) for e in encodings)
    assert lengths[0] < 100 and lengths[-1] == 256  # short and truncated papers both
    for texts, want in ((demo_texts, ref), (demo_texts[:3], ref[:3])):
        vecs = fused.embed(texts)
        assert np.abs(vecs - want).max() < 1e-4
        assert cosines(vecs, want).min() > 0.9999
    one = fused.embed_query(demo_texts[7])  # a batch of one, unpadded
    assert np.abs(one - ref[7]).max() < 1e-4


@pytest.mark.slow
def test_broken_fused_cache_is_rebuilt(
    fused_cache: Path, emb: Embedder, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = tmp_path / "models"
    cache.mkdir()
    name = next(p.name for p in fused_cache.iterdir() if "-fused" in p.name)
    (cache / name).write_bytes(os.urandom(4096))  # a corrupt file under the cached name
    rebuilt = embedder_for(cache_dir=cache)
    assert any(
        r.levelno == logging.WARNING and "does not load" in r.message for r in caplog.records
    )
    assert rebuilt.graph_path == cache / name
    assert (cache / name).stat().st_size == (fused_cache / name).stat().st_size
    assert float(rebuilt.embed_query("BM25") @ emb.embed_query("BM25")) >= 0.9999


def test_fusion_failure_falls_back_to_float32(
    emb: Embedder, tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:

    def broken(model: object) -> object:
        raise RuntimeError("simulated fusion bug")

    monkeypatch.setattr(model_graphs, "fuse", broken)
    fallback = embedder_for(cache_dir=tmp_path / "models")
    assert fallback.graph_path.name.endswith("-f32.onnx")
    assert [p.name for p in (tmp_path / "models").iterdir()] == [fallback.graph_path.name]
    assert any("simulated fusion bug" in r.message for r in caplog.records)
    assert float(fallback.embed_query("BM25") @ emb.embed_query("BM25")) >= 0.9999


def test_fused_graph_that_changes_the_output_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build checks the fused graph against the unfused one before keeping it."""

    real = model_graphs.fuse

    def off_by_scale(model: object) -> object:
        fused, counts = real(model)  # type: ignore[arg-type]
        for node in fused.graph.node:
            if node.op_type == "Attention":
                for attr in node.attribute:
                    if attr.name == "scale":
                        attr.f *= 2  # a wrong fusion: sharper attention
        return fused, counts

    monkeypatch.setattr(model_graphs, "fuse", off_by_scale)
    with pytest.raises(ValueError, match="differs"):
        model_graphs.fused_graph(default_model_path(), "ab" * 32, tmp_path / "models")
    assert [p.name for p in (tmp_path / "models").iterdir()] == []


def test_float32_cache_failure_falls_back(
    emb: Embedder, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache folder should be")
    fallback = embedder_for(cache_dir=blocker, model_id="mine")
    assert fallback.graph_path == default_model_path()
    assert fallback.model_id == "mine"
    assert any(r.levelno == logging.WARNING for r in caplog.records)
    assert float(fallback.embed_query("BM25") @ emb.embed_query("BM25")) >= 0.9999


def test_model_id_follows_the_files(emb: Embedder, tmp_path: Path) -> None:
    assert emb.model_id == default_model_id() == "all-MiniLM-L6-v2-onnx-int8"
    copy = tmp_path / "minilm" / "model.onnx"
    copy.parent.mkdir()
    shutil.copyfile(default_model_path(), copy)
    assert Embedder(copy, default_tokenizer_path()).model_id == emb.model_id  # same bytes

    # Other model bytes: named by the file (or its folder) and a hash of its content.
    tok_sha = hashlib.sha256(default_tokenizer_path().read_bytes()).hexdigest()
    assert _derive_model_id(copy, "ab" * 32, tok_sha) == "minilm-abababababab"
    assert _derive_model_id(tmp_path / "bge small.onnx", "cd" * 32, tok_sha) == (
        "bge_small-cdcdcdcdcdcd"
    )
    # Another tokenizer gives other vectors from the same model.
    spec = json.loads(default_tokenizer_path().read_text(encoding="utf-8"))
    spec["normalizer"]["lowercase"] = False
    tok = tmp_path / "tokenizer.json"
    tok.write_text(json.dumps(spec), encoding="utf-8")
    assert Embedder(copy, tok).model_id.startswith(f"{emb.model_id}-tok")


def test_bad_paths_give_one_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.onnx"
    with pytest.raises(ModelError, match="not found") as err:
        Embedder(missing, default_tokenizer_path())
    assert str(missing) in str(err.value) and "\n" not in str(err.value)
    assert isinstance(err.value, PapersiftError)

    junk = tmp_path / "junk.onnx"
    junk.write_bytes(os.urandom(256))
    for cache in (None, tmp_path / "cache"):
        with pytest.raises(ModelError, match="cannot load ONNX model") as err:
            Embedder(junk, default_tokenizer_path(), cache_dir=cache).load()
        assert str(junk) in str(err.value)

    with pytest.raises(ModelError, match="tokenizer not found"):
        Embedder(default_model_path(), tmp_path / "tokenizer.json")
    with pytest.raises(ModelError, match=r"not a tokenizer\.json"):
        Embedder(default_model_path(), junk)
