"""`papersift doctor` on real small indexes: healthy, and broken in the ways it must name."""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from papersift import doctor
from papersift.cli import main
from papersift.core.config import Config
from papersift.core.errors import ConfigError
from papersift.engine import embed
from papersift.engine.datadir import DataDir
from papersift.engine.embed_progress import format_duration, record_progress
from papersift.engine.model_files import resolve_model_files
from papersift.engine.model_id import default_model_path, default_tokenizer_path
from papersift.engine.results import SearchRequest
from papersift.engine.search import open_engine
from papersift.engine.writer_lock import writer_lock
from papersift.indexer.build import embed_backlog, import_files
from tests.corpus import make_config, sample_records, write_jsonl


def run_doctor(config: Config, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, Any]:
    code = main(["doctor", "--json", "--config", str(config.base_dir / "config.toml"), *extra])
    return code, json.loads(capsys.readouterr().out)


def by_name(report: Any) -> dict[str, dict[str, str]]:
    return {c["name"]: c for c in report["checks"]}


@pytest.mark.parametrize(("share", "arithmetic"), [(0.7, "int8"), (1.15, "float32")])
def test_healthy_embedded_index_passes(
    built_config: Config,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    share: float,
    arithmetic: str,
) -> None:
    """The int8 query graph's CPU against float32's depends on the CPU (0.58-0.74x with
    AVX-512 VNNI, 1.12-1.20x on AVX2 alone): the comparison is set, the rest is real."""
    monkeypatch.setattr(embed, "cpu_ratio", lambda *args: share)
    code, report = run_doctor(built_config, capsys)
    assert code == 0 and report["ok"] is True
    checks = by_name(report)
    assert {c["status"] for c in checks.values()} == {"OK"}, checks
    assert set(checks) >= {"config", "data directory", "free disk", "manifest", "store",
                           "lexical index", "researchers", "model", "embeddings",
                           "vectors"}  # fmt: skip
    assert f"queries are embedded in {arithmetic}" in checks["model"]["detail"]


def test_table_output_and_backlog_warning(
    small: Config, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["doctor", "--config", str(small.base_dir / "config.toml")])
    out = capsys.readouterr().out
    assert code == 0  # a backlog is a warning, not a failure
    lines = out.splitlines()
    assert any(line.startswith("WARN") and "embeddings" in line for line in lines)
    assert any(line.startswith("WARN") and "not yet clustered" in line for line in lines)
    assert any("papersift index" in line for line in lines)
    assert all(line[:4] in ("OK  ", "WARN", "FAIL", "    ") for line in lines)


def test_backlog_estimate_uses_the_measured_rate(
    small: Config, capsys: pytest.CaptureFixture[str]
) -> None:
    _, report = run_doctor(small, capsys)
    detail = by_name(report)["embeddings"]["detail"]
    assert "at 29 papers/s (2 cores; no run here has measured a rate yet)" in detail
    data = DataDir(small)
    pending = data.store.count()
    record_progress(data.store, data.embedder.model_id, 2.5, None)  # as a run records it
    data.close()
    _, report = run_doctor(small, capsys)
    detail = by_name(report)["embeddings"]["detail"]
    assert "2.5 papers/s measured" in detail
    assert f"about {format_duration(pending / 2.5)} to go" in detail


def test_missing_lexical_index_fails_then_fix_rebuilds_it(
    small: Config, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.rmtree(small.data_dir / "lexical")
    code, report = run_doctor(small, capsys)
    lexical = by_name(report)["lexical index"]
    assert code == 1 and report["ok"] is False
    assert lexical["status"] == "FAIL" and "doctor --fix" in lexical["fix"]

    code, report = run_doctor(small, capsys, "--fix")
    assert code == 0, report
    assert by_name(report)["lexical index"]["status"] == "OK"
    engine = open_engine(small)
    try:
        paper = engine.data.store.get([1])[1]
        result = engine.search(SearchRequest(query=f'"{paper.title}"', mode="keyword"))
        assert paper.arxiv_id in [h.paper.arxiv_id for h in result.hits]
    finally:
        engine.close()


def test_an_unopenable_keyword_index_says_its_fix_once(small: Config) -> None:
    (small.data_dir / "lexical" / "meta.json").write_text("{not json")
    check = {c.name: c for c in doctor.diagnose(small)}["lexical index"]
    assert check.status == "FAIL" and "cannot be opened" in check.detail
    assert "doctor --fix" in check.fix and "doctor --fix" not in check.detail


def test_lexical_index_with_other_docids_fails(small: Config) -> None:
    data = DataDir(small, create=False)
    try:
        data.lexical.delete([1])  # the store still has paper 1
        data.lexical.close_writer()
    finally:
        data.close()
    lexical = {c.name: c for c in doctor.diagnose(small)}["lexical index"]
    assert lexical.status == "FAIL" and "docids differ" in lexical.detail


def test_old_schema_version_fails_with_rebuild_steps(
    small: Config, capsys: pytest.CaptureFixture[str]
) -> None:
    path = small.data_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    path.write_text(json.dumps({**manifest, "schema_version": 1}))
    code, report = run_doctor(small, capsys)
    check = by_name(report)["manifest"]
    assert code == 1
    assert check["status"] == "FAIL" and "schema version 1" in check["detail"]
    assert "papersift import" in check["fix"] and "papersift index" in check["fix"]
    # One written by a newer papersift is not this build's to rebuild.
    path.write_text(json.dumps({**manifest, "schema_version": 99}))
    _, report = run_doctor(small, capsys)
    newer = by_name(report)["manifest"]
    assert "written by a newer papersift" in newer["detail"]
    assert newer["fix"] == "run the papersift that wrote it, or restore a backup this version made"


def test_a_keyword_index_the_next_open_rebuilds_is_not_reported_broken(
    small: Config, capsys: pytest.CaptureFixture[str]
) -> None:
    """Schema 5's keyword index has no unstemmed field, so this schema cannot open it: the
    manifest's check says it is rebuilt on the next open, and no lexical-index FAIL sends
    the admin to `doctor --fix` (found by running doctor on a schema-5 demo directory)."""
    import tantivy

    path = small.data_dir / "manifest.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "schema_version": 5}))
    folder = small.data_dir / "lexical"
    shutil.rmtree(folder)
    folder.mkdir()
    other = tantivy.SchemaBuilder()
    other.add_integer_field("docid", stored=False, indexed=True, fast=True)
    tantivy.Index(other.build(), path=str(folder))  # an index of another schema
    code, report = run_doctor(small, capsys)
    checks = by_name(report)
    assert code == 0 and checks["manifest"]["status"] == "WARN"
    assert "rebuilt from the store" in checks["manifest"]["detail"]
    assert "lexical index" not in checks
    with open_engine(small) as engine:  # the rebuild it promised
        assert engine.data.lexical_rebuilt
        assert engine.search(SearchRequest("parsing", mode="keyword")).total > 0
    code, report = run_doctor(small, capsys)
    assert code == 0 and by_name(report)["lexical index"]["status"] == "OK"


def test_unreadable_manifest_fails(small: Config) -> None:
    (small.data_dir / "manifest.json").write_text("{not json")
    check = {c.name: c for c in doctor.diagnose(small)}["manifest"]
    assert check.status == "FAIL" and "rebuild" in check.fix
    assert check.fix.startswith("copy manifest.json from the latest backup")  # before a rebuild


def damage_index_pages(path: Path, index: str) -> None:
    """Zero the pages of one index of a SQLite file, as a disk error in the middle of it
    would: what reads only the store's counts still works, what reads that index fails."""
    with closing(sqlite3.connect(path)) as db:
        size = db.execute("PRAGMA page_size").fetchone()[0]
        pages = [n for (n,) in db.execute("SELECT pageno FROM dbstat WHERE name = ?", (index,))]
    assert pages
    with path.open("r+b") as fh:
        for n in pages:
            fh.seek((n - 1) * size)
            fh.write(bytes(size))


def test_a_store_damaged_past_its_counts_is_the_stores_fail_row(
    small: Config, capsys: pytest.CaptureFixture[str]
) -> None:
    """``stats`` and ``search`` send a user with a damaged store to doctor, which ended in
    "papersift: error: database disk image is malformed" (also with --json and --fix)."""
    damage_index_pages(small.data_dir / "papers.sqlite", "papers_text_hash")
    code, report = run_doctor(small, capsys)
    checks = by_name(report)
    assert code == 1 and checks["store"]["status"] == "FAIL"
    assert "malformed" in checks["store"]["detail"] and "backup" in checks["store"]["fix"]
    assert {"config", "data directory", "free disk", "manifest", "lexical index",
            "researchers", "model"} <= set(checks)  # fmt: skip
    code = main(["doctor", "--fix", "--config", str(small.base_dir / "config.toml")])
    out, err = capsys.readouterr()
    assert code == 1 and "FAIL  store" in out
    assert err == "nothing repaired: the store must be fixed first (below)\n"


def test_fix_waits_for_no_writer(small: Config, capsys: pytest.CaptureFixture[str]) -> None:
    """It deleted and rebuilt the keyword index while `papersift index` wrote to it."""
    shutil.rmtree(small.data_dir / "lexical")
    held, done = threading.Event(), threading.Event()

    def index_run() -> None:
        with writer_lock(small.data_dir, "`papersift index`"):
            held.set()
            done.wait(60)

    thread = threading.Thread(target=index_run)
    thread.start()
    try:
        assert held.wait(10)
        code = main(["doctor", "--fix", "--config", str(small.base_dir / "config.toml")])
        err = capsys.readouterr().err
    finally:
        done.set()
        thread.join()
    assert code == 1 and err.startswith("papersift: error: pid ") and err.count("\n") == 1
    assert "(`papersift index`, since " in err  # the message every writer gives
    assert err.endswith(
        f"is writing to {small.data_dir}; run `papersift doctor --fix` again when it finishes\n"
    )
    assert not (small.data_dir / "lexical").exists()
    code, report = run_doctor(small, capsys, "--fix")  # once it has finished
    assert code == 0 and by_name(report)["lexical index"]["status"] == "OK"


@pytest.mark.slow
def test_lost_vectors_fail_and_fix_requeues_them(
    small: Config, capsys: pytest.CaptureFixture[str]
) -> None:
    data = DataDir(small, create=False)
    try:
        assert embed_backlog(data, limit=8) == 8
    finally:
        data.close()
    shutil.rmtree(small.data_dir / "vectors")
    code, report = run_doctor(small, capsys)
    assert code == 1 and by_name(report)["vectors"]["status"] == "FAIL"
    code, report = run_doctor(small, capsys, "--fix")
    assert code == 0
    assert by_name(report)["vectors"]["status"] == "OK"
    assert "0 of" in by_name(report)["embeddings"]["detail"]


@pytest.mark.slow
def test_a_damaged_segment_is_named_and_fix_moves_it_aside(
    small: Config, capsys: pytest.CaptureFixture[str]
) -> None:
    """A truncated vector file is a FAIL row naming it, not a traceback; ``--fix`` moves it
    (and its graph, if any) to the quarantine folder and queues its papers again, and the
    engine opens after it."""
    data = DataDir(small, create=False)
    try:
        assert embed_backlog(data, limit=8) == 8
    finally:
        data.close()
    (seg,) = sorted((small.data_dir / "vectors").glob("*/seg-*.npz"))
    seg.write_bytes(seg.read_bytes()[:1000])  # as a full disk or a bad copy leaves it
    code, report = run_doctor(small, capsys)
    vectors = by_name(report)["vectors"]
    assert code == 1 and vectors["status"] == "FAIL"
    assert f"1 unreadable segments ({seg.name})" in vectors["detail"]
    assert "quarantine" in vectors["fix"]
    code, report = run_doctor(small, capsys, "--fix")
    assert code == 0 and by_name(report)["vectors"]["status"] == "OK"
    assert "0 of" in by_name(report)["embeddings"]["detail"]  # queued again
    moved = small.data_dir / "quarantine" / seg.parent.name / seg.name
    assert moved.is_file() and not seg.exists()
    with open_engine(small) as engine:  # the server would start again
        assert engine.search(SearchRequest("retrieval", mode="keyword")).total > 0


def test_bad_config_and_missing_data_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[search]\nfusion = 'magic'\n")
    assert main(["doctor", "--config", str(bad)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL") and "fusion" in out

    empty = tmp_path / "empty.toml"
    empty.write_text(f'[data]\ndir = "{tmp_path / "nowhere"}"\n')
    assert main(["doctor", "--config", str(empty)]) == 1
    out = capsys.readouterr().out
    assert "does not exist" in out and "papersift import" in out
    assert main(["doctor", "--fix", "--config", str(empty)]) == 1
    assert not (tmp_path / "nowhere").exists()  # the doctor only looks


def test_model_files_default_and_relative_to_the_config(tmp_path: Path) -> None:
    assert resolve_model_files(make_config(tmp_path)) == (
        default_model_path(),
        default_tokenizer_path(),
    )
    lab = tmp_path / "lab"
    lab.mkdir()
    config = make_config(lab, embedding={"model": "m/model.onnx", "tokenizer": "~/tok.json"})
    assert resolve_model_files(config) == (lab / "m" / "model.onnx", Path.home() / "tok.json")


def test_model_without_tokenizer_fails_at_load_in_doctor_and_in_the_engine(
    small: Config, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused when the config loads (doctor's config row, not after "config parses");
    the engine still refuses a config built without the loader."""
    model = str(default_model_path())
    with pytest.raises(ConfigError, match="tokenizer must be set with model"):
        make_config(small.base_dir, embedding={"model": model})  # same data directory
    code, report = run_doctor(small, capsys)  # its config.toml, written before it was loaded
    check = by_name(report)["config"]
    assert code == 1 and check["status"] == "FAIL" and "tokenizer" in check["detail"]
    assert len(report["checks"]) == 1
    config = replace(small, embedding=replace(small.embedding, model=model))
    with pytest.raises(ConfigError, match="tokenizer"):
        resolve_model_files(config)
    data = DataDir(config, create=False)
    try:
        with pytest.raises(ConfigError, match="tokenizer"):
            data.embedder  # noqa: B018
    finally:
        data.close()


@pytest.mark.slow
def test_graph_built_before_float16_is_named_and_reindex_rebuilds_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import faiss
    import numpy as np

    from papersift.engine import ann
    from papersift.indexer.build import index_backlog

    config = make_config(tmp_path, search={"ann_above": 5})  # a graph for ~30 papers
    data = DataDir(config)
    try:
        import_files(data, [write_jsonl(tmp_path / "s.jsonl", sample_records(every=200))])
        index_backlog(data)
    finally:
        data.close()
    graphs = sorted((config.data_dir / "vectors").glob("*/seg-*.hnsw"))
    assert len(graphs) == 1
    code, report = run_doctor(config, capsys)
    check = by_name(report)["vector graph"]
    assert code == 0 and check["status"] == "OK"
    assert "in float16, efConstruction 200" in check["detail"]

    # The graph as compaction built it before 2026-12-04: float32 vectors, FAISS's width.
    with np.load(graphs[0].with_suffix(".npz"), allow_pickle=False) as z:
        vectors = np.ascontiguousarray(z["vectors"], np.float32)
    old = faiss.IndexHNSWFlat(vectors.shape[1], ann.HNSW_M, faiss.METRIC_INNER_PRODUCT)
    old.add(vectors)
    faiss.write_index(old, str(graphs[0]))
    code, report = run_doctor(config, capsys)
    check = by_name(report)["vector graph"]
    assert code == 0 and check["status"] == "WARN"  # it works, at a cost
    assert "in float32, efConstruction 40" in check["detail"]
    assert "memory" in check["detail"] and "fewer of the nearest papers" in check["detail"]
    assert str(graphs[0]) in check["fix"] and "papersift reindex" in check["fix"]

    graphs[0].write_bytes(b"not a graph")  # a torn copy, say
    code, report = run_doctor(config, capsys)
    check = by_name(report)["vector graph"]
    assert code == 0 and check["status"] == "WARN" and "unreadable" in check["detail"]
    assert str(graphs[0]) in check["fix"] and "papersift reindex" in check["fix"]

    # Doing what it says brings the graph of today back.
    graphs[0].unlink()
    assert main(["reindex", "--config", str(config.base_dir / "config.toml")]) == 0
    capsys.readouterr()
    code, report = run_doctor(config, capsys)
    check = by_name(report)["vector graph"]
    assert check["status"] == "OK" and "float16" in check["detail"], check


def test_the_config_row_names_the_variables_that_override_it() -> None:
    """With no config file but PAPERSIFT_* variables set, "defaults" alone misled; the
    names are shown (not the values: a variable may hold a secret)."""
    env = {"PAPERSIFT_DATA_DIR": "/srv/p", "PAPERSIFT_SERVER_ADMIN_TOKEN": "x" * 20, "HOME": "/"}
    row = doctor.config_check(None, env)
    assert row.detail == (
        "defaults (no config file) parses; 2 environment variables override it "
        "(PAPERSIFT_DATA_DIR, PAPERSIFT_SERVER_ADMIN_TOKEN)"
    )
    assert "x" * 20 not in row.detail
    assert doctor.config_check("lab.toml", {}).detail == "lab.toml parses"
