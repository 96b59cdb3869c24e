"""The int8 graph ([embedding] quantize): built once, its own model id, close to float32."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from papersift.engine.embed import Embedder, ModelError, default_model_path, default_tokenizer_path
from papersift.engine.quantize import ffn_down_projections
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
    kept = ffn_down_projections(plain.graph_path)
    assert len(kept) == 6  # one per MiniLM layer, left in float32
    assert {n.name for n in graph.graph.node if n.op_type == "MatMul"} >= set(kept)

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
