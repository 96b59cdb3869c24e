"""The ROR matcher built from the stored institutions: the store's schema and migration, the
matcher cache, enrichment of raw affiliation strings, ``papersift match-affiliation`` and
``/api/v1/institutions/match`` over HTTP, all on real ROR records and ROR's own gold set."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from papersift.engine import institutions
from papersift.engine.affiliation_match import MAX_AFFILIATION, explain, matcher
from papersift.engine.datadir import DataDir
from papersift.engine.institutions import Institutions
from papersift.engine.ror import parse_ror_id, read_ror
from papersift.engine.ror_match import RorMatcher, match_keys
from papersift.engine.search import open_engine
from papersift.engine.store import PaperStore
from papersift.indexer.enrich import WorkRecord, apply_records
from papersift.indexer.identity_refresh import refresh_people
from papersift.indexer.openalex import parse_work
from papersift.indexer.semanticscholar import parse_paper
from papersift.server.app import create_app
from tests.corpus import make_config
from tests.test_cli import config_path, run
from tests.test_enrich import OA_WORK, PAPERS, S2_PAPER
from tests.web_helpers import serving

FIXTURES = Path(__file__).parent / "fixtures" / "ror"
ROR = FIXTURES / "ror_subset_v2.jsonl.gz"
GOLD = json.loads((FIXTURES / "affiliation_gold_600.json").read_text(encoding="utf-8"))
UW_TEXT = "Information School, University of Washington, Seattle, USA"
UW = "00cvxb145"

# The institution tables as stores made before match keys and the iid index had them.
OLD_SCHEMA = """
CREATE TABLE institutions (
    iid INTEGER PRIMARY KEY AUTOINCREMENT, ror_id TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
    key TEXT NOT NULL, country TEXT NOT NULL, city TEXT NOT NULL, types TEXT NOT NULL,
    aliases TEXT NOT NULL, parents TEXT NOT NULL, status TEXT NOT NULL
);
CREATE TABLE institution_names (
    key TEXT NOT NULL, iid INTEGER NOT NULL, PRIMARY KEY (key, iid)
) WITHOUT ROWID;
"""


def _gold_counts(match: Any) -> tuple[int, int]:
    right = wrong = 0
    for g in GOLD:
        want = {parse_ror_id(x) for x in g["ror_ids"]}
        found = match(g["affiliation"])
        if found is not None:
            right += found.ror_id in want
            wrong += found.ror_id not in want
    return right, wrong


@pytest.fixture
def registry(tmp_path: Path) -> Iterator[Institutions]:
    store = PaperStore(tmp_path / "papers.sqlite")
    reg = Institutions(store)
    reg.import_organisations(read_ror(ROR))
    yield reg
    store.close()


def test_the_stored_matcher_is_the_in_memory_one(registry: Institutions) -> None:
    """Built from the store's keys, it answers ROR's gold set exactly as the matcher built
    from the dump does."""
    direct = RorMatcher.from_organisations(read_ror(ROR))
    stored = matcher(registry)
    assert set(stored.orgs) == set(direct.orgs)
    with registry.store.reading() as db:
        keys = dict(db.execute("SELECT ror_id, match_keys FROM institutions"))
    assert all(json.loads(keys[o.ror_id]) == list(match_keys(o)) for o in read_ror(ROR))
    via_product = _gold_counts(lambda t: explain(registry, t).explanation.match)
    assert via_product == _gold_counts(direct.match)
    right, wrong = via_product
    assert right / (right + wrong) >= 0.94 and right >= 150


def test_matcher_is_cached_and_rebuilt_when_institutions_change(registry: Institutions) -> None:
    first = matcher(registry)
    assert matcher(registry) is first  # no rebuild without a change
    assert explain(registry, UW_TEXT).institution is not None
    renamed = [
        dataclasses.replace(o, name="Husky College", aliases=())
        for o in read_ror(ROR)
        if o.ror_id == UW
    ]
    before = registry.version()
    registry.import_organisations(renamed)
    assert registry.version() == before + 1
    assert matcher(registry) is not first
    assert explain(registry, UW_TEXT).explanation.match is None
    assert registry.by_name("University of Washington") == []  # old names gone from the index
    again = explain(registry, "Husky College, Seattle, USA").explanation.match
    assert again is not None and again.ror_id == UW


def test_import_batches_and_duplicates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    orgs = list(read_ror(ROR))
    store = PaperStore(tmp_path / "papers.sqlite")
    try:
        monkeypatch.setattr(institutions, "IMPORT_BATCH", 50)  # 11 batches, one partial
        reg = Institutions(store)
        renamed = dataclasses.replace(orgs[3], name="Renamed Institute of Testing")
        assert reg.import_organisations([*orgs, renamed]) == len(orgs) + 1
        assert reg.count() == len(orgs)
        found = reg.by_ror(orgs[3].ror_id)
        assert found is not None and found.name == "Renamed Institute of Testing"
        with store.reading() as db:
            names = db.execute("SELECT COUNT(*) FROM institution_names").fetchone()[0]
        assert reg.import_organisations(orgs) == len(orgs)  # a second import replaces names
        with store.reading() as db:
            assert db.execute("SELECT COUNT(*) FROM institution_names").fetchone()[0] <= names + 1
        assert reg.by_name("Renamed Institute of Testing") == []
    finally:
        store.close()


def test_an_older_store_is_migrated_when_opened(tmp_path: Path) -> None:
    """Tables written by the code before this schema (aliases and acronyms in one list, no
    match keys, no iid index) gain both on open; matching then works as after a re-import."""
    path = tmp_path / "papers.sqlite"
    PaperStore(path).close()
    db = sqlite3.connect(path)
    db.executescript(OLD_SCHEMA)
    orgs = list(read_ror(ROR))
    for o in orgs:
        db.execute(
            "INSERT INTO institutions (ror_id, name, key, country, city, types, aliases, "
            "parents, status) VALUES (?,?,?,?,?,?,?,?,?)",
            (o.ror_id, o.name, "", o.country, o.city, json.dumps(list(o.types)),
             json.dumps([*o.aliases, *o.acronyms]), json.dumps(list(o.parents)), o.status),
        )  # fmt: skip
    db.commit()
    db.close()
    store = PaperStore(path)
    try:
        reg = Institutions(store)
        with store.reading() as con:
            indexes = {r[1] for r in con.execute("PRAGMA index_list(institution_names)")}
            missing = con.execute("SELECT COUNT(*) FROM institutions WHERE match_keys IS NULL")
            assert missing.fetchone()[0] == 0
        assert "institution_names_iid" in indexes
        migrated = _gold_counts(lambda t: explain(reg, t).explanation.match)
        reg.import_organisations(orgs)
        exact = _gold_counts(lambda t: explain(reg, t).explanation.match)
        assert migrated[0] >= exact[0] - 3 and migrated[1] <= exact[1] + 3, (migrated, exact)
        Institutions(store)  # opening again migrates nothing and breaks nothing
        assert reg.count() == len(orgs)
    finally:
        store.close()


def test_explanations_say_why(registry: Institutions) -> None:
    found = explain(registry, UW_TEXT)
    why = found.explanation
    assert why.match is not None and why.match.ror_id == UW and why.match.how == "exact"
    assert "university washington" in why.parts and "seattle" in why.places
    assert found.institution is not None and found.institution.ror_id == UW
    assert "University of Washington" in why.reason
    none = explain(registry, "Ophthalmology; and").explanation
    assert none.match is None and "no part" in none.reason
    # An acronym the registry knows is not matched, and the reason says so.
    uw = explain(registry, "UW, Seattle").explanation
    assert uw.match is None and uw.reason == (
        "'uw' is an acronym of 2 organisations (University of Washington, University of "
        "Wisconsin–Madison), and acronyms are not matched (one names many places): write the name"
    )
    with pytest.raises(ValueError, match="at most"):
        explain(registry, "x" * (MAX_AFFILIATION + 1))


def test_empty_registry_says_to_import(tmp_path: Path) -> None:
    store = PaperStore(tmp_path / "papers.sqlite")
    try:
        found = explain(Institutions(store), UW_TEXT)
        assert found.explanation.match is None and "import-ror" in found.explanation.reason
    finally:
        store.close()


# -- enrichment -----------------------------------------------------------------------------


def _unlinked_work() -> dict[str, Any]:
    """The recorded OpenAlex work as OpenAlex returns a work it could not link: the raw
    strings kept, the institutions and their ids gone."""
    work = json.loads(OA_WORK.read_text(encoding="utf-8"))
    for a in work["authorships"]:
        a["institutions"] = []
        for aff in a["affiliations"]:
            aff["institution_ids"] = []
    return work


def test_openalex_keeps_only_unlinked_raw_strings() -> None:
    linked = parse_work(json.loads(OA_WORK.read_text(encoding="utf-8")))
    # Only "FlourishOA, USA" has no institution id in the recorded work.
    assert {s for a in linked.authors for s in a.raw_affiliations} == {"FlourishOA, USA"}
    unlinked = parse_work(_unlinked_work())
    assert sum(len(a.raw_affiliations) for a in unlinked.authors) == 14


def test_enrichment_matches_unlinked_strings(tmp_path: Path) -> None:
    """Every ROR id found from the raw strings is one OpenAlex itself linked that author to."""
    truth = {
        (n, parse_ror_id(i["ror"]))
        for n, a in enumerate(json.loads(OA_WORK.read_text(encoding="utf-8"))["authorships"])
        for i in a["institutions"]
    }
    data = DataDir(make_config(tmp_path))
    try:
        data.store.upsert(PAPERS)
        assert apply_records(data.store, [parse_work(_unlinked_work())]).affiliations == 0
        Institutions(data.store).import_organisations(read_ror(ROR))
        report = apply_records(data.store, [parse_work(_unlinked_work())])
        refresh_people(data)  # as enrich_files does: fills the affiliations table
        with data.store.reading() as db:
            rows = set(db.execute("SELECT position, ror_id FROM affiliations"))
        papers = data.store.get([data.store.docid_of("1802.00001") or 0])
        (paper,) = papers.values()
        stored = {(p, r) for p, r, _ in json.loads(dict(paper.extra)["affiliations"])}
        assert report.affiliations_matched == len(stored) >= 5
        assert stored <= truth, stored - truth
        assert rows == stored
    finally:
        data.close()


def test_semantic_scholar_affiliations_are_matched(tmp_path: Path) -> None:
    """S2 gives an author's affiliations as raw strings only: they go through the matcher."""
    paper = json.loads(S2_PAPER.read_text(encoding="utf-8"))
    assert parse_paper(paper).authors[0].raw_affiliations == ()  # recorded as []
    gold = next(g for g in GOLD if g["ror_ids"] and "University" in g["affiliation"])
    paper["authors"][0]["affiliations"] = [gold["affiliation"]]
    rec = dataclasses.replace(parse_paper(paper), arxiv_id="1802.00002")
    assert isinstance(rec, WorkRecord) and rec.authors[0].raw_affiliations
    data = DataDir(make_config(tmp_path))
    try:
        data.store.upsert(PAPERS)
        Institutions(data.store).import_organisations(read_ror(ROR))
        report = apply_records(data.store, [rec])
        assert report.affiliations_matched == 1
        (p,) = data.store.get([data.store.docid_of("1802.00002") or 0]).values()
        ((_, ror_id, _),) = json.loads(dict(p.extra)["affiliations"])
        assert ror_id == parse_ror_id(gold["ror_ids"][0])
    finally:
        data.close()


# -- the CLI and the API --------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, Path]]:
    config = make_config(tmp_path_factory.mktemp("match"))
    data = DataDir(config)
    try:
        data.store.upsert(PAPERS)
    finally:
        data.close()
    out = run("import-ror", "--config", config_path(config), str(ROR))
    assert out.returncode == 0, out.stderr
    engine = open_engine(config)
    with TestClient(create_app(engine, config)) as client:
        yield client, Path(config_path(config))
    engine.close()


@pytest.mark.slow
def test_api_match_over_a_real_socket(tmp_path: Path) -> None:
    """``papersift import-ror`` in its own process, then the endpoint through uvicorn."""
    config = make_config(tmp_path)
    DataDir(config).close()
    assert run("import-ror", "--config", config_path(config), str(ROR)).returncode == 0
    engine = open_engine(config)
    try:
        with serving(create_app(engine, config)) as url:
            r = httpx.get(f"{url}/api/v1/institutions/match", params={"q": UW_TEXT}, timeout=60)
            assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
            assert r.json()["match"]["ror"] == f"https://ror.org/{UW}"
            long = httpx.get(f"{url}/api/v1/institutions/match?q={'x' * (MAX_AFFILIATION + 1)}")
            assert long.status_code == 400 and long.json()["error"]["parameter"] == "q"
    finally:
        engine.close()


@pytest.mark.slow
def test_cli_match_affiliation(served: tuple[TestClient, Path]) -> None:
    _, config = served
    out = run("match-affiliation", "--config", str(config), UW_TEXT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"https://ror.org/{UW}  University of Washington")
    out = run("match-affiliation", "--config", str(config), "--json", UW_TEXT)
    body = json.loads(out.stdout)
    assert body["match"]["ror"] == f"https://ror.org/{UW}" and body["match"]["id"] >= 1
    out = run("match-affiliation", "--config", str(config), "Ophthalmology; and")
    assert out.returncode == 0 and out.stdout.startswith("no match: ")
    out = run("match-affiliation", "--config", str(config), "x" * (MAX_AFFILIATION + 1))
    assert out.returncode == 1 and out.stderr.count("\n") == 1
    assert out.stderr.startswith("papersift: error: an affiliation is at most")


def test_api_match(served: tuple[TestClient, Path]) -> None:
    client, _ = served
    r = client.get("/api/v1/institutions/match", params={"q": UW_TEXT})
    assert r.status_code == 200
    body = r.json()
    assert body["match"]["ror"] == f"https://ror.org/{UW}" and body["match"]["how"] == "exact"
    assert body["institution"]["name"] == "University of Washington"
    follow = client.get(body["institution"]["url"].replace("http://testserver", ""))
    assert follow.status_code == 200
    # The API and the CLI answer through the same function.
    assert body["reason"] == explain(Institutions(_store(client)), UW_TEXT).explanation.reason
    r = client.get("/api/v1/institutions/match", params={"q": "Department of Physics"})
    assert r.status_code == 200 and r.json()["match"] is None and r.json()["institution"] is None
    blank = client.get("/api/v1/institutions/match", params={"q": " \x00 "})
    assert blank.status_code == 200 and blank.json()["match"] is None


def _store(client: TestClient) -> PaperStore:
    store: PaperStore = client.app.state.ctx.engine.data.store  # type: ignore[attr-defined]
    return store


@pytest.mark.parametrize(
    ("params", "parameter"),
    [({"q": "x" * (MAX_AFFILIATION + 1)}, "q"), ({}, "q"), ({"q": "MIT", "limit": "3"}, "limit")],
)  # fmt: skip
def test_api_match_rejects_bad_input(
    served: tuple[TestClient, Path], params: dict[str, str], parameter: str
) -> None:
    client, _ = served
    r = client.get("/api/v1/institutions/match", params=params)
    assert r.status_code == 400
    assert r.json()["error"]["parameter"] == parameter


@pytest.mark.slow
def test_api_match_is_documented(served: tuple[TestClient, Path]) -> None:
    client, _ = served
    spec = client.get("/openapi.json").json()
    op = spec["paths"]["/api/v1/institutions/match"]["get"]
    (q,) = op["parameters"]
    assert q["required"] is True and q["schema"]["maxLength"] == MAX_AFFILIATION
    assert "AffiliationMatch" in spec["components"]["schemas"]
