"""The researcher directory finds a researcher under every spelling their papers record,
accents, case and punctuation aside (``engine.people_names``); the search page's empty
state points to the researcher a name query's card names. Over HTTP, on real papers."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.core.urls import researcher_url
from papersift.engine.datadir import DataDir
from papersift.engine.people import People
from papersift.engine.people_names import NAMES_SEQ
from papersift.engine.search import SearchEngine
from papersift.engine.store import PaperStore
from papersift.indexer.build import import_files
from papersift.indexer.identity_refresh import refresh_people
from papersift.server.app import create_app
from tests.corpus import demo_records, make_config, write_jsonl
from tests.test_web_pages import page
from tests.web_helpers import parse_html

pytest_plugins = ["tests.web_fixtures"]

# One person, three spellings: "Katy Boerner" (the first two), "Katy Borner", "Katy Börner".
BOERNER = ("0903.3562", "1301.5177")
KATY = (*BOERNER, "1503.03287", "1210.148", "1702.01090")
SPELLINGS = {"Katy Boerner", "Katy Borner", "Katy Börner"}
FINDS_KATY = ("Börner", "Borner", "borner", "BÖRNER", "Katy Börner", "Boerner", "Börner, Katy",
              'Katy B\\"orner', "kat bör", "K. Borner")  # fmt: skip


def _import_katy(config: Config) -> None:
    records = [r for r in demo_records() if r["id"] in KATY]
    data = DataDir(config)
    import_files(data, [write_jsonl(config.base_dir / "katy.jsonl", records)])
    refresh_people(data)
    data.close()


def _app(config: Config) -> tuple[SearchEngine, TestClient]:
    engine = SearchEngine(DataDir(config))
    return engine, TestClient(create_app(engine, config), follow_redirects=False)


def _found(client: TestClient, q: str) -> list[int]:
    """Researcher ids ``/api/v1/researchers?q=`` lists, checked against the page's links."""
    r = client.get("/api/v1/researchers", params={"q": q})
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    ids = [x["id"] for x in body["researchers"]]
    assert body["total"] == len(ids)
    html = client.get("/researchers", params={"q": q})
    assert html.status_code == 200
    doc = parse_html(html.text)
    links = [a.get("href") for a in doc.cssselect("ol.researchers a")]
    assert links == [researcher_url(x["id"], x["name"]) for x in body["researchers"]]
    return ids


def _words(path: Path) -> set[tuple[str, int]]:
    with closing(sqlite3.connect(path)) as db:
        return {(str(w), int(r)) for w, r in db.execute("SELECT word, rid FROM researcher_names")}


def _expected_words(path: Path) -> set[tuple[str, int]]:
    """Every word of every key of every assigned authorship, by researcher."""
    with closing(sqlite3.connect(path)) as db:
        rows = db.execute("SELECT DISTINCT rid, key FROM authorships WHERE rid IS NOT NULL")
        return {(w, int(r)) for r, k in rows for w in str(k).split()}


@pytest.fixture(scope="module")
def katy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, int]]:
    """An app over Katy Boerner's papers, and her researcher id."""
    config = make_config(tmp_path_factory.mktemp("katy"))
    _import_katy(config)
    engine, client = _app(config)
    with client:
        found, total = engine.people.search("Boerner")
        assert total == 1
        yield client, found[0].rid
    engine.close()


def test_directory_finds_every_spelling(katy: tuple[TestClient, int]) -> None:
    client, rid = katy
    profile = client.get(f"/api/v1/researchers/{rid}").json()["researcher"]
    assert set(profile["variants"]) == SPELLINGS  # one person, as the clustering made her
    for q in FINDS_KATY:
        assert _found(client, q) == [rid], q
    # Each word of the query starts a word of the name: not inside one, not another person.
    for q in ("orner", "Katy Smith", "Borner Katyx"):
        assert _found(client, q) == [], q
    doc = page(client, "/researchers?q=orner")
    assert "No researcher found for “orner”" in doc.cssselect("main")[0].text_content()


def test_directory_words_follow_the_papers(fresh_config: Config) -> None:
    """A refresh rewrites the words of the researchers it recomputes: a spelling whose
    papers are gone no longer finds anyone, the others still do."""
    _import_katy(fresh_config)
    path = fresh_config.data_dir / "papers.sqlite"
    assert _words(path) == _expected_words(path)
    data = DataDir(fresh_config)
    data.store.delete(list(BOERNER))
    refresh_people(data)
    data.close()
    assert _words(path) == _expected_words(path)
    engine, client = _app(fresh_config)
    with client:
        assert _found(client, "Boerner") == []
        (rid,) = _found(client, "Börner")
        assert _found(client, "Katy Borner") == [rid]
    engine.close()


def test_store_made_before_the_name_table(fresh_config: Config) -> None:
    """A data directory from before the table keeps opening: read-only (``papersift user``)
    as it is, for writing with the table filled from its authorships; so is one whose words
    an older papersift's refresh left behind the researcher tables."""
    _import_katy(fresh_config)
    path = fresh_config.data_dir / "papers.sqlite"
    written = _words(path)
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("DROP TABLE researcher_names")
        db.execute("DELETE FROM meta WHERE key = ?", (NAMES_SEQ,))
    store = PaperStore(path, readonly=True)
    try:
        assert People(store).get(1) is not None
    finally:
        store.close()
    engine, client = _app(fresh_config)
    with client:
        assert len(_found(client, "Börner")) == 1
    engine.close()
    assert _words(path) == written
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("DELETE FROM researcher_names WHERE word = 'boerner'")
        db.execute("UPDATE meta SET value = '0' WHERE key = ?", (NAMES_SEQ,))
    engine, client = _app(fresh_config)
    with client:
        assert len(_found(client, "Boerner")) == 1
    engine.close()
    assert _words(path) == written


def _empty_state(client: TestClient, url: str) -> tuple[list[str], Any]:
    doc = page(client, url)
    cards = [a.get("href") for a in doc.cssselect(".researcher-cards a.researcher-card")]
    assert "No papers found" in doc.cssselect(".result-count")[0].text_content()
    return cards, doc.cssselect(".results .empty")[0]


@pytest.mark.parametrize("q", ["V. Larivière", "Lariviere, V.", "Larivière V"])
def test_no_papers_for_a_name_points_to_its_researcher(client: TestClient, q: str) -> None:
    """The words match no paper (no paper holds the word "v"), but they name a researcher:
    the card is shown, and the empty state sends the reader to their papers."""
    body = client.get("/api/v1/search", params={"q": q}).json()
    assert body["total"] == 0
    (card,) = body["researchers"]
    assert card["name"] == "Vincent Larivière" and card["papers"] == 2
    href = researcher_url(card["id"], card["name"])
    cards, empty = _empty_state(client, f"/search?q={q}")
    assert cards == [href]
    note = empty.cssselect("p.named")[0]
    assert " ".join(note.text_content().split()).startswith(
        "No paper matches these words; Vincent Larivière’s 2 papers are on their page."
    )
    assert [a.get("href") for a in note.cssselect("a")] == [href]
    assert "Check the spelling" not in empty.text_content()


def test_filtered_name_and_unknown_words(client: TestClient) -> None:
    _, empty = _empty_state(client, "/search?q=Vincent Larivière&to=1990-01-01")
    note = " ".join(empty.cssselect("p.named")[0].text_content().split())
    assert note.startswith("No paper matches these words with these filters; Vincent Larivière’s")
    assert "Search again without any filter" in empty.text_content()
    cards, empty = _empty_state(client, "/search?q=xkqzvwp flurbish")
    assert cards == [] and empty.cssselect("p.named") == []
    assert "Check the spelling" in empty.text_content()


def test_author_clause_reads_initials_last(client: TestClient) -> None:
    """``au:"Lariviere V"`` (a bibliography's order without its comma) reaches nobody as
    typed, so it is read as ``V Lariviere``: the papers of ``au:"Vincent Larivière"``."""

    def ids(q: str) -> set[str]:
        body = client.get("/api/v1/search", params={"q": q, "mode": "keyword"}).json()
        return {h["paper"]["id"] for h in body["hits"]}

    expected = ids('au:"Vincent Larivière"')
    assert len(expected) == 2
    assert ids('au:"Lariviere V"') == ids('au:"Lariviere, V."') == expected
