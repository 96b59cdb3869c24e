"""Enrichment from recorded OpenAlex and Semantic Scholar responses (see fixtures/enrich/
SOURCE.txt): parsing, matching to our papers, ids feeding identity, citation sort, the
polite online path against a local server, and the CLI."""

from __future__ import annotations

import gzip
import json
import sqlite3
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from papersift.core.authors import parse_authors
from papersift.core.config import Config
from papersift.core.paper import Paper
from papersift.engine.datadir import DataDir
from papersift.engine.people import People
from papersift.engine.results import SearchRequest
from papersift.engine.search import open_engine
from papersift.indexer.enrich import WorkAuthor, WorkRecord, apply_records, match_authors
from papersift.indexer.enrich_run import enrich_files, enrich_online
from papersift.indexer.identity_refresh import refresh_people
from papersift.indexer.openalex import parse_work
from papersift.indexer.semanticscholar import parse_paper
from tests.corpus import make_config
from tests.recorded_server import RecordedServer, Reply, serve
from tests.test_cli import config_path, run

FIX = Path(__file__).parent / "fixtures" / "enrich"
OA_WORK = FIX / "W2741809807.json"
S2_PAPER = FIX / "s2_Paper.json"
S2_NULLS = FIX / "s2_PaperWithNullValues.json"
OA_AUTHORS = (
    "Heather Piwowar, Jason Priem, Vincent Lariviere, Juan Pablo Alperin, Lisa Matthias, "
    "Bree Norlander, Ashley Farley, Jevin West, Stefanie Haustein"
)  # as the arXiv-style author string of that work would read (accent dropped)


def _paper(arxiv_id: str, title: str, authors: str, doi: str | None) -> Paper:
    # Our records of the two recorded works (titles, authors and DOIs as recorded); the
    # arXiv-style ids are ours, since neither work is on arXiv.
    return Paper(
        arxiv_id, 1, title, "Abstract.", parse_authors(authors), ("cs.DL",),
        date(2018, 2, 13), date(2018, 2, 13), doi=doi,
    )  # fmt: skip


PAPERS = (
    _paper(
        "1802.00001",
        "The state of OA: a large-scale analysis of the prevalence and impact of Open Access "
        "articles",
        OA_AUTHORS,
        "10.7717/PEERJ.4375",
    ),
    _paper("1802.00002", "Computing Machinery and Intelligence", "A. M. Turing",
           "10.1093/mind/lix.236.433"),
    _paper("1802.00003", "Open access and its discontents", "J. Priem, Someone Else", None),
)  # fmt: skip


@pytest.fixture
def data(tmp_path: Path) -> Iterator[DataDir]:
    d = DataDir(make_config(tmp_path))
    d.store.upsert(PAPERS)
    d.sync_lexical()
    refresh_people(d)
    try:
        yield d
    finally:
        d.close()


def test_parses_openalex_work() -> None:
    rec = parse_work(json.loads(OA_WORK.read_text(encoding="utf-8")))
    assert (rec.work_id, rec.doi, rec.citation_count) == ("W2741809807", "10.7717/peerj.4375", 962)
    assert [a.position for a in rec.authors][:2] == ["first", "middle"]
    assert rec.authors[-1].position == "last"
    first = rec.authors[0]
    assert first.ids == (("orcid", "0000-0003-1613-5981"), ("openalex", "A5048491430"))
    assert first.institutions == (("05ppvf150", "Impact Technology Development (United States)"),)


def test_parses_semantic_scholar_paper_and_nulls() -> None:
    rec = parse_paper(json.loads(S2_PAPER.read_text(encoding="utf-8")))
    assert (rec.doi, rec.citation_count) == ("10.1093/mind/lix.236.433", 10059)
    assert [(a.name, a.ids) for a in rec.authors] == [("A. Turing", (("s2", "2262347"),))]
    empty = parse_paper(json.loads(S2_NULLS.read_text(encoding="utf-8")))
    assert (empty.authors, empty.citation_count, empty.doi) == ((), None, None)


def test_author_matching_never_guesses() -> None:
    ours = parse_authors("J. Smith, John Smith, Ann Lee")
    theirs = parse_work(json.loads(OA_WORK.read_text(encoding="utf-8"))).authors
    assert match_authors(ours, theirs) == {}
    rec = parse_work(json.loads(OA_WORK.read_text(encoding="utf-8")))
    assert match_authors(parse_authors("J. Priem, Heather Piwowar"), rec.authors) == {0: 1, 1: 0}


def test_enrich_from_files(data: DataDir) -> None:
    report = enrich_files(data, [OA_WORK, S2_PAPER, S2_NULLS])
    assert (report.records, report.matched, report.updated) == (3, 2, 2)
    assert report.unmatched == ["2d5673caa9e6af3a7b82a43f19ee920992db07ad"]
    assert report.authors_matched == 10 and report.id_conflicts == 0
    oa = data.store.get([data.store.docid_of("1802.00001") or 0])
    (p,) = oa.values()
    assert p.citation_count == 962
    assert dict(p.authors[2].ids) == {"orcid": "0000-0002-2733-0689", "openalex": "A5068542997"}
    with data.store.reading() as db:
        rows = db.execute("SELECT position, ror_id FROM affiliations ORDER BY 1, 2").fetchall()
    assert (0, "05ppvf150") in rows and (2, "0161xgx34") in rows and len(rows) == 15
    # Re-running changes nothing: no new change sequence, no re-index.
    seq = data.store.seq
    assert enrich_files(data, [OA_WORK, S2_PAPER]).updated == 0
    assert data.store.seq == seq


def test_ids_reach_researchers_and_cited_sort(data: DataDir) -> None:
    enrich_files(data, [OA_WORK, S2_PAPER])
    people = People(data.store)
    found, _ = people.search("Priem")
    (priem,) = [people.get(r.rid) for r in found if r.name == "Jason Priem"]
    assert priem is not None and dict(priem.ids)["orcid"] == "0000-0001-6187-6610"
    turing = people.get(people.search("Turing")[0][0].rid)
    assert turing is not None and dict(turing.ids) == {"s2": "2262347"}
    engine = open_engine(data.config)
    try:
        result = engine.search(SearchRequest(query="", mode="keyword", sort="cited"))
    finally:
        engine.close()
    assert [h.paper.arxiv_id for h in result.hits] == ["1802.00002", "1802.00001", "1802.00003"]


def test_different_orcids_split_one_name(tmp_path: Path) -> None:
    d = DataDir(make_config(tmp_path))
    try:
        d.store.upsert([*PAPERS, _paper("1802.00004", "Other", "Jason Priem, Ann Lee", None)])
        refresh_people(d)
        people = People(d.store)

        def priems() -> int:
            return len([r for r in people.search("Jason Priem")[0] if r.name == "Jason Priem"])

        assert priems() == 1  # one spelled-out name: joined
        other = WorkAuthor("Jason Priem", "first", (("orcid", "0000-0002-0000-0001"),))
        apply_records(d.store, [WorkRecord("openalex", "W1", "1802.00004", None, 3, (other,))])
        enrich_files(d, [OA_WORK])  # the other Jason Priem's ORCID
        assert priems() == 2
    finally:
        d.close()


@pytest.fixture
def recorded() -> Iterator[RecordedServer]:
    yield from serve()


def _online_config(tmp_path: Path, server: RecordedServer) -> Config:
    return make_config(
        tmp_path,
        enrich={"mailto": "lab@example.org", "openalex_url": server.url("/oa"),
                "semanticscholar_url": server.url("/s2"), "delay_seconds": 0.0},
        harvest={"retries": 2},
    )  # fmt: skip


def test_enrich_online_is_polite_and_cached(tmp_path: Path, recorded: RecordedServer) -> None:
    body = OA_WORK.read_bytes()
    recorded.add(
        "/oa/works/doi:10.7717/peerj.4375", {"mailto": "lab@example.org"},
        Reply(b"slow down", 429, {"Retry-After": "7"}), Reply(body),
    )  # fmt: skip
    recorded.add(
        "/s2/paper/arXiv:1802.00002",
        {
            "fields": "externalIds,citationCount,authors.name,authors.externalIds,"
            "authors.affiliations,references.externalIds,citations.externalIds"
        },
        Reply(S2_PAPER.read_bytes()),
    )
    config = _online_config(tmp_path, recorded)
    d = DataDir(config)
    slept: list[float] = []
    try:
        d.store.upsert(PAPERS)
        report, requests, hits = enrich_online(d, sleep=slept.append)
        assert (report.matched, report.updated, hits) == (2, 2, 0)
        assert 7.0 in slept  # Retry-After honoured
        assert all("mailto:lab@example.org" in agent for _, _, agent in recorded.requests)
        assert requests == len(recorded.requests) == 7  # 1 retry + 3 OpenAlex + 3 S2 (404s)
        again, requests2, hits2 = enrich_online(d, sleep=slept.append)
        assert (requests2, hits2, again.updated) == (0, 6, 0)
        p = d.store.get([d.store.docid_of("1802.00002") or 0])
        assert next(iter(p.values())).citation_count == 10059
    finally:
        d.close()


def test_cli_import_ror_and_enrich(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    d = DataDir(config)
    d.store.upsert(PAPERS)
    d.close()
    ror = Path(__file__).parent / "fixtures" / "ror" / "ror_subset_v2.jsonl.gz"
    out = run("import-ror", "--config", config_path(config), "--json", str(ror))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["institutions"] == 528
    # A withdrawn organisation is kept to resolve its id, not listed: the count says so.
    with gzip.open(ror, "rt", encoding="utf-8") as fh:
        record = json.loads(fh.readline())
    record.update(id=record["id"][:-4] + "zz99", status="withdrawn")
    more = tmp_path / "withdrawn.jsonl"
    more.write_text(json.dumps(record) + "\n", encoding="utf-8")
    out = run("import-ror", "--config", config_path(config), str(more))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == (
        "1 organisation read, 1 new; 529 institutions in the index, 528 listed "
        "(1 withdrawn: kept to resolve their ids)"
    )
    out = run("enrich", "--config", config_path(config), "--json", "--from-file", str(OA_WORK))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["updated"] == 1
    out = run("enrich", "--config", config_path(config), "--from-file", str(tmp_path))
    assert out.returncode == 1 and out.stderr.startswith("papersift: error: no such file")
    # Ids that are none, or not in the index, were enriched as nothing: "0 records", exit 0.
    said = {
        "notanid": "not an arXiv id: 'notanid' (such as 2401.10241)",
        "9999.99999": "not in this index: 9999.99999; add them first (`papersift add ID...`)",
    }
    for arxiv_id, line in said.items():
        out = run("enrich", "--config", config_path(config), arxiv_id)
        assert out.returncode == 1 and out.stderr.strip() == f"papersift: error: {line}"
    db = sqlite3.connect(config.data_dir / "papers.sqlite")
    assert db.execute("SELECT COUNT(*) FROM affiliations").fetchone()[0] == 15
    db.close()


def test_online_enrichment_reports_what_it_skipped(
    tmp_path: Path, recorded: RecordedServer
) -> None:
    """Found by the reliability campaign: an online answer whose citation count is out of
    bounds was skipped (not stored) but missing from the report ``enrich --json`` prints."""
    work = json.loads(OA_WORK.read_text(encoding="utf-8"))
    recorded.add("/oa/works/doi:10.7717/peerj.4375", {"mailto": "lab@example.org"},
                 Reply(json.dumps({**work, "cited_by_count": 10**30}).encode()))  # fmt: skip
    d = DataDir(_online_config(tmp_path, recorded))
    try:
        d.store.upsert(PAPERS)
        report, _, _ = enrich_online(d, sleep=lambda _: None)
        assert len(report.skipped) == 1 and "1802.00001: citation_count" in report.skipped[0]
        p = d.store.get([d.store.docid_of("1802.00001") or 0])
        assert next(iter(p.values())).citation_count is None  # not stored
    finally:
        d.close()
