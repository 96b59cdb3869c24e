"""The edges of the web pages and API a demo review found: pages past the last one, page
counts that can all be asked for, sign-in without open sign-up, ``/papers``, an empty index."""

from __future__ import annotations

import dataclasses
import math
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.core.urls import researcher_url
from papersift.engine import recommend
from papersift.engine.datadir import DataDir
from papersift.engine.search import SearchEngine
from papersift.server.app import create_app
from tests.member_kit import member_config
from tests.test_web_pages import page
from tests.web_helpers import NARROW_WINDOW

pytest_plugins = ["tests.web_fixtures"]

QUERY = "q=parsing&mode=keyword&page_size=5"  # several pages in the session index
WINDOW = NARROW_WINDOW


def text_of(doc: Any, selector: str) -> str:
    found = doc.cssselect(selector)
    return " ".join(found[0].text_content().split()) if found else ""


def query_of(href: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(href).query)


# --- 1. a search page past the last one ------------------------------------------------------


def test_search_page_past_the_last_says_so(client: TestClient) -> None:
    first = client.get(f"/api/v1/search?{QUERY}").json()
    last, total = first["pages"], first["total"]
    assert last >= 2 and total > 5
    past = last + 3
    doc = page(client, f"/search?{QUERY}&page={past}")
    count = text_of(doc, ".result-count")
    assert f"{total} papers" in count and f"page {past}" not in count
    empty = text_of(doc, ".results .empty")
    assert f"page {past} is past the last page ({last})" in empty
    assert "Nothing matched" not in empty and "spelling" not in empty
    links = {a.text_content(): a.get("href") for a in doc.cssselect(".results .empty a")}
    same = {"q": ["parsing"], "mode": ["keyword"], "page_size": ["5"]}
    assert query_of(links["Go to the first page"]) == same
    assert query_of(links[f"Go to the last page ({last})"]) == {**same, "page": [str(last)]}
    assert page(client, links[f"Go to the last page ({last})"]).cssselect(".hit")


def test_api_page_past_the_last_warns(client: TestClient) -> None:
    last = client.get(f"/api/v1/search?{QUERY}").json()["pages"]
    r = client.get(f"/api/v1/search?{QUERY}&page={last + 3}")
    assert r.status_code == 200
    body = r.json()
    assert body["hits"] == [] and body["next"] is None and body["total"] > 5
    assert f"page {last + 3} is past the last page ({last})" in body["warnings"]
    on_last = client.get(f"/api/v1/search?{QUERY}&page={last}").json()
    assert on_last["hits"] and not any("past the last" in w for w in on_last["warnings"])


# --- 2. page counts within the result window -------------------------------------------------


def test_similar_text_pages_can_all_be_asked_for(narrow: TestClient) -> None:
    body = {"text": "graph neural networks for molecules"}
    first = narrow.post("/api/v1/similar", json=body).json()
    assert first["total"] > WINDOW  # the window, not the matches, ends the pages
    last = first["pages"]
    assert last == WINDOW // first["page_size"]
    assert narrow.post("/api/v1/similar", json={**body, "page": last}).status_code == 200
    assert narrow.post("/api/v1/similar", json={**body, "page": last + 1}).status_code == 400


def test_recommend_pages_can_all_be_asked_for(
    narrow: TestClient, engine: SearchEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the floors off (no such small corpus holds over 100 papers close to some seeds),
    every paper of the window is recommended: more than the result window."""
    monkeypatch.setattr(recommend, "MARGIN_FLOOR", -math.inf)
    search = dataclasses.replace(engine.config.search, recommend_cosine_floor=-1.0)
    monkeypatch.setattr(engine, "config", dataclasses.replace(engine.config, search=search))
    body = {"ids": ["2401.10241", "2402.02447"], "from": "2000-01-01", "to": "2026-12-31"}
    first = narrow.post("/api/v1/recommend", json=body).json()
    assert first["total"] > WINDOW
    last = first["pages"]
    assert last == WINDOW // first["page_size"]
    r = narrow.post("/api/v1/recommend", json={**body, "page": last})
    assert r.status_code == 200 and r.json()["hits"]
    assert narrow.post("/api/v1/recommend", json={**body, "page": last + 1}).status_code == 400


# --- 3. and 4. researcher and category lists past their end --------------------------------


def test_researchers_past_the_last_page(client: TestClient, engine: SearchEngine) -> None:
    _, total = engine.people.search("", 1, 0)
    doc = page(client, "/researchers?page=5000")
    note = text_of(doc, "main .past-last")
    assert f"the last page is {-(-total // 50)}" in note, text_of(doc, "main")
    assert "contains" not in text_of(doc, "main")
    assert doc.cssselect("main .past-last a")[0].get("href") == "/researchers"


def test_researcher_page_past_its_papers(client: TestClient, engine: SearchEngine) -> None:
    found, _ = engine.people.search("", 1, 0)  # the researcher with the most papers
    top = found[0]
    assert top.papers > 1
    url = researcher_url(top.rid, top.name)
    # 99 pages of 24 lie past the 1,000-result window; this researcher's list ends sooner.
    doc = page(client, f"{url}?page=99")
    note = text_of(doc, ".results .past-last")
    assert f"the last page is {-(-top.papers // 24)}" in note
    assert urlsplit(doc.cssselect(".results .past-last a")[0].get("href")).path == url
    assert "page 99" not in text_of(doc, "#papers-h")
    doc = page(client, f"{url}?page=1001&page_size=1")
    assert f"the last page is {top.papers}" in text_of(doc, ".results .past-last")


def test_category_page_past_its_papers(
    client: TestClient, narrow: TestClient, engine: SearchEngine
) -> None:
    top = engine.stats().categories[0]
    doc = page(client, f"/categories/{top.value}?page=99")
    assert f"the last page is {-(-top.count // 24)}" in text_of(doc, "main .past-last")
    # A list that runs on past the result window: the window's last page is the last.
    assert top.count > WINDOW
    r = narrow.get(f"/categories/{top.value}?page={WINDOW + 1}&page_size=1")
    assert r.status_code == 400 and f"at most {WINDOW} pages can be reached" in r.text


# --- 5. sign-in says how to get an account ---------------------------------------------------


def test_signin_says_how_to_get_an_account(
    engine: SearchEngine, built_config: Config, tmp_path: Any
) -> None:
    closed = create_app(engine, member_config(built_config, tmp_path / "closed"))
    with TestClient(closed) as c:
        note = text_of(page(c, "/signin"), ".no-account")
        assert "ask the lab's admin for an account" in note
        assert not page(c, "/signin").cssselect("a[href='/signup']")
    config = member_config(built_config, tmp_path / "open", signup_domains="lab.example")
    with TestClient(create_app(engine, config)) as c:
        assert page(c, "/signin").cssselect(".no-account a[href='/signup']")


# --- 6. /papers ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "target"),
    [("/papers", "/search"), ("/papers/", "/search"), ("/papers/?q=parsing", "/search?q=parsing")],
)
def test_papers_goes_to_search(client: TestClient, url: str, target: str) -> None:
    r = client.get(url)
    assert r.status_code == 302 and r.headers["location"] == target


# --- 7. an empty index -----------------------------------------------------------------------


def test_empty_index_says_how_to_fill_it(fresh_config: Config) -> None:
    engine = SearchEngine(DataDir(fresh_config))
    try:
        with TestClient(create_app(engine, fresh_config)) as c:
            home = page(c, "/")
            embedded = home.xpath("//dt[.='Semantic search']/following-sibling::dd[1]")[0]
            assert "every paper embedded" not in embedded.text_content()
            # A visitor is told it is empty; the admin how to fill it (test_admin_view).
            empty = "The index is empty: no papers have been imported yet."
            assert text_of(home, ".fill-index").startswith(empty)
            doc = page(c, "/search?q=parsing")
            assert text_of(doc, ".results .fill-index").startswith(empty)
            assert "Nothing matched" not in text_of(doc, ".results")
            assert "No researchers yet" in text_of(page(c, "/researchers"), "main")
    finally:
        engine.close()
