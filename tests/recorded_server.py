"""A local HTTP server on 127.0.0.1 that replays recorded responses (the only "internet").

Routes match a path and the exact query parameters; each route holds a list of replies that
are served in turn (the last one repeats), so "a 503, then the page" is two replies. A reply
may ``hold`` until the test releases it, to interrupt a client mid-harvest.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

FIXTURES = Path(__file__).parent / "fixtures"


@dataclass
class Reply:
    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    hold: threading.Event | None = None  # wait for this before answering
    truncate: int | None = None  # send only this many bytes of the body


def oai(name: str, **kw: object) -> Reply:
    return Reply((FIXTURES / "oai" / name).read_bytes(), **kw)  # type: ignore[arg-type]


def api(name: str) -> Reply:
    """A recorded arXiv API response ({url, status_code, body}); see its SOURCE.txt."""
    rec = json.loads((FIXTURES / "arxiv_api" / name).read_text(encoding="utf-8"))
    body: str = rec["body"]
    try:
        raw = body.encode("latin-1")  # undo the Latin-1 decoding of the recording
    except UnicodeEncodeError:
        raw = body.encode("utf-8")
    return Reply(raw, rec["status_code"], {"Content-Type": "application/atom+xml"})


class RecordedServer:
    def __init__(self) -> None:
        self.routes: dict[tuple[str, frozenset[tuple[str, str]]], list[Reply]] = {}
        self.served: dict[tuple[str, frozenset[tuple[str, str]]], int] = {}
        self.requests: list[tuple[str, dict[str, str], str]] = []  # path, params, user agent
        self.arrived = threading.Event()  # set whenever a request arrives
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base + path

    def add(self, path: str, params: dict[str, str], *replies: Reply) -> None:
        key = (path, frozenset(params.items()))
        with self._lock:
            self.routes[key] = list(replies)
            self.served[key] = 0

    def _reply(self, path: str, params: dict[str, str], agent: str) -> Reply:
        key = (path, frozenset(params.items()))
        with self._lock:
            self.requests.append((path, params, agent))
            self.arrived.set()
            replies = self.routes.get(key)
            if not replies:
                return Reply(b"no recorded response for this request", 404)
            n = self.served.get(key, 0)
            self.served[key] = n + 1
            return replies[min(n, len(replies) - 1)]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                params = dict(parse_qsl(parts.query, keep_blank_values=True))
                reply = server._reply(parts.path, params, self.headers.get("User-Agent", ""))
                if reply.hold is not None:
                    reply.hold.wait(30)
                body = reply.body if reply.truncate is None else reply.body[: reply.truncate]
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler

    def start(self) -> RecordedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def serve() -> Iterator[RecordedServer]:
    """For a fixture: ``yield from serve()``."""
    server = RecordedServer().start()
    try:
        yield server
    finally:
        server.stop()
