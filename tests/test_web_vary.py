"""``Vary`` on every negotiated answer: a URL that answers HTML or markdown (``Accept``) says
so in both forms, a compressible answer says ``Accept-Encoding`` whether or not it was
compressed, and no header lists a name twice. And the category pages' markdown forms."""

from __future__ import annotations

import re

import httpx
import pytest
from starlette.testclient import TestClient

from papersift.engine.search import SearchEngine

pytest_plugins = ["tests.web_fixtures"]

MD = {"Accept": "text/markdown", "Accept-Encoding": "identity"}
HTML = {"Accept": "text/html", "Accept-Encoding": "identity"}


def vary(headers: httpx.Headers) -> list[str]:
    """The names ``Vary`` lists, lower-cased, in order (repeats kept)."""
    raw = headers.get_list("vary")
    return [v.strip().lower() for v in ",".join(raw).split(",") if v.strip()]


@pytest.mark.parametrize(
    "url",
    [
        "/categories/cs.IR",
        "/categories/cs.IR?page=2&page_size=2",
        "/categories/cs",
        "/categories",
        "/search?q=retrieval",
        "/papers/2401.10241-zero-bubble-pipeline-parallelism",
        "/researchers",
        "/developers",
        "/",
    ],
)
def test_both_forms_of_a_page_vary_on_accept(client: TestClient, url: str) -> None:
    md, html = client.get(url, headers=MD), client.get(url, headers=HTML)
    assert md.status_code == html.status_code == 200
    assert md.headers["content-type"].startswith("text/markdown")
    assert html.headers["content-type"].startswith("text/html")
    for r in (md, html):
        names = vary(r.headers)
        assert "accept" in names and "accept-encoding" in names, (url, names)
        assert len(names) == len(set(names)), (url, names)
    # A 304 says it too (a cache revalidating the markdown form must keep it apart).
    again = client.get(url, headers={**MD, "If-None-Match": md.headers["etag"]})
    assert again.status_code == 304 and "accept" in vary(again.headers)


@pytest.mark.parametrize(
    "url", ["/rss/latest.xml", "/atom/cs.IR.xml", "/api/v1/categories", "/search?q=retrieval"]
)
@pytest.mark.parametrize("encoding", ["identity", "gzip", "br"])
def test_accept_encoding_is_in_vary_once_compressed_or_not(
    client: TestClient, url: str, encoding: str
) -> None:
    for _ in range(2):  # the second answer of a page comes from the page cache
        r = client.get(url, headers={"Accept-Encoding": encoding})
        assert r.status_code == 200
        names = vary(r.headers)
        assert names.count("accept-encoding") == 1, (url, encoding, names)
        assert len(names) == len(set(names)), names
    if encoding != "identity":
        assert r.headers["content-encoding"] == encoding
    else:
        assert "content-encoding" not in r.headers


def test_an_image_does_not_vary(client: TestClient) -> None:
    r = client.get("/favicon.ico", follow_redirects=True)
    assert r.headers["content-type"].startswith("image/svg+xml")  # compressible text
    assert vary(r.headers) == ["accept-encoding"]


def test_category_markdown_names_the_category(client: TestClient) -> None:
    text = client.get("/categories/cs.IR", headers=MD).text
    assert text.splitlines()[0] == "# cs.IR: Information Retrieval"
    html_total = client.get("/api/v1/search?category=cs.IR&page_size=1").json()["total"]
    assert f"{html_total:,} papers; page 1 of" in text
    archive = client.get("/categories/cs", headers=MD).text.splitlines()[0]
    assert archive.startswith("# cs") and "Latest papers" not in archive


def test_categories_markdown_lists_them(client: TestClient, engine: SearchEngine) -> None:
    r = client.get("/categories", headers=MD)
    assert r.headers["content-type"].startswith("text/markdown")
    text = r.text
    assert text != client.get("/llms.txt").text
    lines = text.splitlines()
    assert lines[0] == "# Categories"
    entries = [re.fullmatch(r"- \[(.+?)\]\((\S+)\) \((.+)\)", line) for line in lines[1:]]
    listed = [(m.group(1).replace("\\", ""), m.group(2), m.group(3)) for m in entries if m]
    want = engine.stats().categories
    assert [cat for cat, _, _ in listed] == [c.value for c in want]
    for (cat, url, note), c in zip(listed, want, strict=True):
        assert url == f"http://testserver/categories/{cat}"
        assert note.endswith(f"{c.count:,} paper" + ("s" if c.count != 1 else ""))
    assert ("cs.IR", "http://testserver/categories/cs.IR") in [(c, u) for c, u, _ in listed]
    assert any(n.startswith("Information Retrieval, ") for c, _, n in listed if c == "cs.IR")
