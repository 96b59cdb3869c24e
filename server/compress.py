"""ASGI middleware that compresses text responses with brotli (when installed) or gzip.

Every response of a compressible type says ``Vary: Accept-Encoding``, compressed or not: a
shared cache that kept the identity bytes for a client that sent no ``Accept-Encoding``
would otherwise hand them to every client, and one that kept the brotli bytes could hand
them to a client without brotli only if the uncompressed variant hid the header."""

from __future__ import annotations

import gzip
import importlib
from collections.abc import Callable
from typing import Any

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from papersift.server.negotiate import add_vary, qualities

MIN_SIZE = 512
# Quality and level by bench/compression_levels.py (bench/RESULTS.md): brotli 3 and gzip 2
# take about a third of the CPU of brotli 5 and gzip 6 on a search answer (0.8 against
# 2.3 ms for 56 KB of JSON) for 8-12% more bytes. A new search is paid per request, and a
# lab's server is CPU-bound long before its network is.
BROTLI_QUALITY = 3
GZIP_LEVEL = 2
MAX_BUFFER = 16 * 1024 * 1024  # larger bodies are passed through as they come
_COMPRESSIBLE = (
    "text/",
    "application/json",
    "application/javascript",
    "application/xml",
    "application/ld+json",
    "application/rss+xml",
    "application/atom+xml",
    "image/svg+xml",
)


def _load_brotli() -> Callable[[bytes], bytes] | None:
    try:
        module: Any = importlib.import_module("brotli")
    except ImportError:
        return None
    compress: Callable[..., bytes] = module.compress
    return lambda data: compress(data, quality=BROTLI_QUALITY)


_BROTLI = _load_brotli()


def _GZIP(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0)


def is_compressible(headers: Headers) -> bool:
    """A text type, not already encoded."""
    ctype = headers.get("content-type", "")
    return "content-encoding" not in headers and ctype.startswith(_COMPRESSIBLE)


def choose_encoding(header: str) -> tuple[str, Callable[[bytes], bytes]] | None:
    accepted = qualities(header)
    if _BROTLI is not None and accepted.get("br", 0) > 0:
        return "br", _BROTLI
    if accepted.get("gzip", 0) > 0:
        return "gzip", _GZIP
    return None


def mark_varied(start: Message) -> None:
    """``Vary: Accept-Encoding`` on a response start whose body could have been compressed
    (its type is text and no encoding was applied), whether or not it is."""
    headers = MutableHeaders(scope=start)
    if is_compressible(headers):
        add_vary(headers, "Accept-Encoding")


class CompressionMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        choice = choose_encoding(Headers(scope=scope).get("accept-encoding", ""))
        if choice is None:

            async def send_varied(message: Message) -> None:
                if message["type"] == "http.response.start":
                    mark_varied(message)
                await send(message)

            await self.app(scope, receive, send_varied)
            return
        await _Responder(choice[0], choice[1], send).run(self.app, scope, receive)


class _Responder:
    """Holds the response start and buffers the body, then decides whether to compress."""

    def __init__(self, name: str, compress: Callable[[bytes], bytes], send: Send) -> None:
        self.name = name
        self.compress = compress
        self.send = send
        self.start: Message | None = None
        self.chunks: list[bytes] = []
        self.size = 0
        self.passthrough = False

    async def run(self, app: ASGIApp, scope: Scope, receive: Receive) -> None:
        await app(scope, receive, self.on_message)

    def _eligible(self, start: Message) -> bool:
        headers = Headers(raw=start["headers"])
        return is_compressible(headers) and start["status"] not in (204, 304)

    async def on_message(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.start = message
            mark_varied(message)
            self.passthrough = not self._eligible(message)
            if self.passthrough:
                await self.send(message)
            return
        if message["type"] != "http.response.body" or self.passthrough:
            await self.send(message)
            return
        assert self.start is not None
        body: bytes = message.get("body", b"")
        self.chunks.append(body)
        self.size += len(body)
        if message.get("more_body", False):
            if self.size > MAX_BUFFER:  # too big to hold: send what we have as it is
                self.passthrough = True
                await self.send(self.start)
                await self.send(
                    {"type": "http.response.body", "body": b"".join(self.chunks), "more_body": True}
                )
            return
        data = b"".join(self.chunks)
        headers = MutableHeaders(raw=self.start["headers"])
        if self.size >= MIN_SIZE:
            data = self.compress(data)
            headers["Content-Encoding"] = self.name
            headers["Content-Length"] = str(len(data))
            etag = headers.get("etag")
            if etag and not etag.startswith("W/"):
                headers["ETag"] = "W/" + etag  # the bytes differ from the identity encoding
        await self.send(self.start)
        await self.send({"type": "http.response.body", "body": data})
