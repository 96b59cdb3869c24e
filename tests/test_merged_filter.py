"""A researcher id a merge took away, as a search filter: it reads as the researcher it leads
to now, with a note, in the API, the page, the search feed, recommend and a saved search
(a review found them all empty and silent, while the id's pages redirect)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import feedparser
import pytest
from starlette.testclient import TestClient

from papersift.engine.datadir import DataDir
from papersift.engine.results import Filters
from papersift.engine.search import SearchEngine, open_engine
from papersift.engine.subscriptions import SavedSearch
from papersift.indexer.build import import_files
from papersift.indexer.identity_refresh import refresh_people
from papersift.server.app import create_app
from tests.corpus import add_merged_researcher, make_config, sample_records, write_jsonl
from tests.web_helpers import parse_html


@pytest.fixture(scope="module")
def merged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, int, int, int]]:
    """(client, engine, gone, heir, heir's papers): a small real index where researcher
    ``gone`` was merged into ``heir`` as ``indexer.identity`` leaves it (no papers, a
    ``merged_into``)."""
    tmp = tmp_path_factory.mktemp("merged")
    config = make_config(tmp)
    data = DataDir(config)
    import_files(data, [write_jsonl(tmp / "p.jsonl", sample_records()[:40])])
    refresh_people(data)
    heir = data.people.search("", limit=1)[0][0]
    gone = add_merged_researcher(data.store, heir.rid)
    data.close()
    engine = open_engine(config)
    with TestClient(create_app(engine, config), follow_redirects=False) as c:
        yield (c, engine), gone, heir.rid, heir.papers
    engine.close()


def test_merged_id_filters_by_its_survivor(merged: tuple[Any, int, int, int]) -> None:
    (client, _), gone, heir, papers = merged
    note = f"researcher #{gone} is now #{heir}"
    assert client.get(f"/api/v1/researchers/{gone}").status_code == 301  # as before
    body = client.get("/api/v1/search", params={"researcher_id": gone}).json()
    assert body["total"] == papers > 0
    assert note in body["warnings"]
    survivor = client.get("/api/v1/search", params={"researcher_id": heir}).json()
    assert [h["paper"]["id"] for h in body["hits"]] == [h["paper"]["id"] for h in survivor["hits"]]
    both = client.get("/api/v1/search", params=[("researcher_id", gone), ("researcher_id", heir)])
    assert both.json()["total"] == papers  # the same researcher twice: one filter
    first = body["hits"][0]["paper"]
    page = parse_html(client.get("/search", params={"researcher_id": gone}).text)
    assert note in page.text_content() and first["title"] in page.text_content()
    feed = feedparser.parse(client.get("/rss/search.xml", params={"researcher_id": gone}).content)
    assert feed.entries and first["title"] in [e.title for e in feed.entries]


def test_unknown_id_still_says_so(merged: tuple[Any, int, int, int]) -> None:
    (client, _), *_ = merged
    body = client.get("/api/v1/search", params={"researcher_id": 999_999_998}).json()
    assert body["total"] == 0 and "no researcher #999999998 in this index" in body["warnings"]


def test_recommend_and_saved_searches_follow_the_merge(merged: tuple[Any, int, int, int]) -> None:
    (client, engine), gone, heir, papers = merged
    assert isinstance(engine, SearchEngine)
    seed = client.get("/api/v1/search", params={"researcher_id": heir}).json()["hits"][0]
    ask = {"ids": [seed["paper"]["id"]], "researcher_id": [gone], "from": "1990", "to": "2030"}
    r = client.post("/api/v1/recommend", json=ask)
    assert r.status_code == 200, r.text
    assert f"researcher #{gone} is now #{heir}" in r.json()["warnings"]
    # A member's saved search (and the digest's followed researcher) runs engine.search.
    saved = SavedSearch(1, "", in_digest=True, filters=Filters(researcher_ids=(gone,)))
    result = engine.search(saved.request())
    assert result.total == papers and f"researcher #{gone} is now #{heir}" in result.warnings
