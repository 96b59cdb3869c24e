"""Request limits: a per-client token bucket on the API and a cap on request bodies.

``[server] rate_limit`` is requests per minute per client address on ``/api/`` and on the
pages and feeds that run a search (``LIMITED_PATHS``), one bucket for both: a client may burst
a whole minute's worth, then gets ``429`` with ``Retry-After`` until its bucket refills (a
page asked for gets the error page, the API its JSON). 0 turns it off. Other pages (a paper,
a researcher) read what is stored and stay unlimited.

Bodies are capped at ``MAX_BODY`` (forms of a few fields), except on the routes given their
own cap (a library import, a pasted text at its longest); a larger declared or streamed body
is refused with ``413`` before it is read into memory.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from papersift.server import errors

MAX_BODY = 64 * 1024
# Routes that take a file: a library import (indexer.bibimport.MAX_BYTES plus the form).
LARGE_BODIES = {"/library/import": 2 * 1024 * 1024 + 64 * 1024}
MAX_CLIENTS = 10_000  # buckets kept; full (idle) ones are dropped first
LIMITED_PREFIXES = ("/api/",)
# Pages and feeds that run a new search each time: a crawler following search links would
# otherwise cost ~20 ms of CPU a request unbounded (bench/RESULTS.md, issue 23).
LIMITED_PATHS = frozenset(("/search", "/similar", "/rss/search.xml", "/atom/search.xml"))


class TokenBucket:
    """``capacity`` tokens, refilled at ``rate`` per second; ``take`` answers the wait."""

    __slots__ = ("capacity", "rate", "stamp", "tokens")

    def __init__(self, capacity: float, rate: float, now: float) -> None:
        self.capacity, self.rate, self.tokens, self.stamp = capacity, rate, capacity, now

    def take(self, now: float) -> float:
        """Spend one token; 0.0 if allowed, else the seconds until one is available."""
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return 0.0
        return (1 - self.tokens) / self.rate


class RateLimiter:
    """Buckets per client key, at ``per_minute`` requests per minute."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute, self.clock = per_minute, clock
        self.buckets: dict[str, TokenBucket] = {}

    def wait(self, key: str) -> float:
        now = self.clock()
        bucket = self.buckets.get(key)
        if bucket is None:
            if len(self.buckets) >= MAX_CLIENTS:
                self._prune(now)
            bucket = TokenBucket(self.per_minute, self.per_minute / 60, now)
            self.buckets[key] = bucket
        return bucket.take(now)

    def peek(self, key: str) -> float:
        """The wait ``wait`` would answer now, without spending a token."""
        bucket = self.buckets.get(key)
        if bucket is None:
            return 0.0
        tokens = min(bucket.capacity, bucket.tokens + (self.clock() - bucket.stamp) * bucket.rate)
        return 0.0 if tokens >= 1 else (1 - tokens) / bucket.rate

    def _prune(self, now: float) -> None:
        for key, b in list(self.buckets.items()):
            if b.tokens + (now - b.stamp) * b.rate >= b.capacity:
                del self.buckets[key]
        excess = len(self.buckets) - MAX_CLIENTS * 9 // 10  # room for many before the next scan
        for key in list(self.buckets)[: max(0, excess)]:  # all busy: forget the oldest
            del self.buckets[key]


class RequestLimitMiddleware:
    """Rate-limits the API per client (if ``per_minute``) and caps request bodies."""

    def __init__(
        self, app: ASGIApp, per_minute: int = 0, large: dict[str, int] | None = None
    ) -> None:
        self.app = app
        self.limiter = RateLimiter(per_minute) if per_minute > 0 else None
        self.large = {**LARGE_BODIES, **(large or {})}  # routes that read a bigger body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared: bytes = dict(scope["headers"]).get(b"content-length", b"0")
        most = self.large.get(str(scope["path"]), MAX_BODY)
        if not declared.isdigit() or int(declared) > most:  # bytes: ASCII digits only
            await self._refuse(scope, receive, send, 413, too_large(most))
            return
        if self.limiter and limited(str(scope["path"])):
            client = scope.get("client") or ("unknown", 0)
            wait = self.limiter.wait(str(client[0]))
            if wait > 0:
                retry = {"Retry-After": str(math.ceil(wait))}
                message = "Too many requests; slow down and retry after the given seconds."
                await self._refuse(scope, receive, send, 429, message, retry)
                return
        await self.app(scope, _capped(receive, most), send)

    async def _refuse(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        status: int,
        message: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        response = errors.error_response(Request(scope), status, message)
        response.headers.update(headers or {})
        await response(scope, receive, send)


def limited(path: str) -> bool:
    """Whether requests to ``path`` count against the client's rate limit."""
    return path.startswith(LIMITED_PREFIXES) or path in LIMITED_PATHS


def too_large(most: int) -> str:
    """The 413's message: the limit, in the unit a person reads it in."""
    limit = f"{most / 2**20:.2g} MiB" if most >= 2**20 else f"{most / 2**10:.3g} KiB"
    return f"The request body is too large: this address takes at most {limit}."


def _capped(receive: Receive, most: int = MAX_BODY) -> Receive:
    """``receive`` that raises a 413 once a streamed (chunked) body passes ``most``."""
    seen = 0

    async def wrapped() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > most:
                raise HTTPException(413, too_large(most))
        return message

    return wrapped


def document_limits(document: dict[str, Any]) -> dict[str, Any]:
    """Add the rate limit's ``429`` to every API operation of an OpenAPI document."""
    too_many = {
        "description": "Rate limited (`[server] rate_limit`); retry after `Retry-After` seconds.",
        "headers": {"Retry-After": {"schema": {"type": "integer", "minimum": 1}}},
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }
    for path, operations in document.get("paths", {}).items():
        if path.startswith(LIMITED_PREFIXES):
            for operation in operations.values():
                if isinstance(operation, dict) and "responses" in operation:
                    operation["responses"].setdefault("429", too_many)
    return document
