"""Import and index building on real papers: re-import, new versions, crashes, versions."""

from __future__ import annotations

import copy
import gzip
import json
import lzma
import re
import threading
from pathlib import Path

import numpy as np
import pytest

from papersift.core.config import Config
from papersift.core.errors import IndexVersionError
from papersift.engine.datadir import MANIFEST, SCHEMA_VERSION, DataDir
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine, open_engine
from papersift.indexer.build import embed_backlog, import_files
from tests.corpus import demo_records, write_jsonl


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return demo_records()[:40]


def test_import_counts_reimport_and_compression(
    fresh_config: Config, tmp_path: Path, records: list[dict]
) -> None:
    plain = write_jsonl(tmp_path / "a.jsonl", records)
    gz = tmp_path / "a.jsonl.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    xz = tmp_path / "a.jsonl.xz"
    xz.write_bytes(lzma.compress(plain.read_bytes()))
    data = DataDir(fresh_config)
    first = import_files(data, [plain])
    assert (first.read, first.added, first.updated, first.unchanged) == (40, 40, 0, 0)
    seq = data.store.seq
    for path in (plain, gz, xz):  # same papers again, compressed or not: nothing changes
        again = import_files(data, [path])
        assert (again.added, again.updated, again.unchanged) == (0, 0, 40)
    assert data.store.seq == seq
    assert data.lexical.num_docs == 40
    assert json.loads((data.root / MANIFEST).read_text())["papers"] == 40
    data.close()


@pytest.mark.parametrize(("limit", "bar_end"), [(10, "10/10"), (100, "100/100")])
def test_a_limited_import_shows_progress_in_papers(
    fresh_config: Config,
    tmp_path: Path,
    records: list[dict],
    capsys: pytest.CaptureFixture[str],
    limit: int,
    bar_end: str,
) -> None:
    """``import --limit 100000`` of a big file: the bar follows the papers, not the share of
    the file read (which said 14% when the import was nearly done); a file shorter than the
    limit still ends the bar full."""
    data = DataDir(fresh_config)
    report = import_files(data, [write_jsonl(tmp_path / "a.jsonl", records)], limit=limit,
                          progress=True)  # fmt: skip
    data.close()
    assert report.read == min(limit, len(records))
    lines = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()
    last = [line for line in lines if line.startswith("import a.jsonl")][-1]
    assert "100%" in last and bar_end in last and "paper" in last, last
    # A first import then writes the keyword index, with a bar of its own.
    assert "writing the segment" in [line for line in lines if "keyword index" in line][-1]


def test_malformed_lines_are_reported_and_skipped(
    fresh_config: Config, tmp_path: Path, records: list[dict]
) -> None:
    lines = [json.dumps(r) for r in records[:5]]
    lines.insert(2, "{not json")
    lines.insert(4, json.dumps({"id": "", "title": "no id"}))
    lines.append(json.dumps(records[5])[:50])  # truncated last line
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = DataDir(fresh_config)
    report = import_files(data, [path])
    data.close()
    assert report.added == 5
    assert [s.line for s in report.skipped] == [3, 5, 8]
    assert all(s.reason for s in report.skipped)


@pytest.mark.slow
def test_newer_version_replaces_older_everywhere(
    fresh_config: Config, tmp_path: Path, records: list[dict]
) -> None:
    data = DataDir(fresh_config)
    import_files(data, [write_jsonl(tmp_path / "v1.jsonl", records[:10])])
    embed_backlog(data)
    target = copy.deepcopy(records[3])
    old_title = target["title"]
    target["title"] = "Zyxwvut quasiparticle bookkeeping for tokenisers"
    target["versions"] = [
        *target["versions"],
        {"version": f"v{len(target['versions']) + 1}", "created": "Mon, 1 Jun 2026 00:00:00 GMT"},
    ]
    multi = next(r for r in records[:10] if len(r["versions"]) > 1)
    stale = copy.deepcopy(multi)
    stale["title"] = "An older version must not win"
    stale["versions"] = stale["versions"][:1]
    report = import_files(data, [write_jsonl(tmp_path / "v2.jsonl", [target, stale])])
    assert report.updated == 1 and report.unchanged == 1
    engine = SearchEngine(data)
    hits = engine.search(SearchRequest("zyxwvut", mode="keyword")).hits
    assert [h.paper.arxiv_id for h in hits] == [target["id"]]
    assert hits[0].paper.version == len(target["versions"])
    old = engine.search(SearchRequest(f'ti:"{old_title}"', mode="keyword")).hits
    assert target["id"] not in {h.paper.arxiv_id for h in old}
    # Its text changed, so it is re-embedded; the untouched ones are not.
    assert data.store.count() - data.store.embedded_count(data.embedder.model_id) == 1
    assert embed_backlog(data) == 1
    engine.close()


@pytest.mark.slow
def test_interrupted_embedding_resumes_without_loss(
    fresh_config: Config, tmp_path: Path, records: list[dict]
) -> None:
    data = DataDir(fresh_config)
    import_files(data, [write_jsonl(tmp_path / "a.jsonl", records)])
    stop = threading.Event()
    # Stop after the first checkpoint: what was checkpointed stays, the rest is backlog.
    original = data.add_vectors

    def add_then_stop(*args: object) -> None:
        original(*args)  # type: ignore[arg-type]
        stop.set()

    data.add_vectors = add_then_stop  # type: ignore[method-assign]
    assert embed_backlog(data, stop=stop, chunk=16) == 16
    data.close()

    # A crash after a segment was written but before the store recorded it: re-embedded,
    # and the duplicate segment entry collapses to one vector.
    data = DataDir(fresh_config)
    row = data.store.backlog(data.embedder.model_id, 1)[0]
    vec = data.embedder.embed([row[1]])
    data.vectors.write_segment(np.asarray([row[0]], np.int64), [row[2]], vec)
    assert data.store.embedded_count(data.embedder.model_id) == 16
    assert embed_backlog(data, chunk=16) == len(records) - 16
    # The run's measured rate is kept for `doctor`'s estimate of a backlog.
    assert (data.embedding_progress().rate or 0) > 0
    data.close()

    engine = open_engine(fresh_config)
    stats = engine.stats()
    assert stats.embedded == stats.papers == len(records)
    assert engine.data.vectors.size == len(records)
    assert len(engine.data.vectors.segments()) == 1  # compacted
    engine.close()


def test_lexical_index_catches_up_after_a_crash(
    fresh_config: Config, tmp_path: Path, records: list[dict]
) -> None:
    data = DataDir(fresh_config)
    import_files(data, [write_jsonl(tmp_path / "a.jsonl", records[:5])])
    # The store committed, the process died before the Tantivy commit.
    from papersift.indexer.snapshot import record_to_paper

    data.store.upsert([record_to_paper(r) for r in records[5:12]])
    assert data.lexical.num_docs == 5
    data.close()
    engine = open_engine(fresh_config)
    assert engine.data.lexical.num_docs == 12
    got = engine.search(SearchRequest(records[8]["id"], mode="keyword"))
    assert got.direct is not None
    result = engine.search(SearchRequest(records[8]["title"], mode="keyword"))
    assert result.hits[0].paper.arxiv_id == records[8]["id"]
    engine.close()


def _built_with_schema(config: Config, tmp_path: Path, records: list[dict], version: int) -> Path:
    """Import ``records``, then make the manifest claim index schema ``version``."""
    data = DataDir(config)
    import_files(data, [write_jsonl(tmp_path / "a.jsonl", records)])
    data.close()
    manifest = config.data_dir / MANIFEST
    content = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**content, "schema_version": version}))
    return manifest


def test_incompatible_manifest_fails_with_rebuild_hint(
    fresh_config: Config, tmp_path: Path, records: list[dict]
) -> None:
    _built_with_schema(fresh_config, tmp_path, records[:3], 999)
    with pytest.raises(IndexVersionError, match="rebuild"):
        open_engine(fresh_config)


def test_previous_schema_rebuilds_only_the_keyword_index(
    fresh_config: Config, tmp_path: Path, records: list[dict]
) -> None:
    manifest = _built_with_schema(fresh_config, tmp_path, records[:5], 3)
    (fresh_config.data_dir / "lexical" / "meta.json").write_text("damaged by the old version")
    engine = open_engine(fresh_config)
    assert json.loads(manifest.read_text())["schema_version"] == SCHEMA_VERSION
    assert engine.data.lexical.num_docs == 5
    hit = engine.search(SearchRequest(records[3]["title"], mode="keyword")).hits[0]
    assert hit.paper.arxiv_id == records[3]["id"]
    engine.close()


def test_foreign_directory_is_not_touched(fresh_config: Config) -> None:
    fresh_config.data_dir.mkdir(parents=True)
    (fresh_config.data_dir / "notes.txt").write_text("mine")
    with pytest.raises(IndexVersionError, match="not a papersift data directory"):
        DataDir(fresh_config)
    assert sorted(p.name for p in fresh_config.data_dir.iterdir()) == ["notes.txt"]


@pytest.mark.slow
def test_reader_loads_a_checkpoint_before_the_store_records_it(
    fresh_config: Config, tmp_path: Path, records: list[dict]
) -> None:
    """Another process's segment is usable as soon as it exists; stale vectors never are."""
    writer = DataDir(fresh_config)
    import_files(writer, [write_jsonl(tmp_path / "a.jsonl", records[:6])])
    reader = DataDir(fresh_config)
    assert reader.vectors.size == 0
    rows = writer.store.backlog(writer.embedder.model_id, 6)
    vecs = writer.embedder.embed([text for _, text, _ in rows])
    ids = np.asarray([d for d, _, _ in rows], np.int64)
    hashes = [h for _, _, h in rows]
    hashes[0] = "stale"  # computed from a text that has since changed
    writer.vectors.write_segment(ids, hashes, vecs)  # the store is not told yet
    assert reader.refresh_vectors() == 5
    assert reader.vectors.size == 5 and not reader.vectors.has(int(ids[0]))
    writer.close()
    reader.close()


def test_the_embed_bar_moves_per_batch(
    small: Config, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It moved per checkpoint of 256 papers: 0% for the first 256, then 85% at once."""
    monkeypatch.setenv("TQDM_MININTERVAL", "0")  # every update drawn, however quick
    data = DataDir(small)
    try:
        pending = data.store.count()
        assert embed_backlog(data, progress=True) == pending < 256
        batch = data.indexing_embedder.batch_size
    finally:
        data.close()
    shown = {
        int(n) for n in re.findall(rf"embed: .*?\| *(\d+)/{pending} ", capsys.readouterr().err)
    }
    assert set(range(0, pending, batch)) <= shown and pending in shown, shown
