"""Where a data directory keeps its optimised model graph: its own ``models`` folder, or the
folder ``PAPERSIFT_MODEL_CACHE`` names, shared by every directory (engine.model_graphs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from papersift.engine.datadir import DataDir
from tests.corpus import make_config


def _graph_of(root: Path) -> Path:
    root.mkdir()
    data = DataDir(make_config(root))
    try:
        emb = data.indexing_embedder
        emb.embed(["a first embedding builds the graph"])
        return emb.graph_path
    finally:
        data.close()


@pytest.mark.slow
def test_graph_in_the_data_directory_unless_a_cache_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PAPERSIFT_MODEL_CACHE", raising=False)
    own = _graph_of(tmp_path / "own")
    assert own.parent == tmp_path / "own" / "data" / "models"
    assert own.is_file()

    shared = tmp_path / "shared"
    monkeypatch.setenv("PAPERSIFT_MODEL_CACHE", str(shared))
    first, second = _graph_of(tmp_path / "a"), _graph_of(tmp_path / "b")
    assert first == second == shared / own.name  # one file, named by the model's bytes
    assert first.read_bytes() == own.read_bytes()
    assert not (tmp_path / "a" / "data" / "models").exists()
    assert not (tmp_path / "b" / "data" / "models").exists()
