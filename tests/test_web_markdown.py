"""/llms.txt, and markdown from page URLs for clients that ask for text/markdown."""

from __future__ import annotations

import re

import pytest
from starlette.testclient import TestClient

from papersift.engine.examples import index_examples
from papersift.engine.search import SearchEngine
from tests.web_helpers import parse_html

pytest_plugins = ["tests.web_fixtures"]

MD = {"Accept": "text/markdown"}
BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
ZERO_BUBBLE = "/papers/2401.10241-zero-bubble-pipeline-parallelism"


def test_llms_txt(client: TestClient, engine: SearchEngine) -> None:
    r = client.get("/llms.txt")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    text = r.text
    assert text.startswith("# papersift\n\n> ")
    ex = index_examples(engine)  # the index's own papers (tests/test_guide_examples.py)
    assert ex.newest and ex.old_id
    for form in (
        "/search?q=",
        "/papers/",
        f"`{ex.old_id}`",
        f"`{ex.newest.arxiv_id}v{ex.newest.version + 1}` here",
        f"/papers/{ex.newest.arxiv_id}.bib",
        "/categories/",
        "/api/v1/search",
        "/openapi.json",
        "/rss/latest.xml",
        "/researchers/",
        "/institutions/",
        "text/markdown",
        "/healthz",
    ):
        assert form in text, form
    # Every markdown link points into the site.
    for url in re.findall(r"\]\(([^)]+)\)", text):
        assert url.startswith("http://testserver/")


@pytest.mark.parametrize("url", ["/", "/developers"])
def test_markdown_guide_from_any_page(client: TestClient, url: str) -> None:
    r = client.get(url, headers=MD)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/markdown")
    assert "Accept" in r.headers["vary"]
    assert r.text == client.get("/llms.txt").text
    html = client.get(url, headers=BROWSER)
    assert html.headers["content-type"].startswith("text/html")


def test_paper_as_markdown(client: TestClient) -> None:
    r = client.get(ZERO_BUBBLE, headers=MD)
    assert r.headers["content-type"].startswith("text/markdown")
    text = r.text
    assert text.startswith("# Zero Bubble Pipeline Parallelism\n")
    # Authors link to their researcher pages, as on the HTML page.
    html = parse_html(client.get(ZERO_BUBBLE).text)
    (href,) = html.xpath("//a[normalize-space()='Penghui Qi']/@href")
    assert href.startswith("/researchers/") and f"[Penghui Qi](http://testserver{href})" in text
    assert "## Abstract\n\nPipeline parallelism is one of" in text
    assert "```bibtex\n@misc{" in text
    assert client.get("/papers/2401.10241.md").text == text
    # The bare id still redirects first, whatever the format asked for.
    assert client.get("/papers/2401.10241", headers=MD).status_code == 301


def test_search_as_markdown(client: TestClient) -> None:
    r = client.get("/search?q=pipeline+OR+parallelism&page_size=5", headers=MD)
    assert r.headers["content-type"].startswith("text/markdown")
    lines = r.text.splitlines()
    assert lines[0] == "# Search results for “pipeline OR parallelism”"
    items = [line for line in lines if re.match(r"^\d+\. \[", line)]
    assert len(items) == 5
    assert any("(http://testserver/papers/2401.10241-" in line for line in items)
    assert "Next page: http://testserver/search?q=pipeline+OR+parallelism" in r.text


def test_markdown_errors(client: TestClient) -> None:
    r = client.get("/papers/2401.99999", headers=MD)
    assert r.status_code == 404
    assert r.headers["content-type"].startswith("text/markdown")
    assert r.text.startswith("# 404 Not Found")


def test_researcher_and_institution_pages_as_markdown(client: TestClient) -> None:
    html = parse_html(client.get(ZERO_BUBBLE).text)
    (href,) = html.xpath("//a[normalize-space()='Penghui Qi']/@href")
    r = client.get(href, headers=MD)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/markdown")
    assert r.text.startswith("# Penghui Qi\n") and "Accept" in r.headers["vary"]
    assert "## Papers" in r.text and "Zero Bubble Pipeline Parallelism" in r.text
    assert client.get(href).headers["content-type"].startswith("text/html")
    listing = client.get("/researchers", params={"q": "qi"}, headers=MD)
    assert listing.headers["content-type"].startswith("text/markdown")
    assert listing.text.startswith("# Researchers matching “qi”\n")
    assert f"[Penghui Qi](http://testserver{href})" in listing.text
    found = client.get("/api/v1/institutions?limit=1").json()
    if found["institutions"]:  # a registry is loaded in this index
        url = found["institutions"][0]["url"].removeprefix("http://testserver")
        r = client.get(url, headers=MD)
        assert r.headers["content-type"].startswith("text/markdown") and "- ROR: [" in r.text
