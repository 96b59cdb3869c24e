"""One poisoned record among good ones, in every input format: the good ones land, the bad one
is reported (id, field, reason) and skipped, and the next run goes on (issue 24)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from papersift.core.config import Config
from papersift.core.paper import MAX_VERSION, Author, Paper, parse_arxiv_id
from papersift.core.records import RecordError, checked
from papersift.engine.datadir import DataDir
from papersift.indexer.arxiv_api import parse_feed
from papersift.indexer.build import import_files
from papersift.indexer.harvest import harvest, load_checkpoint
from tests.corpus import demo_records, make_config, write_jsonl
from tests.recorded_server import FIXTURES, RecordedServer, Reply, serve

HUGE = "99999999999999999999"


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    return demo_records()[:12]


@pytest.fixture
def recorded() -> Iterator[RecordedServer]:
    yield from serve()


def _poisoned(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Good records, with lone surrogates and huge versions put into some of them."""
    out = copy.deepcopy(records)
    out[1]["title"] = "T \ud800 title"
    out[2]["abstract"] = "An abstract \udfff with a lone low surrogate."
    out[3]["authors"] = "A. Author \ud800, B. Bauthor"
    out[3]["authors_parsed"] = [["Author\ud800", "A.", ""], ["Bauthor", "B.", ""]]
    out[4]["comments"] = "12 pages \ud83d"
    out[5]["id"] = f"{out[5]['id']}v{HUGE}"
    out[6]["versions"] = [*out[6]["versions"], {"version": f"v{HUGE}", "created": "x"}]
    out[7]["id"] = f"{out[7]['id']}v{'9' * 5000}"
    return out


def test_snapshot_import_skips_and_repairs_then_reruns(
    fresh_config: Config, tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    path = write_jsonl(tmp_path / "poisoned.jsonl", _poisoned(records))
    assert "\\ud800" in path.read_text(encoding="utf-8")  # the escapes are really in the file
    data = DataDir(fresh_config)
    try:
        report = import_files(data, [path])
        reasons = [s.reason for s in report.skipped]
        assert len(reasons) == 3, reasons
        assert reasons[0].startswith(records[5]["id"]) and ": id: version outside" in reasons[0]
        assert reasons[1] == f"{records[6]['id']}: versions: v{HUGE} is outside 1..1000"
        assert len(reasons[2]) < 200 and ": id: version outside" in reasons[2]
        assert report.added == 9 and data.store.count() == 9
        stored = {p.arxiv_id: p for p in data.store.get(range(1, 100)).values()}
        assert stored[records[1]["id"]].title == "T \ufffd title"
        assert "\ufffd with" in stored[records[2]["id"]].abstract
        assert stored[records[3]["id"]].authors[0].name.endswith("\ufffd")
        assert stored[records[4]["id"]].comments == "12 pages \ufffd"
        assert data.lexical.num_docs == 9
        again = import_files(data, [path])  # a rerun is not stuck at the same place
        assert (again.added, again.updated, again.unchanged, len(again.skipped)) == (0, 0, 9, 3)
    finally:
        data.close()


def test_cli_import_json_lists_the_skipped(
    tmp_path: Path, records: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    from papersift.cli import main

    make_config(tmp_path, embedding={"float32_cache": False, "max_length": 64})
    path = write_jsonl(tmp_path / "poisoned.jsonl", _poisoned(records))
    code = main(["import", "--config", str(tmp_path / "config.toml"), "--json", str(path)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["added"] == 9
    assert [(s["line"], s["field"]) for s in out["skipped"]] == [(6, "id"), (7, "versions"),
                                                                 (8, "id")]  # fmt: skip
    assert out["skipped"][1]["id"] == records[6]["id"]


def _raw_page(version: str) -> bytes:
    """The recorded arXivRaw page (6 records) with 0704.0716's last version replaced, and
    no resumption token, so the run completes."""
    body = (FIXTURES / "oai" / "ListRecordsResponse.xml").read_bytes()
    body = body.replace(b'<version version="v4">', f'<version version="{version}">'.encode())
    start = body.index(b"<resumptionToken")
    end = body.index(b"</resumptionToken>") + len(b"</resumptionToken>")
    return body[:start] + body[end:]


def test_harvest_commits_the_page_around_a_huge_version(
    recorded: RecordedServer, tmp_path: Path
) -> None:
    first = {"verb": "ListRecords", "metadataPrefix": "arXivRaw", "from": "2014-10-01"}
    recorded.add("/oai2", first, Reply(_raw_page(f"v{HUGE}")))
    config = make_config(
        tmp_path, harvest={"url": recorded.url("/oai2"), "delay_seconds": 0, "retries": 0}
    )
    data = DataDir(config)
    try:
        report = harvest(data, date_from=date(2014, 10, 1))
        assert report.added == 5 and data.store.count() == 5
        assert report.skipped == [f"0704.0716: versions: v{HUGE} is outside 1..1000"]
        assert data.store.docid_of("0704.0716") is None
        cp = load_checkpoint(data, recorded.url("/oai2"), "arXivRaw", None)
        assert cp.token is None and cp.next_from == "2015-01-06"  # the checkpoint moved on
        # Upstream fixed the record: the next run asks from the checkpoint and takes it.
        recorded.add("/oai2", {**first, "from": "2015-01-06"}, Reply(_raw_page("v4")))
        again = harvest(data)
        assert again.added == 1 and not again.skipped and data.store.count() == 6
    finally:
        data.close()


def test_arxiv_api_entry_with_a_huge_version_is_skipped() -> None:
    rec = json.loads((FIXTURES / "arxiv_api" / "q_testing_s0_m10.json").read_text("utf-8"))
    body: bytes = rec["body"].encode("utf-8")
    root = etree.fromstring(body)
    ns = {"a": "http://www.w3.org/2005/Atom"}
    ids = root.findall("a:entry/a:id", ns)
    assert len(ids) >= 3
    victim = ids[1]
    victim.text = f"{victim.text.rsplit('v', 1)[0]}v{HUGE}"
    feed = parse_feed(200, etree.tostring(root))
    assert len(feed.papers) == len(ids) - 1
    assert len(feed.skipped) == 1 and ": id: version outside 1..1000" in feed.skipped[0]


def _paper(**changes: Any) -> Paper:
    base = Paper("2401.00001", 1, "A title", "An abstract.", (Author("A. B", "b a"),),
                 ("cs.IR",), date(2024, 1, 1), date(2024, 1, 2))  # fmt: skip
    fields = {f: getattr(base, f) for f in Paper.__slots__}  # type: ignore[attr-defined]
    return Paper(**{**fields, **changes})


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"version": 10**20}, "version"),
        ({"version": 0}, "version"),
        ({"published": date(1066, 1, 1)}, "published"),
        ({"updated": date(9999, 1, 1)}, "updated"),
        ({"authors": (Author("x", "x"),) * 10_001}, "authors"),
        ({"citation_count": -1}, "citation_count"),
    ],
)
def test_checked_names_the_field(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(RecordError) as info:
        checked(_paper(**changes))
    assert info.value.field == field and str(info.value).startswith(f"2401.00001: {field}: ")


def test_checked_repairs_text_and_keeps_good_papers_identical() -> None:
    good = _paper()
    assert checked(good) is good
    fixed = checked(_paper(title="a\ud800b", authors=(Author("N\udc00", "n"),)))
    assert fixed.title == "a\ufffdb" and fixed.authors[0].name == "N\ufffd"
    fixed.title.encode("utf-8")
    long = checked(_paper(title="t" * 5000, abstract="a " * 50_000,
                          authors=(Author("x" * 5000, "x"),)))  # fmt: skip
    assert len(long.title) == 1000 and long.title.endswith("…")
    assert len(long.abstract) <= 20_000 and len(long.authors[0].name) == 500


def test_parse_arxiv_id_bounds_the_version_before_int() -> None:
    assert parse_arxiv_id(f"2401.10241v{MAX_VERSION}") == ("2401.10241", MAX_VERSION)
    assert parse_arxiv_id(f"2401.10241v{MAX_VERSION + 1}") is None
    assert parse_arxiv_id("2401.10241v" + "9" * 5000) is None  # no ValueError from int()
    assert parse_arxiv_id("2401.10241v0") is None
    assert parse_arxiv_id("2401.10241v٣") is None  # a non-ASCII digit is no version


def test_ror_records_are_bounded_and_the_skipped_reported(tmp_path: Path) -> None:
    """Found by the reliability campaign: a record whose id is no ROR id vanished unreported,
    and a 1 MB name or 50,000 aliases were stored whole (issue 24)."""
    import gzip

    from papersift.engine.ror import MAX_NAME, MAX_NAMES, read_ror

    with gzip.open(FIXTURES / "ror" / "ror_subset_v2.jsonl.gz", "rt", encoding="utf-8") as fh:
        good = [json.loads(fh.readline()) for _ in range(3)]
    huge = copy.deepcopy(good[1])
    huge["names"] = [{"types": ["ror_display"], "value": "N" * 1_000_000},
                     *({"types": ["alias"], "value": f"a{i}"} for i in range(50_000))]  # fmt: skip
    bad_id = {**copy.deepcopy(good[2]), "id": "https://ror.org/" + "9" * 5000}
    path = tmp_path / "ror.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (good[0], huge, bad_id, "x")) + "\n{\n")
    skipped: list[str] = []
    orgs = list(read_ror(path, skipped))
    assert [o.ror_id for o in orgs] == [good[0]["id"][-9:], huge["id"][-9:]]
    assert len(orgs[1].name) <= MAX_NAME and len(orgs[1].aliases) < MAX_NAMES
    assert skipped[0].startswith("record 3: id: 'https://ror.org/9999")
    assert skipped[0].endswith("is not a ROR id") and len(skipped[0]) < 120
    assert skipped[1] == "record 4: id: str is not a ROR id"
    assert skipped[2].startswith("line 5: invalid JSON")


def test_add_reports_an_api_entry_it_skipped(recorded: RecordedServer, tmp_path: Path) -> None:
    """Found by the reliability campaign: ``papersift add`` dropped an arXiv API entry that
    failed its checks without a word (``parse_feed`` listed it, ``fetch_ids`` threw it away)."""
    from papersift.indexer.harvest import add_ids

    rec = json.loads((FIXTURES / "arxiv_api" / "q_testing_s0_m10.json").read_text("utf-8"))
    root = etree.fromstring(rec["body"].encode("utf-8"))
    ids = root.findall("{http://www.w3.org/2005/Atom}entry/{http://www.w3.org/2005/Atom}id")
    wanted = [i.text.split("/abs/")[-1].rsplit("v", 1)[0] for i in ids]  # type: ignore[union-attr]
    ids[1].text = f"{ids[1].text.rsplit('v', 1)[0]}v{HUGE}"  # type: ignore[union-attr]
    params = {"id_list": ",".join(wanted), "start": "0", "max_results": str(len(wanted))}
    recorded.add("/api/query", params, Reply(etree.tostring(root)))
    config = make_config(tmp_path, harvest={"api_url": recorded.url("/api/query"),
                                            "delay_seconds": 0, "retries": 0})  # fmt: skip
    data = DataDir(config)
    try:
        report, missing = add_ids(data, wanted)
        assert len(report.skipped) == 1 and "id: version outside 1..1000" in report.skipped[0]
        assert report.added == len(wanted) - 1 and missing == [wanted[1]]
    finally:
        data.close()
