"""The keyword index written again as one segment (``engine.lexical_rewrite``): after an
import that scattered it, in maintenance, and in a full replay; the same answers as an index
built in one go; a stop or a kill -9 before its commit leaves the old index whole."""

from __future__ import annotations

import random
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from papersift.core.config import Config
from papersift.doctor import diagnose
from papersift.engine import lexical_rewrite
from papersift.engine.datadir import DataDir
from papersift.engine.lexical_rewrite import Stopped, needs_compaction, rewrite, segment_sizes
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine
from papersift.indexer.build import import_files
from papersift.indexer.harvest import reindex
from papersift.indexer.snapshot import record_to_paper
from tests.corpus import make_config, sample_records, write_jsonl
from tests.reliability_kit import PAPERSIFT, check, kill_in_commit, paper_set, run

QUERIES = ("neural networks", "quantum error correction", "the galaxy", "graph", "au:smith")


def _records(every: int = 20) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The sample papers in two halves."""
    records = sample_records(every)
    return records[: len(records) // 2], records[len(records) // 2 :]


def _answers(config: Config) -> list[list[tuple[str, float]]]:
    """Every keyword answer to QUERIES, (arXiv id, score) in order."""
    with SearchEngine(DataDir(config, create=False)) as engine:
        return [
            [(h.paper.arxiv_id, round(h.score, 5)) for h in engine.search(
                SearchRequest(q, mode="keyword", page_size=100)
            ).hits]
            for q in QUERIES
        ]  # fmt: skip


def _import(config: Config, *files: Path) -> None:
    data = DataDir(config)
    try:
        for f in files:
            import_files(data, [f])
    finally:
        data.close()


def test_an_import_that_scatters_the_index_leaves_one_segment(tmp_path: Path) -> None:
    first, second = _records()
    a = write_jsonl(tmp_path / "a.jsonl", first)
    b = write_jsonl(tmp_path / "b.jsonl", second)
    (tmp_path / "whole").mkdir()
    (tmp_path / "parts").mkdir()
    whole = make_config(tmp_path / "whole")
    _import(whole, write_jsonl(tmp_path / "all.jsonl", first + second))
    parts = make_config(tmp_path / "parts")
    data = DataDir(parts)
    try:
        import_files(data, [a])
        assert len(segment_sizes(data.lexical.path)) == 1
        import_files(data, [b])  # its commit added a segment holding half the papers ...
        # ... so it was written again as one.
        assert [live for live, _ in segment_sizes(data.lexical.path)] == [len(first + second)]
        assert data.lexical.num_docs == len(first + second)
        assert not needs_compaction(data.lexical, data.store)
    finally:
        data.close()
    assert _answers(parts) == _answers(whole)
    assert any(_answers(whole)), "the queries find papers"


def test_a_few_new_papers_are_not_worth_a_rewrite(tmp_path: Path) -> None:
    records = sample_records()
    config = make_config(tmp_path)
    _import(config, write_jsonl(tmp_path / "a.jsonl", records[:-10]))
    _import(config, write_jsonl(tmp_path / "b.jsonl", records[-10:]))
    data = DataDir(config, create=False)
    try:
        sizes = segment_sizes(data.lexical.path)
        assert [live for live, _ in sizes] == [len(records) - 10, 10]  # 3% outside
        assert not needs_compaction(data.lexical, data.store)
        assert not data.compact_lexical()
    finally:
        data.close()


def _scattered(tmp_path: Path) -> tuple[Config, DataDir, int]:
    """A data directory whose keyword index holds half the papers in each of two segments
    (a second writer's commit, without an import's compaction), open; and its papers."""
    first, second = _records()
    config = make_config(tmp_path)
    _import(config, write_jsonl(tmp_path / "a.jsonl", first))
    data = DataDir(config, create=False)
    _, changed = data.store.upsert([record_to_paper(r) for r in second])
    data.lexical.upsert(changed)
    data.commit_lexical(data.store.seq)
    data.lexical.close_writer()
    return config, data, len(first + second)


def test_maintenance_compacts_and_other_processes_reload(tmp_path: Path) -> None:
    config, data, _ = _scattered(tmp_path)
    try:
        assert needs_compaction(data.lexical, data.store)
        assert "in 2 segments (`papersift reindex` writes them as one" in _doctor_says(config)
        with SearchEngine(DataDir(config, create=False)) as reader:  # as a server holds it
            assert reader.data.lexical.index.searcher().num_segments == 2
            reindex(data)  # the weekly maintenance job
            assert len(segment_sizes(data.lexical.path)) == 1
            # The store's sequence did not move; the rewrite alone tells the reader.
            assert reader.refresh()
            assert reader.data.lexical.index.searcher().num_segments == 1
            result = reader.search(SearchRequest("neural networks", mode="keyword"))
            assert result.total > 0
    finally:
        data.close()
    assert "segments" not in _doctor_says(config)


def _doctor_says(config: Config) -> str:
    """What ``papersift doctor`` says of the keyword index."""
    (check,) = [c for c in diagnose(config) if c.name == "lexical index"]
    assert check.status == "OK", check
    return check.detail


def test_a_stopped_rewrite_changes_nothing(tmp_path: Path) -> None:
    _, data, papers = _scattered(tmp_path)
    try:
        before = segment_sizes(data.lexical.path)
        rewritten = data.store.get_meta(lexical_rewrite.LAST_REWRITE)  # the first import's
        stop = threading.Event()
        stop.set()
        with pytest.raises(Stopped):
            rewrite(data.lexical, data.store, stop=stop)
        assert not data.compact_lexical(stop=stop)
        data.lexical.reload()
        assert segment_sizes(data.lexical.path) == before
        assert data.lexical.num_docs == papers
        assert data.store.get_meta(lexical_rewrite.LAST_REWRITE) == rewritten
        assert data.compact_lexical()  # and the next chance does it
        assert len(segment_sizes(data.lexical.path)) == 1
        assert data.lexical.num_docs == papers
    finally:
        data.close()


def test_a_full_replay_writes_one_segment(tmp_path: Path) -> None:
    first, second = _records()
    config = make_config(tmp_path)
    _import(config, write_jsonl(tmp_path / "a.jsonl", first))
    _import(config, write_jsonl(tmp_path / "b.jsonl", second[:5]))  # two segments
    expected = _answers(config)
    root = config.data_dir
    shutil.rmtree(root / "lexical")  # as `papersift doctor --fix` rebuilds it
    data = DataDir(config, create=False)
    try:
        data.reset_lexical()
        assert data.sync_lexical() == len(first) + 5
        assert len(segment_sizes(data.lexical.path)) == 1
        assert data.store.get_meta(lexical_rewrite.LAST_REWRITE) is not None  # rewritten
    finally:
        data.close()
    assert _answers(config) == expected


@pytest.mark.slow
def test_import_killed_while_rewriting_the_index(tmp_path: Path) -> None:
    first, second = _records(every=12)
    config = make_config(tmp_path)
    _import(config, write_jsonl(tmp_path / "a.jsonl", first))
    source = write_jsonl(tmp_path / "b.jsonl", second)
    config_path = tmp_path / "config.toml"
    cmd = [*PAPERSIFT, "import", "--config", str(config_path), str(source)]
    # The second new segment is the rewrite's (the first is the import's own commit).
    outcome = kill_in_commit(cmd, config.data_dir / "lexical", random.Random(5), nth=2)
    assert check(config_path) == [], outcome
    run(cmd)
    assert check(config_path) == []
    assert len(paper_set(config_path)) == len({str(r["id"]) for r in first + second})
    data = DataDir(config, create=False)
    try:
        assert len(segment_sizes(data.lexical.path)) == 1
    finally:
        data.close()
