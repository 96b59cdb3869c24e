"""Web hardening, each promise as a test: request size limits, bounded result windows, the
admin token (constant-time compare), security headers on every response, API rate limiting.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from papersift.engine.search import SearchEngine
from papersift.server.app import create_app
from papersift.server.headers import SECURITY_HEADERS
from papersift.server.params import MAX_RESEARCHER_LENGTH
from papersift.server.ratelimit import MAX_BODY, RateLimiter, TokenBucket
from tests.corpus import make_config

pytest_plugins = ["tests.web_fixtures"]

TOKEN = "correct horse battery staple"


@pytest.fixture
def guarded(engine: SearchEngine, tmp_path: Path) -> Iterator[TestClient]:
    """The app with an admin token and a tight API rate limit (5 per minute)."""
    config = make_config(tmp_path, server={"admin_token": TOKEN, "rate_limit": 5})
    app = create_app(engine, config)
    with TestClient(app, base_url="http://testserver", follow_redirects=False) as c:
        yield c


# --- request size ------------------------------------------------------------------------


def test_huge_query_string_is_a_4xx(http: httpx.Client) -> None:
    for url in ("/search", "/api/v1/search", "/rss/search.xml"):
        r = http.get(url, params={"q": "a" * 60_000})  # near httpx's own URL limit
        assert 400 <= r.status_code < 500, url


def test_huge_header_is_refused_by_the_server(live_url: str) -> None:
    """A request head over 64 KB is answered 431 before the app sees it
    (server/http_protocol.py)."""
    r = httpx.get(live_url + "/", headers={"X-Filler": "a" * 500_000}, timeout=30)
    assert r.status_code == 431


def test_huge_body_is_a_413_before_it_is_read(guarded: TestClient) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    r = guarded.post("/admin/run/embed", content=b"k" * (MAX_BODY + 1), headers=auth)
    assert r.status_code == 413
    r = guarded.post("/api/v1/admin/run/embed", content=b"k" * (2 * MAX_BODY), headers=auth)
    assert r.status_code == 413
    assert r.json()["error"]["message"].endswith("takes at most 64 KiB.")  # the limit, said

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted while streaming
        for _ in range(4):
            yield b"k" * MAX_BODY

    r = guarded.post("/admin/run/embed", content=chunks(), headers=auth)
    assert r.status_code == 413 and "at most 64 KiB" in r.text


# --- numbers that are digits to str.isdigit() but not to int() ----------------------------


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/researchers?page=%C2%B2",
        "/api/v1/institutions?limit=%C2%B2",
        "/api/v1/researchers/%C2%B2",
        "/api/v1/papers/2401.10241/similar?limit=%C2%B2",
    ],
)
def test_superscript_digits_are_a_400_not_a_500(http: httpx.Client, url: str) -> None:
    assert http.get(url).status_code == 400


# --- bounded result windows --------------------------------------------------------------


@pytest.mark.parametrize(
    "qs", ["page=1000&page_size=100", "page=42", "page_size=101", "page=10000000000000000000"]
)
def test_result_window_is_bounded(client: TestClient, qs: str) -> None:
    api = client.get(f"/api/v1/search?q=learning&{qs}")
    page = client.get(f"/search?q=learning&{qs}")
    if qs in ("page=1000&page_size=100", "page=42"):  # the list ends inside the window:
        # the empty page after its last, in the API as on the page (test_past_window has
        # the window's 400 on a list that runs past it)
        assert api.status_code == 200 and api.json()["hits"] == []
        assert any("is past the last page" in w for w in api.json()["warnings"])
        assert page.status_code == 200 and "is past the last page" in page.text
    else:
        assert api.status_code == 400 and page.status_code == 400


def test_last_page_of_the_window_is_served(client: TestClient) -> None:
    assert client.get("/api/v1/search?q=learning&page=10&page_size=100").status_code == 200


# --- the admin token ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "header",
    [
        None,
        "Bearer",
        "Bearer ",
        f"Bearer {TOKEN[:-1]}",
        f"Bearer {TOKEN}x",
        f"Basic {TOKEN}",
        f"bearer {TOKEN.upper()}",
        "Bearer \u00e9",
    ],
)
def test_admin_refuses_a_wrong_or_missing_token(guarded: TestClient, header: str | None) -> None:
    headers = {b"Authorization": header.encode("utf-8")} if header else {}
    for method, url in (("GET", "/api/v1/admin/status"), ("POST", "/api/v1/admin/run/embed")):
        r = guarded.request(method, url, headers=headers)
        assert r.status_code == 401 and "WWW-Authenticate" in r.headers
    assert guarded.get("/admin", headers=headers).status_code == 401


def test_admin_accepts_the_token(guarded: TestClient) -> None:
    r = guarded.get("/api/v1/admin/status", headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 503  # authorised; no scheduler in this process


def test_admin_is_absent_without_a_token(client: TestClient) -> None:
    r = client.get("/api/v1/admin/status", headers={"Authorization": "Bearer "})
    assert r.status_code == 404


def test_openapi_documents_the_admin_api_as_this_server_has_it(
    client: TestClient, guarded: TestClient
) -> None:
    """Without a token the admin operations are documented as the 404s they are (no
    security scheme to satisfy); with one, as bearer-secured with 401."""
    off = client.get("/openapi.json").json()["paths"]["/api/v1/admin/status"]["get"]
    # 405: another method on the path (the routes exist, and answer 404 to the right one).
    assert "security" not in off and set(off["responses"]) <= {"404", "405", "429"}
    on = guarded.get("/openapi.json").json()["paths"]["/api/v1/admin/status"]["get"]
    assert on["security"] == [{"adminToken": []}] and "401" in on["responses"]


# --- security headers on every response ---------------------------------------------------

EVERY_KIND = [
    ("GET", "/"),
    ("GET", "/search?q=transformer"),
    ("GET", "/papers/2401.10241"),
    ("GET", "/no/such/page"),
    ("GET", "/search?page=0"),
    ("GET", "/api/v1/search?q=x&page=0"),
    ("GET", "/api/v1/papers/2401.10241"),
    ("GET", "/openapi.json"),
    ("GET", "/rss/latest.xml"),
    ("GET", "/sitemap.xml"),
    ("GET", "/static/style.css"),
    ("GET", "/static/nope.css"),
    ("GET", "/robots.txt"),
    ("HEAD", "/"),
    ("DELETE", "/api/v1/search"),
    ("GET", "/search?q=%ff"),
    ("GET", "/papers/2401.10241%00"),
]


@pytest.mark.parametrize(("method", "url"), EVERY_KIND)
def test_security_headers_on_every_response(http: httpx.Client, method: str, url: str) -> None:
    r = http.request(method, url)
    for name, value in SECURITY_HEADERS.items():
        assert r.headers.get(name) == value, f"{name} missing on {r.status_code} {url}"


# --- rate limiting -----------------------------------------------------------------------


def test_token_bucket_refills_at_its_rate() -> None:
    bucket = TokenBucket(capacity=2, rate=0.5, now=0.0)
    assert bucket.take(0.0) == 0.0 and bucket.take(0.0) == 0.0
    assert bucket.take(0.0) == pytest.approx(2.0)  # one token takes 2 s at 0.5/s
    assert bucket.take(1.0) == pytest.approx(1.0)
    assert bucket.take(2.0) == 0.0
    assert bucket.take(100.0) == 0.0 and bucket.tokens == 1  # capped at the capacity


def test_rate_limiter_keeps_clients_apart_and_bounded() -> None:
    now = [0.0]
    limiter = RateLimiter(per_minute=60, clock=lambda: now[0])
    assert all(limiter.wait("a") == 0 for _ in range(60))
    assert limiter.wait("a") > 0 and limiter.wait("b") == 0
    now[0] = 1.0
    assert limiter.wait("a") == 0
    for i in range(20_000):
        limiter.wait(f"client-{i}")
    assert len(limiter.buckets) <= 10_000


def test_api_is_rate_limited_pages_are_not(guarded: TestClient) -> None:
    statuses = [guarded.get("/api/v1/stats").status_code for _ in range(8)]
    assert statuses[:5] == [200] * 5 and statuses[5:] == [429] * 3
    r = guarded.get("/api/v1/categories")
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
    assert r.json()["error"]["status"] == 429
    assert r.headers["X-Frame-Options"] == SECURITY_HEADERS["X-Frame-Options"]
    assert guarded.get("/").status_code == 200


def test_search_pages_and_feeds_share_the_api_limit(guarded: TestClient) -> None:
    """A page or feed that runs a search counts against the same bucket as the API (a
    crawler following search links is bounded); a 429 page is HTML with Retry-After, and
    pages that only read what is stored stay unlimited."""
    statuses = [guarded.get("/search?q=retrieval").status_code for _ in range(3)]
    statuses += [guarded.get("/rss/search.xml?q=retrieval").status_code for _ in range(2)]
    assert statuses == [200] * 5
    page = guarded.get("/search?q=graphs")
    assert page.status_code == 429 and int(page.headers["Retry-After"]) >= 1
    assert page.headers["content-type"].startswith("text/html")
    assert "Too many requests" in page.text
    assert guarded.get("/api/v1/stats").status_code == 429  # one bucket for both
    assert guarded.get("/similar?q=graphs").status_code == 429
    assert guarded.get("/categories").status_code == 200
    assert guarded.get("/feeds").status_code == 200


def test_api_errors_have_codes_named_after_their_status(guarded: TestClient) -> None:
    """Not the catch-all "error": 401, 409, 413 and 429 name what happened, as 400 and 404
    do; the document lists every code from the same table."""
    from papersift.server.errors import json_error

    assert guarded.get("/api/v1/admin/status").json()["error"]["code"] == "unauthorized"
    big = guarded.post("/api/v1/admin/run/embed", content=b"k" * (2 * MAX_BODY))
    assert big.status_code == 413 and big.json()["error"]["code"] == "too_large"
    busy = json.loads(json_error(409, "A harvest run is in progress.").body)
    assert busy["error"]["code"] == "conflict"  # the admin API's answer to a busy job
    while (r := guarded.get("/api/v1/stats")).status_code != 429:
        pass
    assert r.json()["error"]["code"] == "too_many_requests"
    schema = guarded.get("/openapi.json").json()["components"]["schemas"]["ErrorDetail"]
    assert "unauthorized, forbidden" in schema["properties"]["code"]["description"]


def test_rate_limit_is_off_when_zero(client: TestClient) -> None:
    assert all(client.get("/api/v1/stats").status_code == 200 for _ in range(30))


# --- lengths are checked as sent, as the schema documents them ------------------------------


@pytest.mark.parametrize(
    ("param", "filler"), [("q", "\x15"), ("q", " "), ("researcher", "\x15"), ("researcher", "\t")]
)
def test_overlong_text_is_a_400_even_if_cleaning_empties_it(
    client: TestClient, param: str, filler: str
) -> None:
    """Found by the schemathesis campaign: control characters in ``q`` past its maxLength
    were accepted (cleaned away to nothing) though the schema forbids them."""
    limit = 20_000 if param == "q" else MAX_RESEARCHER_LENGTH  # [search] max_text_length
    for url in ("/api/v1/search", "/search"):
        r = client.get(url, params={param: filler * (limit + 1)})
        assert r.status_code == 400, url
    assert client.get("/api/v1/search", params={param: "\x15" * 50}).status_code == 200


def test_researcher_id_past_the_documented_maximum_is_a_400(client: TestClient) -> None:
    """Found by the schemathesis campaign: ``researcher_id=1000000000`` (over the schema's
    maximum of 999,999,999) was accepted by the search, feed and export operations."""
    for url in ("/api/v1/search", "/api/v1/export?format=ris", "/search"):
        sep = "&" if "?" in url else "?"
        assert client.get(f"{url}{sep}researcher_id=1000000000").status_code == 400, url
        assert client.get(f"{url}{sep}researcher_id=999999999").status_code == 200, url
