"""The embedding backlog goes newest first, changed papers jump the queue, and its progress
(reach, rate, ETA) is recorded and shown without loading the model."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from papersift.cli import main
from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.embed_progress import read_progress
from papersift.engine.search import open_engine
from papersift.indexer.build import embed_backlog, import_files
from papersift.indexer.embed_queue import EmbedQueue, EmbedRun
from tests.corpus import sample_records, write_jsonl

pytestmark = pytest.mark.slow  # left out by `make test-fast`


def imported(config: Config, tmp_path: Path, every: int = 40) -> DataDir:
    data = DataDir(config)
    import_files(data, [write_jsonl(tmp_path / "s.jsonl", sample_records(every))])
    return data


def newest_first(data: DataDir) -> list[int]:
    """Every docid by (first-version date, docid), newest first: the reference order."""
    papers = data.store.get(list(range(1, data.store.count() + 1)))
    return sorted(papers, key=lambda d: (papers[d].published, d), reverse=True)


def embedded(data: DataDir) -> set[int]:
    with data.store.reading() as db:
        rows = db.execute(
            "SELECT docid FROM embedded WHERE model = ?", (data.indexing_embedder.model_id,)
        ).fetchall()
    return {int(d) for (d,) in rows}


def test_backlog_goes_newest_first_and_records_its_reach(
    fresh_config: Config, tmp_path: Path
) -> None:
    data = imported(fresh_config, tmp_path)
    try:
        order = newest_first(data)
        assert embed_backlog(data, limit=40, chunk=16) == 40
        assert embedded(data) == set(order[:40])
        progress = data.embedding_progress()
        papers = data.store.get(order[:40])
        assert progress.reached == min(p.published for p in papers.values())
        assert progress.embedded == 40 and progress.total == len(order)
        assert progress.rate is not None and progress.rate > 0
        eta = progress.eta_seconds
        assert eta is not None and eta == pytest.approx((len(order) - 40) / progress.rate)
        assert f"embedded down to {progress.reached:%Y-%m}" in progress.line()

        # The rest, in the next run, from where the order left off.
        assert embed_backlog(data, limit=30, chunk=16) == 30
        assert embedded(data) == set(order[:70])
    finally:
        data.close()


def test_changed_papers_jump_the_queue(fresh_config: Config, tmp_path: Path) -> None:
    data = imported(fresh_config, tmp_path)
    try:
        order = newest_first(data)
        embed_backlog(data, limit=10)
        oldest = data.store.get([order[-1]])[order[-1]]
        # A harvest brings a new version of the oldest paper (another abstract) and a
        # paper first published long ago: both go before the newest papers left.
        newer = replace(oldest, version=oldest.version + 1, abstract=oldest.abstract + " v2")
        old_new = replace(oldest, arxiv_id="hep-th/9901001", published=date(1999, 1, 4))
        _, changed = data.store.upsert([newer, old_new])
        assert len(changed) == 2
        assert embed_backlog(data, limit=2) == 2
        assert embedded(data) == set(order[:10]) | {d for d, _ in changed}
        # Then the date order again, from the eleventh newest.
        assert embed_backlog(data, limit=5) == 5
        assert embedded(data) >= set(order[:15])
        # An import is bulk work: its papers wait their turn by date.
        record = {
            **sample_records(40)[0],
            "id": "hep-th/9901002",
            "update_date": "1999-01-05",
            "versions": [{"version": "v1", "created": "Tue, 5 Jan 1999 10:00:00 GMT"}],
        }
        import_files(data, [write_jsonl(tmp_path / "one.jsonl", [record])])
        assert embed_backlog(data, limit=1) == 1
        assert data.store.docid_of("hep-th/9901002") not in embedded(data)
    finally:
        data.close()


def test_queue_never_hands_out_a_paper_twice(fresh_config: Config, tmp_path: Path) -> None:
    data = imported(fresh_config, tmp_path)
    try:
        queue = EmbedQueue(data.store, data.indexing_embedder.model_id)
        seen: list[int] = []
        while rows := queue.take(7):  # nothing written: all stay in flight
            seen.extend(r[0] for r in rows)
        assert seen == newest_first(data)
    finally:
        data.close()


def test_stats_report_progress_without_loading_the_model(
    fresh_config: Config, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = imported(fresh_config, tmp_path)
    try:
        embed_backlog(data, limit=20)
    finally:
        data.close()
    engine = open_engine(fresh_config)
    try:
        stats = engine.stats_with_progress()
        assert not engine.data.embedder.loaded  # hashing the files is all stats does
        assert stats.embedding is not None and stats.embedding.embedded == 20
    finally:
        engine.close()
    assert main(["stats", "--json", "--config", str(fresh_config.base_dir / "config.toml")]) == 0
    out = json.loads(capsys.readouterr().out)["embedding"]
    assert out["embedded"] == 20 and out["reached_month"] == stats.embedding.reached.strftime(
        "%Y-%m"
    )  # type: ignore[union-attr]
    assert out["rate"] > 0 and out["eta_seconds"] > 0

    # A manifest that names no model (written by an older version): a segment's header
    # gives the width, still without a session.
    manifest = fresh_config.data_dir / "manifest.json"
    written = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({k: v for k, v in written.items()
                                    if k not in ("model_id", "dimension")}))  # fmt: skip
    engine = open_engine(fresh_config)
    try:
        assert engine.stats_with_progress().dimension == written["dimension"]
        assert not engine.data.embedder.loaded
    finally:
        engine.close()


def test_rate_and_eta_follow_the_recent_window(fresh_config: Config) -> None:
    """A run that slows down (the machine got busy) reports the recent rate, not the
    average since its start, and the ETA from it; the stored rate is the same one."""
    data = DataDir(fresh_config)
    now = [0.0]
    run = EmbedRun(data.store, "m", pending=100_000, clock=lambda: now[0])
    queue = EmbedQueue(data.store, "m")
    for _ in range(40):  # 40 checkpoints of 256 papers every 10 s: 25.6 papers/s
        now[0] += 10
        run.checkpoint(256, queue)
    assert run.rate == pytest.approx(25.6)
    for _ in range(15):  # then one every 60 s for 15 min: 4.27 papers/s
        now[0] += 60
        run.checkpoint(256, queue)
    assert run.rate == pytest.approx(256 / 60)
    assert run.done / now[0] > 2 * run.rate  # what the average since the start would say
    assert run.eta_seconds == pytest.approx((100_000 - run.done) / (256 / 60))
    stored = read_progress(data.store, "m", run.done, 100_000)
    assert stored.rate == pytest.approx(256 / 60, abs=1e-3)
    data.close()


def test_the_reach_is_not_said_once_papers_were_added(fresh_config: Config, tmp_path: Path) -> None:
    """A run that reached the oldest paper, then an import: the new papers are not embedded
    and may be the newest, so "embedded down to" (the old run's reach) is not said until
    the next run records its own."""
    records = sample_records(40)
    data = DataDir(fresh_config)
    try:
        import_files(data, [write_jsonl(tmp_path / "a.jsonl", records[:-5])])
        embed_backlog(data)
        done = data.embedding_progress()
        assert done.reached is not None and not done.pending
        import_files(data, [write_jsonl(tmp_path / "b.jsonl", records[-5:])])
        progress = data.embedding_progress()
        assert progress.pending == 5 and progress.reached is None
        assert "down to" not in progress.line()
        embed_backlog(data, limit=2, chunk=2)
        assert data.embedding_progress().reached is not None  # this run's own reach
    finally:
        data.close()
