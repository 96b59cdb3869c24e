"""Embedding on a real Dask cluster: a scheduler and two worker processes on 127.0.0.1 over TCP.

The vectors must equal the in-process ones (the session fixture ``built_config`` embedded
the same demo papers), a worker killed mid-run must cost nothing (every paper embedded
exactly once), and a second run must find nothing to do.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from papersift.cli import main
from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.vector_segments import model_dir_name, read_segment_keys
from papersift.indexer.build import EMBED_CHUNK, import_files
from papersift.indexer.embed_cluster import ClusterError, embed_on_cluster
from papersift.indexer.identity_refresh import refresh_people
from tests.cluster_kit import Cluster, start_cluster
from tests.corpus import make_config, sample_records, write_jsonl

pytest.importorskip("distributed")
pytestmark = pytest.mark.slow


@pytest.fixture
def cluster(tmp_path: Path, built_config: Config) -> Iterator[Cluster]:
    # The workers find the optimised graph the in-process fixture built (read only).
    c = start_cluster(tmp_path / "cluster", built_config.data_dir / "models")
    yield c
    c.stop()


def fresh_import(root: Path) -> Config:
    root.mkdir(parents=True)
    config = make_config(root)
    data = DataDir(config)
    import_files(data, [write_jsonl(root / "sample.jsonl", sample_records())])
    refresh_people(data)
    data.close()
    return config


def segment_rows(config: Config, model: str) -> list[int]:
    folder = config.data_dir / "vectors" / model_dir_name(model)
    rows: list[int] = []
    for path in sorted(folder.glob("seg-*.npz")):
        rows.extend(read_segment_keys(path, hashes=False)[0].tolist())
    return rows


def vectors_by_id(config: Config) -> dict[str, np.ndarray]:
    data = DataDir(config, create=False)
    try:
        vi = data.vectors
        out = {}
        for docid, paper in data.store.get(list(range(1, data.store.count() + 1))).items():
            vec = vi.vector(docid)
            if vec is not None:
                out[paper.arxiv_id] = vec
        return out
    finally:
        data.close()


def test_cluster_vectors_equal_in_process_and_second_run_is_empty(
    cluster: Cluster, built_config: Config, tmp_path: Path
) -> None:
    config = fresh_import(tmp_path / "c")
    data = DataDir(config, create=False)
    try:
        papers = data.store.count()
        assert papers >= 300
        # The in-process chunk, so the workers see the same batches the fixture's backlog
        # did: the int8 graph quantises each batch's activations with one scale, so a
        # vector moves a little with its batch mates (cosine 0.994-1.0, measured), and only
        # equal batches give equal vectors.
        done = embed_on_cluster(data, cluster.address, chunk=EMBED_CHUNK, compact=False)
        model = data.indexing_embedder.model_id
        assert done == papers
        assert not data.indexing_embedder.loaded  # the coordinator never loads the model
        assert data.store.embedded_count(model) == papers
    finally:
        data.close()
    rows = segment_rows(config, model)
    assert sorted(rows) == list(range(1, papers + 1))  # each paper once

    ours, reference = vectors_by_id(config), vectors_by_id(built_config)
    assert ours.keys() == reference.keys()
    cos = np.array([float(ours[k] @ reference[k]) for k in ours])
    assert cos.min() >= 0.9999, cos.min()

    data = DataDir(config, create=False)
    try:
        assert embed_on_cluster(data, cluster.address) == 0
    finally:
        data.close()
    assert len(segment_rows(config, model)) == papers


def test_a_killed_worker_loses_nothing(cluster: Cluster, tmp_path: Path) -> None:
    config = fresh_import(tmp_path / "k")
    data = DataDir(config, create=False)
    folder = config.data_dir / "vectors" / model_dir_name(data.indexing_embedder.model_id)
    victim = cluster.workers[0]

    def kill_after_first_checkpoint() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not list(folder.glob("seg-*.npz")):
            time.sleep(0.05)
        victim.send_signal(signal.SIGKILL)  # mid-run: it holds a batch (4 in flight, 2 workers)

    killer = threading.Thread(target=kill_after_first_checkpoint)
    killer.start()
    try:
        papers = data.store.count()
        done = embed_on_cluster(data, cluster.address, chunk=16, in_flight=4, compact=False)
        model = data.indexing_embedder.model_id
        embedded = data.store.embedded_count(model)
    finally:
        killer.join()
        data.close()
    assert victim.wait(10) == -signal.SIGKILL
    assert done == embedded == papers
    rows = segment_rows(config, model)
    assert sorted(rows) == list(range(1, papers + 1))  # every paper exactly once


def test_unreachable_scheduler_is_one_clear_error(tmp_path: Path) -> None:
    config = fresh_import(tmp_path / "u")
    data = DataDir(config, create=False)
    try:
        with pytest.raises(ClusterError, match="cannot reach the Dask scheduler") as err:
            embed_on_cluster(data, "tcp://127.0.0.1:9", timeout=2)
        assert "\n" not in str(err.value)
        assert data.store.embedded_count(data.indexing_embedder.model_id) == 0
    finally:
        data.close()


def test_a_host_that_never_answers_is_given_up(tmp_path: Path) -> None:
    """A host that accepts the connection and says nothing (not a Dask scheduler) held
    ``papersift index --cluster`` silent for good: Dask's own timeout does not cover it."""
    config = fresh_import(tmp_path / "s")
    data = DataDir(config, create=False)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # the kernel accepts; no one ever answers
        address = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        start = time.monotonic()
        try:
            with pytest.raises(ClusterError, match=r"no answer from .* within 6 s: is a Dask"):
                embed_on_cluster(data, address, timeout=1)
        finally:
            data.close()
        assert time.monotonic() - start < 30


def test_a_killed_coordinator_resumes(cluster: Cluster, tmp_path: Path) -> None:
    """SIGKILL after the first checkpoint; a second run completes the vectors."""
    config = fresh_import(tmp_path / "r")
    cfg_file = str(config.base_dir / "config.toml")
    folder = config.data_dir / "vectors"
    coordinator = subprocess.Popen(
        [sys.executable, "-m", "papersift", "index", "--cluster", cluster.address,
         "--config", cfg_file],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and not list(folder.glob("*/seg-*.npz")):
        time.sleep(0.05)
    coordinator.send_signal(signal.SIGKILL)
    assert coordinator.wait(10) == -signal.SIGKILL
    data = DataDir(config, create=False)
    try:
        model = data.indexing_embedder.model_id
        papers, before = data.store.count(), data.store.embedded_count(model)
    finally:
        data.close()
    # Killed mid-run: at least one segment is on disk. Its marks may or may not have
    # reached the store (the kill can fall between the two writes); either way the next
    # run must finish the job without counting a vector twice.
    assert list(folder.glob("*/seg-*.npz"))
    assert before < papers
    assert main(["index", "--cluster", cluster.address, "--config", cfg_file, "--json"]) == 0
    data = DataDir(config, create=False)
    try:
        assert data.store.embedded_count(model) == papers
        assert data.vectors.size == papers
    finally:
        data.close()
