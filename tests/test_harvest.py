"""Checkpointed harvesting into a real index from recorded OAI-PMH pages on a local server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

import papersift.indexer.harvest as harvest_mod
from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine
from papersift.indexer.build import embed_backlog, import_files
from papersift.indexer.fetch import HarvestError
from papersift.indexer.harvest import harvest, load_checkpoint, reindex
from tests.corpus import demo_records, make_config, write_jsonl
from tests.recorded_server import RecordedServer, Reply, oai, serve

ROOT = Path(__file__).resolve().parent.parent
LIST = {"verb": "ListRecords", "metadataPrefix": "arXiv"}


def test_harvest_embeds_what_it_brought_in_not_the_imports_backlog(
    recorded: RecordedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """After a bulk import (a backlog of a day at arXiv's size), `harvest` embeds its own
    12 papers and leaves the import's to `papersift index` or serve."""
    from papersift.cli import main

    chain(recorded)
    config = config_for(tmp_path, recorded)
    with DataDir(config) as data:
        imported = import_files(data, [write_jsonl(tmp_path / "a.jsonl", demo_records()[:30])])
    assert imported.added == 30
    recorded.add("/oai2", {**LIST, "from": "2016-01-01"}, oai("hepcrawl-page1.xml"))
    args = ["--config", str(tmp_path / "config.toml"), "--json"]
    assert main(["harvest", *args, "--from", "2016-01-01"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["added"], out["embedded"]) == (12, 12)
    with DataDir(config, create=False) as data:
        model = data.indexing_embedder.model_id
        assert data.store.embedded_count(model) == 12
        assert embed_backlog(data, changed_only=True) == 0  # every harvested one is done
        assert data.store.count() - data.store.embedded_count(model) == 30  # the import's


def test_a_window_in_the_future_is_refused_before_any_request(
    recorded: RecordedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from papersift.cli import main

    config_for(tmp_path, recorded)
    args = ["--config", str(tmp_path / "config.toml")]
    assert main(["harvest", *args, "--from", "2999-01-01"]) == 1
    err = capsys.readouterr().err
    assert "--from 2999-01-01 is in the future" in err
    assert not recorded.requests
    # Without [harvest] mailto a run says arXiv asks for one.
    make_config(tmp_path, harvest={"url": recorded.url("/oai2"), "metadata_prefix": "arXiv",
                                   "delay_seconds": 0})  # fmt: skip
    window = {**LIST, "from": "2016-03-01", "until": "2016-03-31"}
    recorded.add("/oai2", window, oai("ErrorResponseNoRecordsMatch.xml"))
    assert main(["harvest", *args, "--from", "2016-03-01", "--until", "2016-03-31"]) == 0
    assert "note: [harvest] mailto is empty" in capsys.readouterr().err


def test_an_address_that_is_no_oai_pmh_is_named(recorded: RecordedServer, tmp_path: Path) -> None:
    """A web page where the endpoint should be (a mistyped [harvest] url) is one line that
    names the address and what it answered."""
    recorded.add("/oai2", LIST, Reply(b"<html><body>Welcome to our site</body></html>"))
    config = config_for(tmp_path, recorded)
    with DataDir(config) as data, pytest.raises(HarvestError) as err:
        harvest(data)
    message = str(err.value)
    assert message.startswith(f"{recorded.url('/oai2')} answered not an OAI-PMH response")
    assert "root 'html'" in message and "is it an OAI-PMH endpoint?" in message


PAGE2 = {"verb": "ListRecords", "resumptionToken": "hepcrawl|4"}
PAGE3 = {"verb": "ListRecords", "resumptionToken": "hepcrawl|8"}
NEXT = {**LIST, "from": "2016-01-14"}  # the first page's responseDate


@pytest.fixture
def recorded() -> Iterator[RecordedServer]:
    yield from serve()


def chain(server: RecordedServer) -> None:
    server.add("/oai2", LIST, oai("hepcrawl-page1.xml"))
    server.add("/oai2", PAGE2, oai("hepcrawl-page2.xml"))
    server.add("/oai2", PAGE3, oai("hepcrawl-page3.xml"))


def config_for(root: Path, server: RecordedServer) -> Config:
    return make_config(
        root,
        embedding={"float32_cache": False, "max_length": 64},
        harvest={"url": server.url("/oai2"), "metadata_prefix": "arXiv", "delay_seconds": 0,
                 "retries": 0, "mailto": "it@lab.example"},
    )  # fmt: skip


def indexed_ids(data: DataDir) -> list[str]:
    """arXiv ids the lexical index holds (duplicates would show twice)."""
    data.lexical.reload()
    docids, _, _ = data.lexical.search(data.lexical.index.parse_query("*"), 1000)
    papers = data.store.get(docids)
    return sorted(papers[d].arxiv_id for d in docids)


def test_full_chain(recorded: RecordedServer, tmp_path: Path) -> None:
    chain(recorded)
    data = DataDir(config_for(tmp_path, recorded))
    try:
        report = harvest(data)
        assert (report.pages, report.added, report.requests) == (3, 12, 3)
        assert len(indexed_ids(data)) == 12 and data.store.count() == 12
        cp = load_checkpoint(data, recorded.url("/oai2"), "arXiv", None)
        assert cp.token is None and cp.next_from == "2016-01-14"
        hits = SearchEngine(data).search(SearchRequest("Kretschmann invariant", mode="keyword"))
        assert hits.hits[0].paper.arxiv_id == "1606.04259"
        recorded.add("/oai2", NEXT, oai("ErrorResponseNoRecordsMatch.xml"))
        again = harvest(data)  # continues from where the last run ended: nothing new
        assert (again.records, again.requests) == (0, 1)
        assert recorded.requests[-1][1] == NEXT
    finally:
        data.close()


def test_resumes_after_failure(recorded: RecordedServer, tmp_path: Path) -> None:
    chain(recorded)
    recorded.add("/oai2", PAGE3, Reply(b"down", 503), oai("hepcrawl-page3.xml"))
    data = DataDir(config_for(tmp_path, recorded))
    try:
        with pytest.raises(HarvestError, match="HTTP 503"):
            harvest(data)
        assert data.store.count() == 8
        assert load_checkpoint(data, recorded.url("/oai2"), "arXiv", None).token == "hepcrawl|8"
        report = harvest(data)
        assert report.resumed and (report.pages, report.added) == (1, 4)
        assert recorded.requests[-1][1] == PAGE3
        assert len(set(indexed_ids(data))) == len(indexed_ids(data)) == 12
    finally:
        data.close()


def test_crash_between_store_and_lexical_commit(
    recorded: RecordedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chain(recorded)
    data = DataDir(config_for(tmp_path, recorded))
    real = harvest_mod._commit_lexical
    calls = iter([real, _boom])
    monkeypatch.setattr(harvest_mod, "_commit_lexical", lambda d: next(calls)(d))
    try:
        with pytest.raises(RuntimeError, match="power cut"):
            harvest(data)
        monkeypatch.setattr(harvest_mod, "_commit_lexical", real)
        data.close()
        data = DataDir(config_for(tmp_path, recorded))  # "restart"
        assert data.store.count() == 8  # page 2 reached the store, not the lexical index
        report = harvest(data)  # repairs, re-fetches page 2 (a no-op) and finishes
        assert report.resumed and (report.added, report.unchanged) == (4, 4)
        assert len(indexed_ids(data)) == 12
    finally:
        data.close()


def _boom(data: DataDir) -> None:
    raise RuntimeError("power cut")


def test_bad_resumption_token_restarts_the_window(recorded: RecordedServer, tmp_path: Path) -> None:
    chain(recorded)
    recorded.add("/oai2", PAGE2, Reply(b"down", 503))
    data = DataDir(config_for(tmp_path, recorded))
    try:
        with pytest.raises(HarvestError):
            harvest(data)
        recorded.add("/oai2", PAGE2, oai("ErrorResponseBadResumptionToken.xml"),
                     oai("hepcrawl-page2.xml"))  # fmt: skip
        report = harvest(data)
        assert [p for _, p, _ in recorded.requests[-4:]] == [PAGE2, LIST, PAGE2, PAGE3]
        assert data.store.count() == 12 and report.added == 8
    finally:
        data.close()


def test_kill_9_mid_harvest_then_resume(recorded: RecordedServer, tmp_path: Path) -> None:
    chain(recorded)
    gate = threading.Event()
    recorded.add("/oai2", PAGE3, Reply(oai("hepcrawl-page3.xml").body, hold=gate))
    config = config_for(tmp_path, recorded)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "papersift", "harvest", "--config", str(tmp_path / "config.toml"),
         "--no-embed", "--json"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        while not any(p == PAGE3 for _, p, _ in list(recorded.requests)):
            recorded.arrived.wait(60)
            recorded.arrived.clear()
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        proc.send_signal(signal.SIGKILL)  # pages 1 and 2 are committed, page 3 in flight
        proc.wait(30)
    finally:
        gate.set()
        if proc.poll() is None:
            proc.kill()
    data = DataDir(config)
    try:
        assert data.store.count() == 8
        assert len(indexed_ids(data)) == 8  # the index is readable after the kill
        report = harvest(data)
        assert report.resumed and report.added == 4
        assert recorded.requests[-1][1] == PAGE3
        ids = indexed_ids(data)
        assert len(ids) == len(set(ids)) == 12
    finally:
        data.close()


def test_cli_harvest_url_flag_and_json(
    recorded: RecordedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from papersift.cli import main

    chain(recorded)
    config = make_config(
        tmp_path,
        embedding={"float32_cache": False, "max_length": 64},
        harvest={"metadata_prefix": "arXiv", "delay_seconds": 0},
    )
    assert "127.0.0.1" not in config.harvest.url  # only --url points at the local server
    args = ["--config", str(tmp_path / "config.toml"), "--json"]
    code = main(["harvest", *args, "--no-embed", "--url", recorded.url("/oai2")])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and (out["added"], out["pages"], out["resumed"]) == (12, 3, False)
    recorded.add("/oai2", {**LIST, "from": "2016-03-01", "until": "2016-03-31"},
                 oai("hepcrawl-updates.xml"))  # fmt: skip
    code = main(["harvest", *args, "--no-embed", "--url", recorded.url("/oai2"),
                 "--from", "2016-03-01", "--until", "2016-03-31"])  # fmt: skip
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["updated"] == 2
    assert main(["reindex", *args]) == 0
    assert json.loads(capsys.readouterr().out) == {"embedded_now": 12, "papers": 12}
    asked = len(recorded.requests)
    code = main(["harvest", *args, "--url", recorded.url("/oai2"),
                 "--from", "2016-03-31", "--until", "2016-03-01"])  # fmt: skip
    assert code == 1 and "--from is after --until; swap them." in capsys.readouterr().err
    assert len(recorded.requests) == asked  # refused before any request, as search does


def test_updates_and_deletes(recorded: RecordedServer, tmp_path: Path) -> None:
    chain(recorded)
    recorded.add("/oai2", NEXT, oai("hepcrawl-updates.xml"))
    data = DataDir(config_for(tmp_path, recorded))
    try:
        harvest(data)
        assert embed_backlog(data) == 12
        planck = data.store.docid_of("1601.03238")
        chiral = data.store.docid_of("1603.00997")
        assert planck is not None and chiral is not None
        before = data.vectors.vector(chiral)
        report = harvest(data)
        assert (report.added, report.updated) == (0, 2)
        p = data.store.get([planck])[planck]
        assert p.categories[-2:] == ("chao-dyn", "nlin.CD")  # metadata-only change stored
        assert embed_backlog(data) == 1  # only the paper whose title/abstract changed
        after = data.vectors.vector(chiral)
        assert before is not None and after is not None and float(before @ after) < 0.999
        engine = SearchEngine(data)
        found = engine.search(SearchRequest("cat:nlin.CD", mode="keyword"))
        assert [h.paper.arxiv_id for h in found.hits] == ["1601.03238"]

        gone = data.store.docid_of("1512.07978")
        assert gone is not None and data.vectors.has(gone)
        recorded.add("/oai2", NEXT, oai("hepcrawl-deleted.xml"))
        report = harvest(data)
        assert report.deleted == 1 and data.store.docid_of("1512.07978") is None
        assert "1512.07978" not in indexed_ids(data) and not data.vectors.has(gone)
        result = engine.search(SearchRequest("IceCube neutrino", mode="hybrid"))
        assert "1512.07978" not in [h.paper.arxiv_id for h in result.hits]
    finally:
        data.close()


def test_searches_during_a_harvest(recorded: RecordedServer, tmp_path: Path) -> None:
    """Another engine (as in `serve`) searches while the harvest commits page by page and
    the papers are embedded."""
    chain(recorded)
    gate2, gate3 = threading.Event(), threading.Event()
    recorded.add("/oai2", PAGE2, Reply(oai("hepcrawl-page2.xml").body, hold=gate2))
    recorded.add("/oai2", PAGE3, Reply(oai("hepcrawl-page3.xml").body, hold=gate3))
    config = config_for(tmp_path, recorded)
    writer = DataDir(config)
    reader = SearchEngine(DataDir(config))
    errors: list[BaseException] = []
    seen: list[int] = []
    done = threading.Event()

    def search_loop() -> None:
        while not done.is_set():
            try:
                reader.refresh()
                r = reader.search(SearchRequest("neutrino OR quantum OR gravity", mode="keyword"))
                assert all(h.paper.arxiv_id for h in r.hits)
                seen.append(r.total)
                h = reader.search(SearchRequest("quantum gravity", mode="hybrid", page_size=50))
                assert len({x.paper.arxiv_id for x in h.hits}) == len(h.hits)  # no duplicates
            except BaseException as exc:  # collected and asserted below
                errors.append(exc)
                return

    def index_run() -> None:
        harvest(writer)
        reindex(writer)  # embedding while the searches go on

    reader.data.vectors  # noqa: B018 - loaded, as in serve
    worker = threading.Thread(target=index_run, daemon=True)
    searcher = threading.Thread(target=search_loop, daemon=True)
    searcher.start()
    worker.start()
    try:
        for gate in (gate2, gate3):
            n = len(seen)
            while len(seen) < n + 3 and not errors:
                recorded.arrived.wait(0.05)
            gate.set()
        worker.join(300)
        reader.refresh()
        final = reader.search(SearchRequest("neutrino OR quantum OR gravity", mode="keyword"))
    finally:
        gate2.set()
        gate3.set()
        done.set()
        searcher.join(30)
        writer.close()
        reader.close()
    assert not errors, errors
    assert seen == sorted(seen)  # totals only grow: each commit is seen whole
    fresh = SearchEngine(DataDir(config))
    try:
        expected = fresh.search(SearchRequest("neutrino OR quantum OR gravity", mode="keyword"))
    finally:
        fresh.close()
    assert final.total == expected.total > max(seen[:1] or [0])
    assert reader.data.vectors.size == 12  # the refresh loaded the new vectors


def test_arxivraw_set_window_and_a_dead_token(recorded: RecordedServer, tmp_path: Path) -> None:
    first = {"verb": "ListRecords", "metadataPrefix": "arXivRaw", "from": "2014-10-01",
             "set": "physics:nucl-th"}  # fmt: skip
    recorded.add("/oai2", first, oai("ListRecordsResponse.xml"))
    recorded.add("/oai2", {"verb": "ListRecords", "resumptionToken": "726959|1001"},
                 oai("ErrorResponseBadResumptionToken.xml"))  # fmt: skip
    config = make_config(
        tmp_path,
        harvest={"url": recorded.url("/oai2"), "sets": "physics:nucl-th", "delay_seconds": 0,
                 "retries": 0},
    )  # fmt: skip
    data = DataDir(config)
    try:
        with pytest.raises(HarvestError, match="badResumptionToken"):
            harvest(data, date_from=date(2014, 10, 1))
        assert data.store.count() == 6 and len(recorded.requests) == 2
        docid = data.store.docid_of("0704.0716")
        assert docid is not None and data.store.get([docid])[docid].version == 4
        cp = load_checkpoint(data, recorded.url("/oai2"), "arXivRaw", "physics:nucl-th")
        assert cp.token == "726959|1001" and cp.window_from == "2014-10-01"
        # Resuming hits the dead token, restarts the window once, then gives up: no loop.
        with pytest.raises(HarvestError, match="badResumptionToken"):
            harvest(data)
        assert [p.get("resumptionToken", "list") for _, p, _ in recorded.requests[2:]] == [
            "726959|1001", "list", "726959|1001",
        ]  # fmt: skip
        assert data.store.count() == 6 and len(indexed_ids(data)) == 6
    finally:
        data.close()


@pytest.mark.slow
@pytest.mark.parametrize("command", ["harvest", "enrich"])
def test_with_no_network_the_command_says_so_in_one_line(command: str, small: Config) -> None:
    """No network: `harvest` printed four timestamped WARNING lines and after 91 s "giving
    up after 5 attempts ([Errno -2] Name or service not known)"; `enrich` took 76 s."""
    from tests.test_oai import UNRESOLVABLE, resolver_says_temporary

    config = small.base_dir / "config.toml"
    config.write_text(
        config.read_text() + f'[enrich]\nopenalex_url = "{UNRESOLVABLE}"\ndelay_seconds = 0\n'
    )
    argv = [sys.executable, "-m", "papersift", command, "--config", str(config)]
    if command == "harvest":
        argv += ["--url", UNRESOLVABLE, "--from", "2024-01-01", "--until", "2024-01-02"]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    warnings = [x for x in out.stderr.splitlines() if "WARNING" in x]
    assert len(warnings) == (1 if resolver_says_temporary() else 0), out.stderr
    last = out.stderr.splitlines()[-1]
    assert last.startswith("papersift: error: nonexistent.invalid could not be resolved ("), last
    assert f"papersift needs network access to nonexistent.invalid ({UNRESOLVABLE}" in last
    assert "Traceback" not in out.stderr and "giving up" not in out.stderr


def test_harvest_says_what_it_asks_for_before_it_starts(
    recorded: RecordedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A first harvest on an old snapshot silently asked for years of all of arXiv; it says
    what it asks for, and over every set a window longer than 30 days gets a note on how to
    narrow it (not a refusal)."""
    from papersift.cli import main

    chain(recorded)
    url = recorded.url("/oai2")
    config = config_for(tmp_path, recorded)
    args = ["harvest", "--config", str(tmp_path / "config.toml"), "--no-embed"]
    assert main(args) == 0
    first, note = capsys.readouterr().err.splitlines()
    assert (
        first
        == f"harvesting all sets from {url}: records of any date (the index holds no paper yet)"
    )
    assert note == (
        "note: that is the whole history of changes in every arXiv archive; `[harvest] sets` "
        '(e.g. sets = "cs math", or PAPERSIFT_HARVEST_SETS) harvests only those sets, '
        "--from YYYY-MM-DD a shorter window"
    )
    recorded.add("/oai2", NEXT, oai("ErrorResponseNoRecordsMatch.xml"))
    assert main(args) == 0
    first, note = capsys.readouterr().err.splitlines()
    assert first == (
        f"harvesting all sets from {url}: records changed from 2016-01-14 to now (where the "
        "last harvest ended)"
    )
    years = (datetime.now(UTC).date() - date(2016, 1, 14)).days / 365.25
    assert note.startswith(f"note: that is about {years:.1f} years of changes in every arXiv")
    window = {**LIST, "from": "2016-03-01", "until": "2016-03-31"}  # 30 days: no note
    recorded.add("/oai2", window, oai("ErrorResponseNoRecordsMatch.xml"))
    assert main([*args, "--from", "2016-03-01", "--until", "2016-03-31"]) == 0
    assert capsys.readouterr().err == (
        f"harvesting all sets from {url}: records changed from 2016-03-01 to 2016-03-31 "
        "(as asked)\n"
    )
    data = DataDir(config)
    newest = data.store.newest_updated()
    data.close()
    assert newest is not None
    make_config(tmp_path, harvest={"url": url, "metadata_prefix": "arXiv", "sets": "physics:hep-th",
                                   "mailto": "it@lab.example", "delay_seconds": 0})  # fmt: skip
    recorded.add("/oai2", {**LIST, "from": newest.isoformat(), "set": "physics:hep-th"},
                 oai("ErrorResponseNoRecordsMatch.xml"))  # fmt: skip
    assert main(args) == 0
    assert capsys.readouterr().err == (  # chosen sets: however long, no note
        f"harvesting set physics:hep-th from {url}: records changed from {newest} to now (the "
        "newest update date of a paper in the index)\n"
    )
