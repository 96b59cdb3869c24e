"""Writers coordinate (issue 24, defect 7): unique temp files for atomic writes, and one
writer lock per data directory that CLI runs and server jobs take, across real processes."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from papersift.engine.atomic import sweep_temp_files, write_json_atomic
from papersift.engine.datadir import DataDir
from papersift.engine.search import SearchEngine
from papersift.engine.writer_lock import LOCK_NAME, WriterBusy, writer_lock, writing
from papersift.indexer.scheduler import JobRunner
from tests.corpus import demo_records, make_config, write_jsonl

ROOT = Path(__file__).resolve().parent.parent
HOLD = """
import sys, time
from pathlib import Path
from papersift.engine.writer_lock import writer_lock
with writer_lock(Path(sys.argv[1]), "`papersift import`"):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


@pytest.fixture
def held(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the writer lock of ``tmp_path/data`` for 60 s."""
    (tmp_path / "data").mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path / "data"), "60"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    yield proc
    proc.kill()
    proc.wait()


def test_writing_says_who_holds_the_lock_now(tmp_path: Path, held: subprocess.Popen[str]) -> None:
    """Another process, this one, or no one (the lock file stays when its holder ends)."""
    data = tmp_path / "data"
    assert (writing(data) or "").startswith(f"pid {held.pid} (`papersift import`, since ")
    held.kill()
    held.wait()
    assert writing(data) is None and (data / LOCK_NAME).exists()
    with writer_lock(data, "`papersift index`"):
        assert "(`papersift index`, since" in (writing(data) or "")
    assert writing(data) is None
    assert writing(tmp_path / "never") is None


def test_racing_atomic_writes_never_fail(tmp_path: Path) -> None:
    target = tmp_path / "manifest.json"
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(200):
                write_json_atomic(target, {"writer": n, "round": i, "pad": "x" * 2000})
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert json.loads(target.read_text())["round"] == 199  # whole, from one writer
    assert [p.name for p in tmp_path.iterdir()] == ["manifest.json"]  # no temp left


def test_stale_temp_files_are_swept(tmp_path: Path) -> None:
    old = tmp_path / ".manifest.json.abc123.tmp"
    young = tmp_path / ".manifest.json.def456.tmp"
    for p in (old, young):
        p.write_text("{")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    assert sweep_temp_files(tmp_path) == 1
    assert not old.exists() and young.exists()  # a live writer's file stays


def test_cli_writer_finds_the_lock_held(
    tmp_path: Path, held: subprocess.Popen[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from papersift.cli import main

    make_config(tmp_path)
    source = write_jsonl(tmp_path / "a.jsonl", demo_records()[:5])
    code = main(["import", "--config", str(tmp_path / "config.toml"), str(source)])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err
    assert f"pid {held.pid} (`papersift import`" in err and "run `papersift import` again" in err
    held.kill()
    held.wait()  # the kernel drops a dead holder's lock: nothing stale to clear
    assert main(["import", "--config", str(tmp_path / "config.toml"), str(source)]) == 0


def test_a_job_finding_the_lock_held_is_skipped_and_logged(
    tmp_path: Path, held: subprocess.Popen[str], caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    import papersift.indexer.scheduler as scheduler

    monkeypatch.setattr(scheduler, "WRITER_WAIT", 0.5)
    config = make_config(tmp_path, schedule={"embed": "", "maintenance": "", "harvest": ""})
    engine = SearchEngine(DataDir(config))
    try:
        runner = JobRunner(engine, config)
        with caplog.at_level(logging.INFO, logger="papersift.indexer.scheduler"):
            assert runner.run("maintenance") is False
        status = runner.status["maintenance"]
        assert status.skipped == 1 and status.runs == 0 and str(held.pid) in status.message
        (record,) = [r for r in caplog.records if "writer-busy" in r.getMessage()]
        assert record.levelno == logging.INFO and record.exc_info is None
        held.kill()
        held.wait()
        assert runner.run("maintenance") is True and runner.status["maintenance"].outcome == "ok"
    finally:
        engine.close()


def test_threads_of_one_process_take_turns_and_nest(tmp_path: Path) -> None:
    order: list[str] = []
    inside = threading.Event()

    def first() -> None:
        # The holder may take it again (nested).
        with writer_lock(tmp_path, "job harvest"), writer_lock(tmp_path, "job harvest"):
            order.append("first")
            inside.set()
            time.sleep(0.3)

    t = threading.Thread(target=first)
    t.start()
    inside.wait(10)
    with pytest.raises(WriterBusy, match="job harvest"), writer_lock(tmp_path, "job maintenance"):
        pass
    with writer_lock(tmp_path, "job maintenance", wait=10):  # waits its turn
        order.append("second")
    t.join()
    assert order == ["first", "second"]
    assert (tmp_path / LOCK_NAME).is_file()
    (tmp_path / "x").mkdir()
    config = make_config(tmp_path / "x")
    with writer_lock(config.data_dir, "`papersift import`"):
        DataDir(config).close()  # a new data directory holding only the lock file is fine


def test_a_skip_then_a_run_shows_each_honestly(
    tmp_path: Path, held: subprocess.Popen[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run skipped for a busy writer reads ``skipped`` naming the holder (the admin API's
    declared type accepts it); the next run shows no stale message while it runs."""
    import papersift.indexer.harvest as harvest_mod
    import papersift.indexer.scheduler as scheduler
    from papersift.server.schemas_admin import status_body

    monkeypatch.setattr(scheduler, "WRITER_WAIT", 0.5)
    config = make_config(tmp_path, schedule={"embed": "", "maintenance": "", "harvest": ""})
    engine = SearchEngine(DataDir(config))
    try:
        runner = JobRunner(engine, config)
        assert runner.run("maintenance") is False
        (job,) = [j for j in status_body(runner.snapshot()).jobs if j.name == "maintenance"]
        assert job.outcome == "skipped" and f"pid {held.pid}" in job.message
        held.kill()
        held.wait()
        during: list[dict[str, object]] = []
        real = harvest_mod.reindex

        def watched(data: DataDir, **kw: object) -> int:
            during.extend(j for j in runner.snapshot()["jobs"] if j["name"] == "maintenance")
            return real(data, **kw)  # type: ignore[arg-type]

        monkeypatch.setattr(harvest_mod, "reindex", watched)
        assert runner.run("maintenance") is True
        assert during[0]["running"] is True and during[0]["outcome"] is None
        assert during[0]["message"] == "", during[0]["message"]
        assert runner.status["maintenance"].outcome == "ok"
    finally:
        engine.close()
