"""No input produces a 500; corpus and user text is escaped; headers, compression, caching.

The in-process client re-raises any server exception, so a 500 anywhere fails loudly;
the tests that need real HTTP (malformed URLs, compression on the wire) use uvicorn.
"""

from __future__ import annotations

import json

import httpx
import pytest
from starlette.testclient import TestClient

from tests.web_helpers import parse_html

pytest_plugins = ["tests.web_fixtures"]

BAD_PARAMS = [
    ("page=0", "page"),
    ("page=-1", "page"),
    ("page=abc", "page"),
    ("page=1e3", "page"),
    ("page=99999999999999999999999", "page"),
    # A page past the result window: this index's lists end inside it, so the search page
    # says "past the last page" (test_web_review has the window's 400 on a narrower one).
    ("page_size=0", "page_size"),
    ("page_size=101", "page_size"),
    ("mode=fuzzy", "mode"),
    ("sort=%3Cscript%3E", "sort"),
    ("from=2024-13-45", "from"),
    ("from=yesterday", "from"),
    ("from=2025&to=2024", "from"),
    ("to=2024-02-30", "to"),
    ("category=%3Cscript%3Ealert(1)%3C/script%3E", "category"),
    ("category=nosuch.XX", "category"),
    ("researcher=" + "x" * 300, "researcher"),
    ("q=" + "a" * 20001, "q"),
]


@pytest.mark.parametrize(("qs", "param"), BAD_PARAMS)
def test_bad_parameters_are_clear_400s(client: TestClient, qs: str, param: str) -> None:
    r = client.get(f"/search?{qs}")
    assert r.status_code == 400
    doc = parse_html(r.text)
    assert doc.cssselect(".message")[0].text_content().strip()
    assert param in doc.cssselect(".error-page")[0].text_content()
    assert doc.cssselect("form[role=search]"), "the error page offers a new search"
    body = client.get(f"/api/v1/search?{qs}").json()
    assert body["error"]["parameter"] == param and body["error"]["status"] == 400


ODD_QUERIES = [
    '"',
    '"unclosed phrase',
    "((((",
    ")))",
    "title:(",
    "AND OR NOT",
    "NOT",
    "-",
    "+",
    "*",
    "a:b:c",
    "\\",
    "~~~",
    "^2",
    "[1 TO 5]",
    "{}",
    "cs.IR:",
    "author:",
    "'; DROP TABLE papers;--",
    "<script>alert(1)</script>",
    "%00",
    "\x00\x01\x1f",
    "😀 emoji",
    "ﷺ",
    "$x^2$",
    "&amp;",
    "a" * 1000,
    "word " * 200,
    "2401.10241v9",
    "https://arxiv.org/abs/2401.10241",
    "cmp-lg/9405001",
    "0000.00000",
]


@pytest.mark.parametrize("q", ODD_QUERIES)
@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_odd_queries_never_fail(client: TestClient, q: str, mode: str) -> None:
    r = client.get("/search", params={"q": q, "mode": mode})
    assert r.status_code == 200, r.text[:300]
    doc = parse_html(r.text)
    assert not [s for s in doc.xpath("//script") if "alert" in (s.text or "")]
    r = client.get("/api/v1/search", params={"q": q, "mode": mode})
    assert r.status_code == 200


@pytest.mark.parametrize(
    "url",
    [
        "/static/../server/app.py",
        "/static/%2e%2e/server/app.py",
        "/static/..%2fapp.py",
        "/static/%2e%2e/%2e%2e/etc/passwd",
        "/papers/../../etc/passwd",
        "/papers/%2e%2e/%2e%2e/etc/passwd",
        "/papers/2401.10241/../../../etc/passwd",
        "/categories/..%2f..%2fetc",
        "/categories/%3Cscript%3E",
        "/api/v1/papers/..%2F..%2Fetc%2Fpasswd",
        "/" + "a" * 5000,
        "/search/",
        "/papers//2401.10241",
    ],
)
def test_path_tricks_are_4xx(client: TestClient, url: str) -> None:
    r = client.get(url)
    assert 300 <= r.status_code < 500, (url, r.status_code)
    assert "root:" not in r.text and "create_app" not in r.text


@pytest.mark.parametrize(
    "url",
    [
        "/search?q=%FF%FE",
        "/search?q=%C3%28",
        "/api/v1/search?q=%80",
        "/papers/%FF",
        "/search?q=a%00b",
    ],
)
def test_invalid_utf8_over_http(http: httpx.Client, url: str) -> None:
    r = http.get(url)
    if "%00" in url:  # a NUL in the query is only a bad character: searched as a space
        assert r.status_code == 200
        return
    assert r.status_code == 400
    if url.startswith("/api/"):
        assert "UTF-8" in r.json()["error"]["message"]
    else:
        assert "UTF-8" in parse_html(r.text).cssselect(".message")[0].text_content()


def test_methods_and_head(client: TestClient) -> None:
    r = client.post("/search", data={"q": "x"})
    assert r.status_code == 405
    assert parse_html(r.text).cssselect("h1")
    r = client.head("/")
    assert r.status_code == 200 and r.content == b""


def test_corpus_text_is_escaped(client: TestClient) -> None:
    """2606.22361's abstract has "p < $10^{-5}$": a literal '<' and TeX."""
    r = client.get("/papers/2606.22361", follow_redirects=True)
    assert r.status_code == 200
    assert "p &lt; $10^{-5}$" in r.text
    doc = parse_html(r.text)
    assert "(p < $10^{-5}$)" in doc.cssselect(".abstract")[0].text_content()
    scripts = doc.xpath('//script[@type="application/ld+json"]')
    for s in scripts:
        assert "<" not in s.text and ">" not in s.text and "&" not in s.text
    article = next(json.loads(s.text) for s in scripts if "ScholarlyArticle" in s.text)
    assert "p < 10^-5" in article["abstract"] or "p < 10^{-5}" in article["abstract"]
    hit = client.get("/search?q=first-token+broadcasters+language+identity&mode=keyword")
    snippet = parse_html(hit.text).cssselect(".hit")[0]
    assert snippet.cssselect(".arxiv-id")[0].text_content() == "arXiv:2606.22361"
    assert {e.tag for e in snippet.cssselect(".snippet *")} <= {"b"}


def test_user_text_is_escaped(client: TestClient) -> None:
    q = '"><script>alert(1)</script><img src=x onerror=alert(2)>'
    r = client.get("/search", params={"q": q})
    doc = parse_html(r.text)
    assert doc.cssselect("input[name=q]")[0].get("value") == q
    assert not doc.xpath("//img") and not [
        s for s in doc.xpath("//script") if s.text and "alert" in s.text
    ]
    r = client.get("/papers/%3Cscript%3Ealert(1)%3C%2Fscript%3E")
    assert r.status_code == 404
    assert not [s for s in parse_html(r.text).xpath("//script") if "alert" in (s.text or "")]


def test_security_headers_everywhere(client: TestClient) -> None:
    for url in ("/", "/search?q=x", "/api/v1/stats", "/nope", "/static/style.css", "/llms.txt"):
        r = client.get(url)
        csp = dict(d.split(" ", 1) for d in r.headers["content-security-policy"].split("; "))
        assert csp["default-src"] == csp["script-src"] == csp["style-src"] == "'self'"
        # Style attributes only, for KaTeX's SVGs (server/headers.py): no inline script,
        # no <style> element, nothing from another origin.
        assert [d for d, v in csp.items() if "unsafe" in v] == ["style-src-attr"]
        assert csp["style-src-attr"] == "'unsafe-inline'"
        assert not any("http" in v or "*" in v for v in csp.values())
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["x-frame-options"] == "DENY"
        assert r.headers["referrer-policy"]


def test_pages_use_only_own_assets(client: TestClient) -> None:
    for url in ("/", "/search?q=graph", "/papers/2401.10241-zero-bubble-pipeline-parallelism"):
        doc = parse_html(client.get(url).text)
        assets = doc.xpath("//script/@src | //link[@rel='stylesheet' or @rel='icon']/@href")
        assert assets and all(a.startswith("/static/") for a in assets)
        for a in assets:
            r = client.get(a)
            assert r.status_code == 200
            assert r.headers["cache-control"] == "public, max-age=31536000, immutable"


def test_static_files_cache_and_revalidate(client: TestClient) -> None:
    r = client.get("/static/katex/fonts/KaTeX_Main-Regular.woff2")
    assert r.status_code == 200 and r.headers["content-type"] == "font/woff2"
    assert r.headers["cache-control"] == "public, max-age=3600"
    again = client.get(
        "/static/katex/fonts/KaTeX_Main-Regular.woff2", headers={"If-None-Match": r.headers["etag"]}
    )
    assert again.status_code == 304
    assert client.get("/static/katex/LICENSE").status_code == 200


def test_pages_have_etags(client: TestClient) -> None:
    for url in ("/", "/search?q=graph", "/api/v1/stats", "/llms.txt"):
        r = client.get(url)
        etag = r.headers["etag"]
        assert r.headers["cache-control"].startswith("public")
        again = client.get(url, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b""
    assert client.get("/nope").headers["cache-control"] == "no-store"


def test_compression_on_the_wire(live_url: str) -> None:
    with httpx.Client(base_url=live_url) as raw:
        for url in ("/search?q=graph", "/static/style.css", "/api/v1/search?q=graph"):
            plain = raw.get(url, headers={"Accept-Encoding": "identity"})
            assert "content-encoding" not in plain.headers
            gz = raw.get(url, headers={"Accept-Encoding": "gzip"})
            assert gz.headers["content-encoding"] == "gzip"
            assert "Accept-Encoding" in gz.headers["vary"]
            assert int(gz.headers["content-length"]) < len(plain.content) / 2
        css = raw.get("/static/style.css", headers={"Accept-Encoding": "identity"}).content
        gz = raw.get("/static/style.css", headers={"Accept-Encoding": "gzip"})
        assert gz.content == css and gz.headers["etag"].startswith('W/"')
        small = raw.get("/healthz", headers={"Accept-Encoding": "gzip"})
        assert "content-encoding" not in small.headers  # too small to be worth it
        brotli = pytest.importorskip("brotli")
        with raw.stream("GET", "/static/style.css", headers={"Accept-Encoding": "br"}) as br:
            assert br.headers["content-encoding"] == "br"
            body = b"".join(br.iter_raw())
        assert brotli.decompress(body) == css
