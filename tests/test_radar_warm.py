"""The radar's window analysed ahead of the first request: exactly the window a request then
reads (it analyses nothing itself and ranks as it would have), and only when someone would
ask (a declared lab, or a member with saved papers)."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import pytest

from papersift.core.config import Config
from papersift.core.setting_parsers import LabMember
from papersift.engine import radar
from papersift.engine import recommend as recommend_module
from papersift.engine.datadir import DataDir
from papersift.engine.library import Library
from papersift.engine.members import Members, seeds_exist
from papersift.engine.radar import warm
from papersift.engine.recommend import recommend, warm_window
from papersift.engine.search import SearchEngine
from papersift.indexer.build import import_files
from papersift.indexer.scheduler import JobRunner
from tests.corpus import make_config, sample_records, write_jsonl
from tests.member_kit import add_member

ORCID = "0000-0002-1825-0097"
# Seeds with papers close to them in the default window (June 2026, mostly cs.CL): retrieval-
# augmented generation. (The corpus's first papers, 2007 digital libraries, have none.)
RAG = ["2503.14649", "2508.12282", "2505.22571"]


def _config(tmp_path: Path) -> Config:
    config = make_config(tmp_path, embedding={"float32_cache": False})
    data = DataDir(config)
    import_files(data, [write_jsonl(tmp_path / "a.jsonl", sample_records())])
    data.close()
    return config


def _no_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*_: object) -> object:
        raise AssertionError("the window was analysed again")

    monkeypatch.setattr(recommend_module, "_analyse_window", fail)


def test_a_warmed_window_is_the_one_a_request_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(tmp_path)
    data = DataDir(config)
    seeds = RAG
    cold, warmed = SearchEngine(data), SearchEngine(data)  # each keeps windows of its own
    try:
        expected = recommend(cold, seeds, None, 1, 10)  # analyses the window itself
        assert expected.hits
        analysed = warm_window(warmed)
        assert analysed > 0 and warm_window(warmed) == 0  # kept: not analysed twice
        _no_analysis(monkeypatch)
        got = recommend(warmed, seeds, None, 1, 10)
        assert [h.paper.arxiv_id for h in got.hits] == [h.paper.arxiv_id for h in expected.hits]
        assert [h.score for h in got.hits] == pytest.approx([h.score for h in expected.hits])
    finally:
        cold.close()
        warmed.close()


def test_only_when_someone_would_ask(tmp_path: Path) -> None:
    config = _config(tmp_path)
    root = config.data_dir
    with SearchEngine(DataDir(config)) as engine:
        assert not seeds_exist(root) and warm(engine, config.lab) is None  # no accounts file
        add_member(root, "lee@lab.example")
        assert not seeds_exist(root) and warm(engine, config.lab) is None  # nothing saved
        lab = replace(config.lab, name="The Lab", members=(LabMember("A. Person", ORCID),))
        assert lab.declared and (warm(engine, lab) or 0) > 0
        members = Members(root)
        try:
            who = members.existing("lee@lab.example").id
            library = Library(members)
            library.save(who, library.ensure_tag(who, "to read").id, [sample_records()[0]["id"]])
        finally:
            members.close()
        assert seeds_exist(root) and warm(engine, config.lab) == 0  # wanted, already kept


def test_the_refresh_job_warms_it_once_per_generation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    config = _config(tmp_path)
    config = replace(config, lab=replace(config.lab, members=(LabMember("A. Person", ORCID),)))
    calls: list[int] = []

    def counted(engine: SearchEngine) -> int:
        calls.append(1)
        return warm_window(engine)

    monkeypatch.setattr(radar, "warm_window", counted)
    with SearchEngine(DataDir(config)) as engine:
        runner = JobRunner(engine, config)
        with caplog.at_level(logging.INFO, logger="papersift.indexer.scheduler"):
            runner._refresh()  # the interval job's body
            runner._refresh()  # the same generation: not even looked at again
        warmed = [r.getMessage() for r in caplog.records if "warm-radar" in r.getMessage()]
        assert len(warmed) == 1 and "event=finished papers=" in warmed[0] and len(calls) == 1
        _no_analysis(monkeypatch)
        assert recommend(engine, RAG[:1], None, 1, 5).hits
