"""The jobs of `serve`: firing on a trigger, refusing overlap, refreshing from another process."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from apscheduler.triggers.date import DateTrigger

from papersift.core.config import Config
from papersift.core.errors import ConfigError
from papersift.engine.datadir import DataDir
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine
from papersift.indexer.build import embed_backlog
from papersift.indexer.harvest import harvest
from papersift.indexer.scheduler import JobRunner
from tests.corpus import make_config
from tests.recorded_server import RecordedServer, Reply, oai, serve
from tests.test_enrich_cache import many_papers

LIST = {"verb": "ListRecords", "metadataPrefix": "arXiv"}
PAGE2 = {"verb": "ListRecords", "resumptionToken": "hepcrawl|4"}
PAGE3 = {"verb": "ListRecords", "resumptionToken": "hepcrawl|8"}


@pytest.fixture
def recorded() -> Iterator[RecordedServer]:
    server = next(serve_gen := serve())
    server.add("/oai2", LIST, oai("hepcrawl-page1.xml"))
    server.add("/oai2", PAGE2, oai("hepcrawl-page2.xml"))
    server.add("/oai2", PAGE3, oai("hepcrawl-page3.xml"))
    yield server
    serve_gen.close()


def config_for(root: Path, server: RecordedServer, **schedule: object) -> Config:
    return make_config(
        root,
        embedding={"float32_cache": False, "max_length": 64},
        harvest={"url": server.url("/oai2"), "metadata_prefix": "arXiv", "delay_seconds": 0,
                 "retries": 0},
        schedule={"embed": "", "maintenance": "", **schedule},
    )  # fmt: skip


def wait_for(check: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def test_bad_cron_is_a_config_error(tmp_path: Path, recorded: RecordedServer) -> None:
    """Found when the config loads (not when `serve` starts the scheduler), in one line."""
    with pytest.raises(ConfigError, match=r"\[schedule\] harvest must be a cron expression"):
        config_for(tmp_path, recorded, harvest="every day at 3")


def ran_once(runner: JobRunner, name: str) -> None:
    """Wait for job ``name`` (on a one-shot trigger) to have run, and for APScheduler to
    have dropped it: shut down before then and its loop raises JobLookupError in its
    thread (``shutdown`` marks the scheduler stopped before taking the jobs' lock)."""
    wait_for(lambda: runner.status[name].runs >= 1, f"the {name} job")
    wait_for(lambda: runner.next_run(name) is None, f"the one-shot {name} job to be dropped")


def test_job_fires_on_its_trigger(tmp_path: Path, recorded: RecordedServer) -> None:
    config = config_for(tmp_path, recorded, harvest="0 3 * * 1-5")
    engine = SearchEngine(DataDir(config))
    runner = JobRunner(engine, config, triggers={"harvest": DateTrigger(datetime.now(UTC))})
    try:
        runner.start()
        ran_once(runner, "harvest")
        status = runner.snapshot()
        job = next(j for j in status["jobs"] if j["name"] == "harvest")
        assert job["outcome"] == "ok", job["message"]
        assert job["counts"]["added"] == 12 and job["counts"]["embedded"] == 12
        assert status["papers"] == 12 and status["embedding_backlog"] == 0
        result = engine.search(SearchRequest("Kretschmann invariant", mode="keyword"))
        assert result.hits[0].paper.arxiv_id == "1606.04259"
    finally:
        runner.shutdown()
        engine.close()


def test_cron_schedule_gives_next_run(tmp_path: Path, recorded: RecordedServer) -> None:
    config = config_for(tmp_path, recorded, harvest="0 3 * * 1-5", maintenance="0 4 * * 0")
    engine = SearchEngine(DataDir(config))
    runner = JobRunner(engine, config)
    try:
        runner.start()
        jobs = {j["name"]: j for j in runner.snapshot()["jobs"]}
        nxt = datetime.fromisoformat(jobs["harvest"]["next_run"])
        assert (nxt.hour, nxt.minute) == (3, 0) and nxt.weekday() < 5
        assert jobs["embed"]["next_run"] is None and jobs["embed"]["schedule"] == ""
    finally:
        runner.shutdown()
        engine.close()


def test_overlapping_run_is_skipped(
    tmp_path: Path, recorded: RecordedServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="papersift.indexer.scheduler")
    gate = threading.Event()
    recorded.add("/oai2", PAGE2, Reply(oai("hepcrawl-page2.xml").body, hold=gate))
    config = config_for(tmp_path, recorded)
    engine = SearchEngine(DataDir(config))
    runner = JobRunner(engine, config)
    try:
        assert runner.trigger("harvest") is None  # started
        wait_for(lambda: any(p == PAGE2 for _, p, _ in list(recorded.requests)), "page 2")
        assert runner.status["harvest"].running
        assert runner.run("harvest") is False  # as when the next cron time comes
        refused = runner.trigger("harvest")  # as when an admin asks for a run
        assert refused is not None and refused.reason == "running"
        assert runner.status["harvest"].skipped == 2
        # Normal behaviour, not a warning.
        skips = [r for r in caplog.records if "reason=previous-run-in-progress" in r.getMessage()]
        assert len(skips) == 2 and {r.levelno for r in skips} == {logging.INFO}
        gate.set()
        wait_for(lambda: runner.status["harvest"].runs == 1, "the harvest to finish")
        assert runner.status["harvest"].outcome == "ok"
        assert runner.status["harvest"].counts["added"] == 12
    finally:
        gate.set()
        runner.shutdown()
        wait_for(lambda: not runner.status["harvest"].running, "the job thread")
        engine.close()


def test_failed_job_is_recorded(tmp_path: Path, recorded: RecordedServer) -> None:
    recorded.add("/oai2", LIST, Reply(b"down", 503))
    config = config_for(tmp_path, recorded)
    engine = SearchEngine(DataDir(config))
    runner = JobRunner(engine, config)
    try:
        assert runner.run("harvest")
        status = runner.status["harvest"]
        assert status.outcome == "error" and "HTTP 503" in status.message
    finally:
        engine.close()


def test_refresh_sees_another_process_harvest(tmp_path: Path, recorded: RecordedServer) -> None:
    config = config_for(tmp_path, recorded, refresh_seconds=0.5)
    serving = SearchEngine(DataDir(config))  # the server's engine
    serving.data.vectors  # noqa: B018 - loaded, as in serve
    runner = JobRunner(serving, config)
    cli = DataDir(config)  # a `papersift harvest` beside it
    try:
        runner.start()
        harvest(cli)
        embed_backlog(cli)
        query = SearchRequest("Kretschmann invariant", mode="keyword")
        wait_for(lambda: serving.search(query).total > 0, "the refresh job")
        wait_for(lambda: serving.data.vectors.size == 12, "new vectors")
        hybrid = serving.search(SearchRequest("quantum gravity Lagrangian points", mode="hybrid"))
        assert hybrid.hits[0].paper.arxiv_id == "1606.04259"
    finally:
        runner.shutdown()
        cli.close()
        serving.close()


def test_enrich_job_runs_the_enrich_command(tmp_path: Path, recorded: RecordedServer) -> None:
    """The enrichment job runs `papersift enrich` in serve; with no source configured it
    asks nothing and reports so."""
    config = make_config(
        tmp_path,
        embedding={"float32_cache": False, "max_length": 64},
        harvest={"url": recorded.url("/oai2"), "metadata_prefix": "arXiv", "delay_seconds": 0,
                 "retries": 0},
        schedule={"embed": "", "maintenance": "", "enrich": "0 5 * * 6"},
        enrich={"openalex_url": "", "semanticscholar_url": ""},
    )  # fmt: skip
    engine = SearchEngine(DataDir(config))
    runner = JobRunner(engine, config, triggers={"enrich": DateTrigger(datetime.now(UTC))})
    try:
        runner.start()
        ran_once(runner, "enrich")
        status = runner.status["enrich"]
        assert status.outcome == "ok"
        assert status.counts["requests"] == 0 and status.counts["updated"] == 0
    finally:
        runner.shutdown()
        engine.close()


@pytest.mark.slow
def test_a_harvest_pauses_the_embedding_and_it_goes_on_after(
    tmp_path: Path, recorded: RecordedServer
) -> None:
    """A first embedding can hold the writer for a day: a harvest asked for meanwhile does
    not wait for it (or get skipped); the embedding pauses at its next checkpoint, the
    harvest runs, and the embedding starts again and finishes the backlog."""
    from papersift.indexer.build import import_files
    from tests.corpus import demo_records, write_jsonl

    records = demo_records()[:1200]
    # The harvest asks for changes since the newest update date the index holds.
    since = max(r["update_date"] for r in records)
    recorded.add("/oai2", {**LIST, "from": since}, oai("hepcrawl-page1.xml"))
    config = config_for(tmp_path, recorded)
    with DataDir(config) as data:
        import_files(data, [write_jsonl(tmp_path / "a.jsonl", records)])
    engine = SearchEngine(DataDir(config))
    runner = JobRunner(engine, config)
    try:
        runner.start()
        assert runner.trigger("embed") is None
        wait_for(lambda: runner.status["embed"].running, "the embedding to start")
        assert runner.trigger("harvest") is None  # not refused: the embedding makes room
        wait_for(lambda: runner.status["harvest"].runs == 1, "the harvest", timeout=180)
        harvest_status = runner.status["harvest"]
        assert harvest_status.outcome == "ok", harvest_status.message
        assert harvest_status.counts["added"] == 12
        wait_for(lambda: runner.snapshot()["embedding_backlog"] == 0, "the rest", timeout=300)
        wait_for(lambda: not runner.status["embed"].running, "the embed job to end")
        assert runner.status["embed"].runs >= 2  # paused once, then started again
        assert runner.status["embed"].outcome == "ok"
    finally:
        runner.shutdown()
        engine.close()


def test_enrich_job_names_a_source_that_finds_nothing(
    tmp_path: Path, recorded: RecordedServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A run where OpenAlex answered 404 for every paper (a mistyped URL) goes through, and
    says which setting to check: beside "ok" on the admin page, and in the log."""
    caplog.set_level(logging.INFO, logger="papersift.indexer.scheduler")
    config = make_config(
        tmp_path,
        embedding={"float32_cache": False, "max_length": 64},
        schedule={"embed": "", "maintenance": ""},
        enrich={"openalex_url": recorded.url("/wrong"), "semanticscholar_url": "",
                "delay_seconds": 0.0},
        harvest={"retries": 0},
    )  # fmt: skip
    data = DataDir(config)
    data.store.upsert(many_papers(20))
    engine = SearchEngine(data)
    runner = JobRunner(engine, config)
    try:
        assert runner.run("enrich")
        status = runner.status["enrich"]
        said = (
            "OpenAlex answered 404 (not found) for all 20 papers asked about: check [enrich] "
            f"openalex_url ({recorded.url('/wrong')})"
        )
        assert (status.outcome, status.message, status.counts["not_found"]) == ("ok", said, 20)
        (job,) = [j for j in runner.snapshot()["jobs"] if j["name"] == "enrich"]
        assert job["message"] == said
        assert any("job=enrich event=warning" in r.getMessage() for r in caplog.records)
    finally:
        runner.shutdown()
        engine.close()
