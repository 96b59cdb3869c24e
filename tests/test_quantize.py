"""The int8 graph ([embedding] quantize): built once, its own model id, close to float32."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from papersift.engine.embed import Embedder, ModelError
from papersift.engine.model_id import default_model_path, default_tokenizer_path
from papersift.engine.quantize import attention_nodes, ffn_down_projections, kept_in_float32
from tests.corpus import sample_records

pytestmark = pytest.mark.slow  # left out by `make test-fast`


@pytest.fixture(scope="module")
def texts() -> list[str]:
    return [f"{r['title']}. {r['abstract']}" for r in sample_records(100)]


def test_int8_graph_is_built_once_with_its_own_id(tmp_path: Path, texts: list[str]) -> None:
    cache = tmp_path / "models"
    plain = Embedder(default_model_path(), default_tokenizer_path(), cache_dir=cache)
    q = Embedder(default_model_path(), default_tokenizer_path(), cache_dir=cache, quantize=True)
    assert q.model_id.startswith(plain.model_id) and q.model_id != plain.model_id
    assert not q.loaded  # nothing is built before the first use
    cos = (q.embed(texts) * plain.embed(texts)).sum(axis=1)
    assert float(cos.min()) > 0.98 and float(cos.mean()) < 0.99999  # close, not the same

    graph = onnx.load(str(q.graph_path))
    ops = {n.op_type for n in graph.graph.node}
    assert {"DynamicQuantizeMatMul", "QAttention"} & ops or "MatMulInteger" in ops
    ffn, att = ffn_down_projections(plain.graph_path), attention_nodes(plain.graph_path)
    assert len(ffn) == len(att) == 6  # one of each per MiniLM layer
    kept = kept_in_float32(plain.graph_path)
    assert kept == [ffn[0], ffn[1], ffn[2], att[3]]  # the measured four, left in float32
    names = {n.op_type: set() for n in graph.graph.node}
    for n in graph.graph.node:
        names[n.op_type].add(n.name)
    assert names["MatMul"] >= set(ffn[:3]) and att[3] in names["Attention"]
    assert not set(ffn[3:]) & names["MatMul"]  # the other down-projections are quantised

    built = q.graph_path.stat().st_mtime_ns
    again = Embedder(default_model_path(), default_tokenizer_path(), cache_dir=cache,
                     quantize=True)  # fmt: skip
    assert np.allclose(again.embed(texts[:4]), q.embed(texts[:4]), atol=1e-6)
    assert again.graph_path.stat().st_mtime_ns == built  # loaded, not rebuilt


def test_int8_needs_a_cache_and_never_falls_back_silently(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cache_dir"):
        Embedder(default_model_path(), default_tokenizer_path(), quantize=True)
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache folder should be")
    q = Embedder(default_model_path(), default_tokenizer_path(), cache_dir=blocker,
                 quantize=True)  # fmt: skip
    with pytest.raises(ModelError, match="int8 graph"):
        q.embed(["x"])
