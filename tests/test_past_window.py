"""A page past the result window answers as the web page always did, in the API and the
CLI too: after the last page of a list that ends inside the window it is the empty page that
names the last page; only a list that runs on past the window refuses it, with a 400 (or
one CLI line) that counts the results the pages reach, as the pages themselves say."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from typing import Any

import pytest
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.core.errors import WindowError
from papersift.engine.list_page import list_page
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine
from papersift.server.app import create_app
from tests.web_helpers import NARROW_WINDOW, parse_html

pytest_plugins = ["tests.web_fixtures"]

WINDOW = NARROW_WINDOW
SHORT = {"q": "parsing", "page_size": "5"}  # a few pages, ending inside any window here
RAG = ["2503.14649", "2508.12282", "2505.22571", "2602.15856"]  # as test_recommend


def text_of(doc: Any, selector: str) -> str:
    return " ".join(" ".join(n.text_content().split()) for n in doc.cssselect(selector))


@pytest.mark.parametrize("page", [201, 5000, 10**9])  # past the window (5 x 201 > 1,000)
def test_api_past_the_window_after_the_last_page_is_an_empty_page(
    client: TestClient, page: int
) -> None:
    first = client.get("/api/v1/search", params=SHORT).json()
    last = first["pages"]
    assert 1 < last < 200 and first["total"] <= 1000
    r = client.get("/api/v1/search", params={**SHORT, "page": str(page)})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["hits"] == [] and body["next"] is None
    assert body["total"] == first["total"] and body["pages"] == last and body["page"] == page
    assert f"page {page:,} is past the last page ({last})" in body["warnings"]
    # The search page says the same of the same page.
    doc = parse_html(client.get("/search", params={**SHORT, "page": str(page)}).text)
    assert f"page {page:,} is past the last page ({last})" in text_of(doc, ".past-last")


def test_api_past_the_window_of_a_longer_list_is_a_400_counting_what_pages_reach(
    narrow: TestClient,
) -> None:
    first = narrow.get("/api/v1/search").json()  # browsing: every paper, 24 a page
    assert first["total"] > WINDOW and first["page_size"] == 24
    reach, last = first["reachable"], first["pages"]
    assert (last, reach) == (WINDOW // 24, WINDOW // 24 * 24)  # 4 pages, the first 96
    assert narrow.get("/api/v1/search", params={"page": str(last)}).json()["hits"]
    r = narrow.get("/api/v1/search", params={"page": str(last + 1)})
    assert r.status_code == 400
    assert r.json()["error"] == {
        "status": 400,
        "code": "bad_request",
        "parameter": "page",
        "message": f"Page {last + 1} is past the result window: with 24 per page at most "
        f"{last} pages can be reached (the first {reach} results).",
    }
    # The search page's count of what the pages reach is the same number.
    doc = parse_html(narrow.get("/search", params={"page": str(last)}).text)
    assert f"(pages reach the first {reach})" in text_of(doc, ".result-count")
    doc = parse_html(narrow.get("/search", params={"page": str(last + 1)}).text)
    assert f"at most {last} pages can be reached (the first {reach} results)" in text_of(
        doc, "main"
    )
    # A list that ends inside the window answers past it, on the narrow server too.
    short = narrow.get("/api/v1/search", params={**SHORT, "page": str(WINDOW)})
    assert short.status_code == 200 and short.json()["hits"] == []


def test_references_and_citations_page_as_the_search_does(client: TestClient) -> None:
    """They are the searches ``cites:ID`` and ``citedby:ID`` (empty here: no enrichment)."""
    r = client.get("/api/v1/papers/2401.10241/citations", params={"page": "5000"})
    assert r.status_code == 200, r.text
    body = r.json()
    same = client.get("/api/v1/search", params={"q": "cites:2401.10241", "page": "5000"})
    assert body["hits"] == [] and body["warnings"] == same.json()["warnings"]
    assert f"page 5,000 is past the last page ({body['pages']})" in body["warnings"]


def test_papers_like_a_text_page_as_the_search_does(client: TestClient, narrow: TestClient) -> None:
    """``POST /api/v1/similar``: the nearest papers of the session's ~320 end inside the
    window of 1,000 (the empty page with its note), and run on past the narrow one (400)."""
    text = {"text": "parsing natural language with statistical models"}
    first = client.post("/api/v1/similar", json={**text, "page_size": 5}).json()
    last = first["pages"]
    assert first["total"] <= 1000 and last > 1
    r = client.post("/api/v1/similar", json={**text, "page_size": 5, "page": 5000})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["hits"] == [] and body["total"] == first["total"] and body["page"] == 5000
    assert f"page 5,000 is past the last page ({last})" in body["warnings"]
    assert narrow.post("/api/v1/similar", json={**text, "page": 4}).json()["hits"]
    r = narrow.post("/api/v1/similar", json={**text, "page": 5})
    assert r.status_code == 400
    assert r.json()["error"]["message"] == (
        "Page 5 is past the result window: with 24 per page at most 4 pages can be reached "
        "(the first 96 results)."
    )


def test_the_engine_answers_the_same_and_says_why_it_cannot(
    engine: SearchEngine, built_config: Config
) -> None:
    cfg = built_config.search
    req = SearchRequest("parsing", page=5000, page_size=5)
    past = list_page(engine, req, cfg)
    assert past.hits == () and past.page == 5000 and past.total > 5
    narrow = replace(cfg, max_window=WINDOW)
    with pytest.raises(WindowError) as caught:
        list_page(engine, SearchRequest("", sort="newest", page=5, page_size=24), narrow)
    assert str(caught.value) == (
        "page 5 is past the result window: with 24 per page at most 4 pages can be reached "
        "(the first 96 results)"
    )


def _cli(config: Config, *args: str, window: int | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if window is not None:
        env["PAPERSIFT_SEARCH_MAX_WINDOW"] = str(window)
    path = str(config.base_dir / "config.toml")
    return subprocess.run(
        [sys.executable, "-m", "papersift", "search", "--config", path, *args],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip


@pytest.mark.slow
def test_the_cli_pages_as_the_web(built_config: Config, engine: SearchEngine) -> None:
    first = engine.search(SearchRequest("parsing", page_size=5))
    out = _cli(built_config, "parsing", "--page-size", "5", "--page", "201")
    assert out.returncode == 0, out.stderr
    notes = [line for line in out.stderr.splitlines() if line.startswith("note:")]
    assert notes == [f"note: page 201 is past the last page ({first.pages})"]
    assert out.stdout.splitlines()[0].startswith(f"{first.total} results")
    # A list that runs on past the window: the one line counts what the pages reach.
    out = _cli(built_config, "--sort", "newest", "", "--page", "5", window=WINDOW)
    assert out.returncode == 1 and out.stdout == "" and "Traceback" not in out.stderr
    assert [line for line in out.stderr.splitlines() if "error" in line] == [
        "papersift: error: page 5 is past the result window: with 24 per page at most 4 pages "
        "can be reached (the first 96 results)"
    ]


def test_recommendations_page_as_the_search_does(
    client: TestClient, engine: SearchEngine, built_config: Config
) -> None:
    """``POST /api/v1/recommend`` (documented as paging like the search): a page past the
    last is the empty page naming the last (it said nothing), and past the result window
    too when the list ends inside it (a 400 before); a list that runs on past a narrower
    window refuses it as the search does."""
    ask = {"ids": RAG, "from": "2020-01-01", "to": "2026-12-31", "page_size": 5}
    first = client.post("/api/v1/recommend", json=ask).json()
    last = first["pages"]
    assert 4 < last < 200 and first["total"] > 20
    for page in (last + 1, 5000):  # inside the window, and past it
        r = client.post("/api/v1/recommend", json={**ask, "page": page})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["hits"] == [] and body["total"] == first["total"] and body["page"] == page
        assert body["warnings"] == [f"page {page:,} is past the last page ({last})"]
    assert client.post("/api/v1/recommend", json={**ask, "page": last}).json()["warnings"] == []
    search = replace(built_config.search, max_window=20)
    with TestClient(create_app(engine, replace(built_config, search=search))) as twenty:
        assert twenty.post("/api/v1/recommend", json={**ask, "page": 4}).json()["hits"]
        r = twenty.post("/api/v1/recommend", json={**ask, "page": 5})
    assert r.status_code == 400
    assert r.json()["error"]["message"] == (
        "Page 5 is past the result window: with 5 per page at most 4 pages can be reached "
        "(the first 20 results)."
    )
