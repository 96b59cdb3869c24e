"""Requests a review found answered 500, said little or were refused: JSON nested past what
the decoder reads, a body the client stops sending, a wrong method, and the CORS preflight a
page on another origin sends before a JSON POST."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

pytest_plugins = ["tests.web_fixtures"]

JSON = {"content-type": "application/json"}
DEEP = 3000  # levels: past msgspec's recursion limit (~1,000), which raised RecursionError


@pytest.mark.parametrize("path", ["/api/v1/similar", "/api/v1/recommend"])
@pytest.mark.parametrize(
    "body",
    [
        "[" * DEEP,  # not JSON, but the decoder nests before it finds out
        '{"text": "x", "ids": ["2401.10241"], "category": ' + "[" * DEEP + "]" * DEEP + "}",
    ],
    ids=["unclosed", "well-formed"],
)
def test_deeply_nested_json_is_a_400(client: TestClient, path: str, body: str) -> None:
    r = client.post(path, content=body, headers=JSON)
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["parameter"] == "body" and "too deeply" in error["message"]


def test_json_nested_within_reason_still_reads(client: TestClient) -> None:
    """The limit is msgspec's: a body nested a few hundred levels is still decoded (and
    refused by the schema, as before)."""
    body = '{"text": "x", "category": ' + "[" * 300 + "]" * 300 + "}"
    r = client.post("/api/v1/similar", content=body, headers=JSON)
    assert r.status_code == 400 and r.json()["error"]["parameter"] == "category"


def test_a_wrong_method_says_which_to_use(client: TestClient) -> None:
    r = client.get("/api/v1/similar")
    assert r.status_code == 405 and r.headers["allow"] == "POST"
    assert r.json()["error"]["message"] == "GET is not allowed at /api/v1/similar; use POST."
    page = client.post("/search")
    assert page.status_code == 405 and "use GET or HEAD" in page.text


def test_a_body_cut_short_is_no_server_error(
    web_app: Starlette, caplog: pytest.LogCaptureFixture
) -> None:
    """The client declares 100 bytes, sends 10 and goes: the route's read ends with
    Starlette's ClientDisconnect, which used to leave the app as an exception (uvicorn
    logged a traceback); now it is answered (to no one) and logged in one line."""
    sent: list[dict[str, Any]] = []
    messages = [
        {"type": "http.request", "body": b'{"text": "', "more_body": True},
        {"type": "http.disconnect"},
    ]

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/api/v1/similar", "raw_path": b"/api/v1/similar",
        "query_string": b"", "root_path": "", "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 5000),
        "headers": [(b"host", b"localhost"), (b"content-type", b"application/json"),
                    (b"content-length", b"100")],
    }  # fmt: skip
    with caplog.at_level(logging.INFO, logger="papersift.server.errors"):
        asyncio.run(web_app(scope, receive, send))  # raised ClientDisconnect before
    start = next(m for m in sent if m["type"] == "http.response.start")
    assert start["status"] == 400
    assert "went away before its body came" in caplog.text


PREFLIGHT = {"Origin": "https://example.org", "Access-Control-Request-Method": "POST"}


def test_a_page_elsewhere_may_post_json_to_the_api(client: TestClient) -> None:
    """The API allows any origin, but a JSON POST needs a preflight first, which was a 405:
    browsers then refused to send the POST."""
    r = client.options("/api/v1/similar", headers={
        **PREFLIGHT, "Access-Control-Request-Headers": "content-type"})  # fmt: skip
    assert r.status_code == 200, r.text
    assert r.headers["access-control-allow-origin"] == "*"
    assert "POST" in r.headers["access-control-allow-methods"]
    assert "content-security-policy" in r.headers  # still under the security headers
    post = client.post("/api/v1/similar", json={"text": "graph neural networks"},
                       headers={"Origin": "https://example.org"})  # fmt: skip
    assert post.status_code == 200 and post.headers["access-control-allow-origin"] == "*"


def test_no_preflight_passes_credentials_or_reaches_the_pages(client: TestClient) -> None:
    admin = client.options("/api/v1/admin/jobs", headers={
        **PREFLIGHT, "Access-Control-Request-Headers": "authorization"})  # fmt: skip
    assert admin.status_code == 400  # Starlette: "Disallowed CORS headers"
    assert "authorization" not in admin.headers.get("access-control-allow-headers", "").lower()
    page = client.options("/signin", headers=PREFLIGHT)
    assert page.status_code == 405 and "access-control-allow-origin" not in page.headers


@pytest.mark.parametrize("path", ["/api/v1/similar", "/api/v1/recommend"])
def test_a_body_not_utf8_is_a_400(live_url: str, path: str) -> None:
    """A Latin-1 é in a JSON string: msgspec raises UnicodeDecodeError, not a DecodeError,
    which was a 500 without CORS that closed the connection. Over real HTTP, one
    keep-alive connection: the next request on it is answered too."""
    body = b'{"text":"caf\xe9", "ids":["caf\xe9"]}'
    with httpx.Client(base_url=live_url, timeout=30) as http:
        r = http.post(path, content=body, headers={**JSON, "Origin": "https://example.org"})
        assert r.status_code == 400, r.text
        assert r.headers["access-control-allow-origin"] == "*"
        error = r.json()["error"]
        assert error["parameter"] == "body" and error["code"] == "bad_request"
        assert error["message"] == (
            "The body is not valid UTF-8 (byte 12 is 0xe9; JSON must be sent as UTF-8)."
        )
        assert r.headers.get("connection") != "close"
        assert http.get("/api/v1/stats").status_code == 200
