"""The enrich cache's answers expire (found records after ``[enrich] cache_days``, 404s after
``not_found_days``), entries written before they carried a time age by their file's mtime,
and a source that answers 404 for every paper is named: all against recorded OpenAlex
responses served from a local server, with ages set in the files rather than waited for."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from papersift.core.config import Config
from papersift.core.paper import Paper
from papersift.engine.datadir import DataDir
from papersift.indexer.enrich_cache import Expiry
from papersift.indexer.enrich_run import enrich_online
from tests.corpus import make_config
from tests.recorded_server import RecordedServer, Reply, serve
from tests.test_cli import config_path, run
from tests.test_enrich import OA_WORK, PAPERS, _paper

DAY = 86400.0
MAILTO = {"mailto": "lab@example.org"}
STATE_OF_OA = "/oa/works/doi:10.7717/peerj.4375"  # 1802.00001's DOI
NO_DOI = "/oa/works/doi:10.48550/arXiv.1802.00003"  # 1802.00003 has none: arXiv's DOI


@pytest.fixture
def recorded() -> Iterator[RecordedServer]:
    yield from serve()


def _config(tmp_path: Path, server: RecordedServer, path: str = "/oa", **enrich: object) -> Config:
    """OpenAlex only (at ``path`` of the local server), no pauses, no retries."""
    return make_config(
        tmp_path,
        enrich={"mailto": "lab@example.org", "openalex_url": server.url(path),
                "semanticscholar_url": "", "delay_seconds": 0.0, **enrich},
        harvest={"retries": 0},
    )  # fmt: skip


@pytest.fixture
def data(tmp_path: Path, recorded: RecordedServer) -> Iterator[DataDir]:
    d = DataDir(_config(tmp_path, recorded))
    d.store.upsert(PAPERS)
    try:
        yield d
    finally:
        d.close()


def _work(cited_by: int) -> Reply:
    """The recorded work "The state of OA", with its citation count as of some day."""
    work = json.loads(OA_WORK.read_text(encoding="utf-8"))
    return Reply(json.dumps({**work, "cited_by_count": cited_by}).encode())


def _entry(data: DataDir, path: str) -> Path:
    """The cache file holding the answer for ``path``."""
    for file in (data.root / "enrich-cache" / "openalex").glob("*/*.json"):
        if json.loads(file.read_text(encoding="utf-8"))["url"].endswith(path):
            return file
    raise AssertionError(f"no cache entry for {path}")


def _fetched_ago(file: Path, days: float) -> None:
    """Rewrite the entry as fetched ``days`` ago (its mtime becomes now: the stored time
    wins, as in a backup restored without keeping mtimes)."""
    saved = json.loads(file.read_text(encoding="utf-8"))
    saved["fetched"] = datetime.fromtimestamp(time.time() - days * DAY, UTC).isoformat()
    file.write_text(json.dumps(saved), encoding="utf-8")


def _asked(server: RecordedServer, since: int) -> list[str]:
    return [path for path, _, _ in server.requests[since:]]


def _cited(data: DataDir, arxiv_id: str) -> int | None:
    (paper,) = data.store.get([data.store.docid_of(arxiv_id) or 0]).values()
    return paper.citation_count


def _enrich(data: DataDir) -> tuple[int, int]:
    """One run: the requests it made and the answers it took from the cache."""
    _, requests, cached = enrich_online(data, sleep=lambda _: None)
    return requests, cached


def test_found_record_is_fetched_again_after_cache_days(
    data: DataDir, recorded: RecordedServer
) -> None:
    recorded.add(STATE_OF_OA, MAILTO, _work(962), _work(1000))
    assert _enrich(data) == (3, 0)  # one found, two 404s
    assert _cited(data, "1802.00001") == 962
    entry = _entry(data, STATE_OF_OA)

    _fetched_ago(entry, 29)  # within cache_days (30): reused, the server is not asked
    seen = len(recorded.requests)
    assert _enrich(data) == (0, 3) and _asked(recorded, seen) == []

    _fetched_ago(entry, 31)  # older: asked again, and the new count replaces the old
    seen = len(recorded.requests)
    assert _enrich(data) == (1, 2) and _asked(recorded, seen) == [STATE_OF_OA]
    assert _cited(data, "1802.00001") == 1000
    assert _enrich(data) == (0, 3)  # the new answer is fresh again


def test_not_found_is_asked_again_after_not_found_days(
    data: DataDir, recorded: RecordedServer
) -> None:
    """A paper OpenAlex had not indexed yet (404) is found on a later run."""
    recorded.add(STATE_OF_OA, MAILTO, _work(962))
    _enrich(data)
    assert _cited(data, "1802.00003") is None
    recorded.add(NO_DOI, MAILTO, _work(5))  # now indexed
    entry = _entry(data, NO_DOI)
    assert json.loads(entry.read_text(encoding="utf-8"))["status"] == 404

    _fetched_ago(entry, 2)  # within not_found_days (3)
    seen = len(recorded.requests)
    assert _enrich(data) == (0, 3) and _asked(recorded, seen) == []

    _fetched_ago(entry, 4)  # older: asked again; found records (4 days old) are not
    _fetched_ago(_entry(data, STATE_OF_OA), 4)
    seen = len(recorded.requests)
    assert _enrich(data) == (1, 2) and _asked(recorded, seen) == [NO_DOI]
    assert _cited(data, "1802.00003") == 5


def test_old_entry_without_fetched_time_ages_by_mtime(
    data: DataDir, recorded: RecordedServer
) -> None:
    """Entries written before the time was stored ({url, status, body}) still count: by
    their file's modification time."""
    recorded.add(STATE_OF_OA, MAILTO, _work(962), _work(1000))
    _enrich(data)
    for path in (STATE_OF_OA, NO_DOI):
        entry = _entry(data, path)
        saved = json.loads(entry.read_text(encoding="utf-8"))
        saved.pop("fetched", None)
        entry.write_text(json.dumps(saved), encoding="utf-8")
    old, recent = time.time() - 31 * DAY, time.time() - 1 * DAY
    os.utime(_entry(data, STATE_OF_OA), (old, old))  # a found record of 31 days: stale
    os.utime(_entry(data, NO_DOI), (recent, recent))  # a 404 of 1 day: fresh
    seen = len(recorded.requests)
    assert _enrich(data) == (1, 2) and _asked(recorded, seen) == [STATE_OF_OA]
    assert _cited(data, "1802.00001") == 1000
    assert "fetched" in json.loads(_entry(data, STATE_OF_OA).read_text(encoding="utf-8"))


def test_cache_days_0_asks_again_every_run(tmp_path: Path, recorded: RecordedServer) -> None:
    d = DataDir(_config(tmp_path, recorded, cache_days=0))
    try:
        d.store.upsert(PAPERS)
        assert _enrich(d) == (3, 0)
        assert _enrich(d) == (3, 0)
    finally:
        d.close()


def many_papers(n: int) -> list[Paper]:
    return [_paper(f"1803.{i:05d}", f"Paper {i}", "A. Author", None) for i in range(1, n + 1)]


def test_a_source_that_finds_nothing_is_named(tmp_path: Path, recorded: RecordedServer) -> None:
    """A mistyped openalex_url (every answer a 404) was reported as "0 matched", exit 0."""
    config = _config(tmp_path, recorded, path="/wrong")
    d = DataDir(config)
    try:
        d.store.upsert(many_papers(19))
        report, _, _ = enrich_online(d, sleep=lambda _: None)
        assert (report.not_found, report.warnings) == (19, [])  # too few to say
        d.store.upsert(many_papers(23))
        report, requests, _ = enrich_online(d, sleep=lambda _: None)
        assert (report.matched, report.not_found, requests) == (0, 23, 4)  # 19 were cached
        assert report.warnings == [
            "OpenAlex answered 404 (not found) for all 23 papers asked about (19 answers from "
            f"the cache): check [enrich] openalex_url ({recorded.url('/wrong')})"
        ]
    finally:
        d.close()
    out = run("enrich", "--config", config_path(config))  # all 23 from the cache now
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("(0 requests, 23 from the cache, 23 not found)")
    assert (
        "warning: OpenAlex answered 404 (not found) for all 23 papers asked about (23 answers "
        f"from the cache): check [enrich] openalex_url ({recorded.url('/wrong')})"
    ) in out.stderr.splitlines()
    out = run("enrich", "--config", config_path(config), "--json")
    assert len(json.loads(out.stdout)["warnings"]) == 1


def test_one_paper_found_is_no_warning(tmp_path: Path, recorded: RecordedServer) -> None:
    recorded.add(STATE_OF_OA, MAILTO, _work(962))
    d = DataDir(_config(tmp_path, recorded))
    try:
        d.store.upsert([*PAPERS, *many_papers(25)])
        report, _, _ = enrich_online(d, sleep=lambda _: None)
        assert (report.matched, report.not_found, report.warnings) == (1, 27, [])
    finally:
        d.close()


def test_expiry_rules() -> None:
    """A 404 is never kept longer than a found record; an entry within the hour before its
    expiry counts as expired (a job every 30 days then refreshes at each run, not at every
    second one); a time in the future (a clock set back) is not trusted."""
    expiry = Expiry.of_days(30, 3)
    assert expiry.fresh(200, 29 * DAY) and not expiry.fresh(200, 30 * DAY - 1800)
    assert expiry.fresh(404, 2 * DAY) and not expiry.fresh(404, 3 * DAY - 1800)
    assert not expiry.fresh(200, -60)
    assert Expiry.of_days(1, 3).not_found == Expiry.of_days(1, 3).found == DAY
    assert not Expiry.of_days(0, 0).fresh(200, 0)
