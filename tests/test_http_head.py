"""The limit on a request head (request line and headers, 64 KB), over a real socket.

A real ``papersift serve`` process (its HTTP parser is httptools, with a limit as h11 had
put back by ``server/http_protocol.py``) and raw bytes: a head over the limit is answered
431 and the connection closed, however it arrives; everything else is answered as before.
"""

from __future__ import annotations

import json
import re
import select
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from papersift.core.config import Config
from papersift.server.http_protocol import MAX_HEAD
from tests.corpus import make_config
from tests.load_kit import serve

pytestmark = pytest.mark.slow  # a real server process

_STATUS = re.compile(rb"HTTP/1\.1 (\d{3}) ")
KB = MAX_HEAD // 1024
REFUSED = f"Request head over {KB} KB: 431 Request Header Fields Too Large"
CLOSE = b"Connection: close\r\n"


@pytest.fixture(scope="module")
def server(built_config: Config, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("http_head")
    shutil.copytree(built_config.data_dir, root / "data")
    make_config(root)
    with serve(root / "config.toml", root / "serve.log") as url:
        yield Server(url, root / "serve.log")


class Server:
    def __init__(self, url: str, log: Path) -> None:
        self.port = int(url.rsplit(":", 1)[1])
        self.log = log

    def connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    def exchange(self, request: bytes) -> bytes:
        """Send ``request`` (one or more requests) at once; everything the server sends
        until it closes the connection."""
        with self.connect() as sock:
            sock.sendall(request)
            return read_to_close(sock)

    def refusals(self) -> int:
        return self.log.read_text(errors="replace").count(REFUSED)


def read_to_close(sock: socket.socket) -> bytes:
    """What arrives until the server closes the connection (a timeout fails the test)."""
    out = b""
    while chunk := sock.recv(65536):
        out += chunk
    return out


def statuses(raw: bytes) -> list[int]:
    return [int(s) for s in _STATUS.findall(raw)]


def get(target: str, *headers: bytes, close: bool = True) -> bytes:
    head = b"GET " + target.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"".join(headers)
    return head + (CLOSE if close else b"") + b"\r\n"


def padded(size: int) -> str:
    """/healthz (which reads no parameters) with a query string making the head ``size``
    bytes long, as ``get`` writes it with Connection: close."""
    bare = len(get("/healthz?pad="))
    return "/healthz?pad=" + "a" * (size - bare)


def assert_refused(raw: bytes) -> None:
    """One 431 with a plain-text body, and the connection closed (``read_to_close``)."""
    assert statuses(raw) == [431], raw[:300]
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.lower().split(b"\r\n")
    assert b"connection: close" in lines
    assert b"content-type: text/plain; charset=utf-8" in lines
    assert body.startswith(b"Request Header Fields Too Large")
    assert b"/similar" in body  # where a long text can go instead


def test_a_normal_request_is_answered(server: Server) -> None:
    raw = server.exchange(get("/healthz"))
    assert statuses(raw) == [200]
    assert raw.endswith(b"}")  # the JSON body, then the server closed the connection


def test_a_head_at_the_limit_is_answered(server: Server) -> None:
    assert len(get(padded(MAX_HEAD))) == MAX_HEAD
    assert statuses(server.exchange(get(padded(MAX_HEAD)))) == [200]


def test_a_long_url_gets_431_and_the_connection_closes(server: Server) -> None:
    before = server.refusals()
    assert_refused(server.exchange(get(padded(MAX_HEAD + 1))))
    assert_refused(server.exchange(get(padded(10 * MAX_HEAD))))
    assert server.refusals() == before + 2  # one warning line each


def test_many_headers_over_the_limit_get_431(server: Server) -> None:
    headers = [b"X-Filler-%03d: %s\r\n" % (i, b"v" * 100) for i in range(700)]  # 82 KB
    assert_refused(server.exchange(get("/healthz", *headers)))
    one_big = b"X-Filler: " + b"v" * (MAX_HEAD + 4096) + b"\r\n"
    assert_refused(server.exchange(get("/healthz", one_big)))


def test_a_head_sent_in_small_pieces_is_refused_before_it_ends(server: Server) -> None:
    """A client writing a header that never ends, 512 bytes at a time: the server answers
    431 once it has about MAX_HEAD bytes of the head, without waiting for the rest."""
    with server.connect() as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: ")
        sent = 0
        while sent < 8 * MAX_HEAD and not select.select([sock], [], [], 0.02)[0]:
            try:
                sock.sendall(b"v" * 512)
            except OSError:  # the server has closed the connection
                break
            sent += 512
        raw = read_to_close(sock)
    assert_refused(raw)
    assert sent < 8 * MAX_HEAD


def test_two_pipelined_requests_on_one_connection_are_both_answered(server: Server) -> None:
    raw = server.exchange(get("/healthz", close=False) + get("/api/v1/stats"))
    assert statuses(raw) == [200, 200]
    # Pipelined behind a request, a head over the limit is answered after it, in order.
    raw = server.exchange(get("/healthz", close=False) + get(padded(2 * MAX_HEAD)))
    assert statuses(raw) == [200, 431]
    assert raw.endswith(b"at /similar, which posts it.\n")  # the 431's body comes last


def test_a_head_after_a_body_on_the_same_connection_is_measured_alone(server: Server) -> None:
    """Neither the body before it nor the head before that count towards a head."""
    body = b'{"text": "neural network language models", "page_size": 3}' + b" " * 30_000
    post = (
        b"POST /api/v1/similar HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
    ) + body
    raw = server.exchange(post + get(padded(MAX_HEAD - 1024)))
    assert statuses(raw) == [200, 200]
    raw = server.exchange(post + get(padded(MAX_HEAD + 1024)))
    assert statuses(raw) == [200, 431]


def test_a_post_body_over_the_limit_with_a_small_head_is_not_refused(server: Server) -> None:
    text = ("neural network language models for parsing " * 500)[:19_000]
    escaped = "".join(f"\\u{ord(c):04x}" for c in text)  # JSON escapes: 6 bytes a character
    body = b'{"text": "%s", "page_size": 3}' % escaped.encode()
    assert len(body) > MAX_HEAD
    post = (
        b"POST /api/v1/similar HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
    ) + body
    raw = server.exchange(post)
    assert statuses(raw) == [200], raw[:300]
    assert json.loads(raw.partition(b"\r\n\r\n")[2])["total"] > 0  # the app read the body


def test_the_server_still_answers_after_refusals(server: Server) -> None:
    for _ in range(3):
        assert_refused(server.exchange(get(padded(2 * MAX_HEAD))))
    assert statuses(server.exchange(get("/healthz"))) == [200]


def test_an_api_url_over_the_limit_gets_the_apis_error(server: Server) -> None:
    """8,000 CJK characters, far under ``q``'s 20,000, are a 72 KB URL percent-encoded: the
    API's 431 is its JSON Error with CORS, naming the API's way to send a long text (it was
    the pages' plain text pointing at the form at /similar); a page keeps its plain text."""
    q = quote("漢" * 8000)
    raw = server.exchange(get(f"/api/v1/search?q={q}", b"Origin: https://example.org\r\n"))
    assert statuses(raw) == [431], raw[:300]
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.lower().split(b"\r\n")
    assert b"content-type: application/json" in lines
    assert b"access-control-allow-origin: *" in lines and b"connection: close" in lines
    error = json.loads(body)["error"]
    assert error["status"] == 431 and error["code"] == "head_too_large"
    assert "POST /api/v1/similar" in error["message"] and "64 KB" in error["message"]
    assert_refused(server.exchange(get(f"/search?q={q}")))
    # Absolute-form, and a target refused before its end has come: the API's answer still.
    raw = server.exchange(get(f"http://127.0.0.1/api/v1/search?q={q}"))
    assert b'"code":"head_too_large"' in raw
    with server.connect() as sock:
        sock.sendall(b"GET /api/v1/search?q=" + b"a" * (2 * MAX_HEAD))
        assert b'"code":"head_too_large"' in read_to_close(sock)


def test_the_q_limit_says_what_fits_in_a_url(server: Server) -> None:
    raw = server.exchange(get("/openapi.json"))
    doc = json.loads(raw.partition(b"\r\n\r\n")[2])
    search = doc["paths"]["/api/v1/search"]["get"]["parameters"]
    q = next(p for p in search if p["name"] == "q")
    assert "64 KB" in q["description"] and "POST /api/v1/similar" in q["description"]
