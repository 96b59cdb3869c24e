"""The server's stats snapshot (home page count, /healthz, /api/v1/stats, the categories a
filter knows) follows papers another process commits as soon as the server has seen them,
not up to its reuse interval later: a reviewer's import showed on the home page ~30 s late,
and a filter on a category it brought was refused meanwhile. Real app, real indexes."""

from __future__ import annotations

from pathlib import Path

from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.search import SearchEngine
from papersift.indexer.build import import_files
from papersift.server.app import create_app
from tests.corpus import demo_records, write_jsonl


def test_stats_follow_another_process_commit(fresh_config: Config, tmp_path: Path) -> None:
    records = demo_records()
    first = [r for r in records[:60] if "cs.GR" not in r["categories"].split()]
    later = [r for r in records if r["categories"].split()[0] == "cs.GR"][:5]
    assert len(later) == 5
    writer = DataDir(fresh_config)
    import_files(writer, [write_jsonl(tmp_path / "first.jsonl", first)])
    engine = SearchEngine(DataDir(fresh_config))
    try:
        with TestClient(create_app(engine, fresh_config)) as client:
            before = client.get("/healthz").json()["papers"]
            assert before > 40
            params = {"category": "cs.GR", "mode": "keyword"}
            assert client.get("/api/v1/search", params=params).status_code == 400  # unknown
            import_files(writer, [write_jsonl(tmp_path / "later.jsonl", later)])
            assert client.get("/healthz").json()["papers"] == before  # not seen yet
            assert engine.refresh()  # as `serve`'s refresh job does every few seconds
            assert client.get("/healthz").json()["papers"] == before + 5
            assert client.get("/api/v1/stats").json()["papers"] == before + 5
            found = client.get("/api/v1/search", params=params)
            assert found.status_code == 200 and found.json()["total"] == 5
    finally:
        engine.close()
        writer.close()
