"""Shared fixtures: one small real index (real Tantivy, FAISS and ONNX model) per session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.search import SearchEngine, open_engine
from papersift.indexer.build import import_files, index_backlog
from tests.corpus import make_config, sample_records, write_jsonl


@pytest.fixture(scope="session", autouse=True)
def shared_model_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One optimised-graph cache for the session's data directories and the processes the
    tests start (``PAPERSIFT_MODEL_CACHE``): each directory would otherwise build its own
    graph (~2 s, 88 MB). Tests of the cache itself pass their own ``cache_dir``."""
    cache = tmp_path_factory.mktemp("model-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PAPERSIFT_MODEL_CACHE", str(cache))
        yield cache


@pytest.fixture(scope="session")
def built_config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    """~320 real demo papers, imported and fully embedded. Treat as read-only."""
    root = tmp_path_factory.mktemp("built")
    config = make_config(root)
    source = write_jsonl(root / "sample.jsonl", sample_records())
    data = DataDir(config)
    import_files(data, [source])
    index_backlog(data)
    data.close()
    return config


@pytest.fixture(scope="session")
def engine(built_config: Config) -> Iterator[SearchEngine]:
    eng = open_engine(built_config)
    yield eng
    eng.close()


@pytest.fixture
def fresh_config(tmp_path: Path) -> Config:
    """An empty data directory of this test's own."""
    return make_config(tmp_path)


@pytest.fixture
def small(fresh_config: Config) -> Config:
    """~30 real demo papers imported (keyword index only), in this test's own directory."""
    source = write_jsonl(fresh_config.base_dir / "s.jsonl", sample_records(every=200))
    data = DataDir(fresh_config)
    import_files(data, [source])
    data.close()
    return fresh_config
