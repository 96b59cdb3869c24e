"""Polite HTTP for harvesting: timeouts, bounded retries with backoff, ``Retry-After``.

Every request waits until ``delay`` seconds have passed since the previous one. A 503 (or
429, 500, 502, 504), a timeout, a dropped connection or a body the caller's ``parse``
rejects as truncated is retried up to ``retries`` times; anything else fails at once. A host
name that does not resolve (no network, or a mistyped URL) is no passing hiccup: it fails at
once, or after one retry when the resolver calls its failure temporary, with one line saying
papersift needs network access to that host (the full schedule took ~90 s to say so).
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TypeVar

import httpx

from papersift import __version__
from papersift.core.errors import PapersiftError
from papersift.core.wording import counted

log = logging.getLogger(__name__)

T = TypeVar("T")
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
MAX_RETRY_AFTER = 300.0  # seconds; a server asking for longer makes the run fail instead


class HarvestError(PapersiftError):
    """A source could not be fetched or answered with an error; the message says which."""


class UnresolvedHost(HarvestError):
    """The host name of a URL does not resolve: no network, or a mistyped URL."""

    def __init__(self, url: str, error: socket.gaierror) -> None:
        host = httpx.URL(url).host or url
        reason = error.strerror or str(error)
        super().__init__(
            f"{host} could not be resolved ({reason}): papersift needs network access to "
            f"{host} ({url}); check the connection, or the URL if it is mistyped"
        )
        self.host = host


class RetryableResponse(Exception):
    """Raised by a ``parse`` callback for a body that is truncated or garbled: fetch again."""


@dataclass(frozen=True)
class FetchSettings:
    timeout: float = 60.0
    retries: int = 4
    delay: float = 3.0  # polite pause between requests
    backoff: float = 5.0  # first retry pause when the server gives no Retry-After
    max_retry_after: float = MAX_RETRY_AFTER
    mailto: str = ""


def name_error(exc: BaseException) -> socket.gaierror | None:
    """The name-resolution failure behind ``exc`` (httpx wraps it twice), if that is it."""
    seen: BaseException | None = exc
    for _ in range(8):  # a chain is short; a cycle is not followed
        if seen is None or isinstance(seen, socket.gaierror):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def name_retries(error: socket.gaierror) -> int:
    """Retries a name-resolution failure gets: one when the resolver calls it temporary
    (EAI_AGAIN: it could not reach a name server just now), none when it says there is
    no such name."""
    return 1 if error.errno == socket.EAI_AGAIN else 0


def user_agent(mailto: str) -> str:
    contact = f"; mailto:{mailto}" if mailto else ""
    return f"papersift/{__version__} (self-hosted paper search{contact})"


def retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdecimal():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class Fetcher:
    """One polite HTTP client; ``sleep`` is injectable so tests never wait."""

    def __init__(
        self,
        settings: FetchSettings,
        *,
        sleep: Callable[[float], None] = time.sleep,
        stop: threading.Event | None = None,
    ) -> None:
        self.settings = settings
        self._sleep = sleep
        self._stop = stop
        self._last = 0.0
        self.requests = 0
        self._client = httpx.Client(
            timeout=settings.timeout,
            follow_redirects=True,
            headers={"User-Agent": user_agent(settings.mailto)},
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _wait(self, seconds: float) -> None:
        if seconds <= 0:
            return
        if self._stop is not None:
            if self._stop.wait(seconds):
                raise HarvestError("stopped")
        else:
            self._sleep(seconds)

    def get(
        self,
        url: str,
        params: Mapping[str, str],
        parse: Callable[[int, bytes], T],
    ) -> T:
        """GET ``url`` and return ``parse(status, body)``; retries as described above."""
        s = self.settings
        attempt = 0
        while True:
            self._wait(self._last + s.delay - time.monotonic())
            self._last = time.monotonic()
            self.requests += 1
            pause = s.backoff * (2**attempt)
            try:
                response = self._client.get(url, params=dict(params))
                status = response.status_code
                if status in RETRY_STATUS:
                    asked = retry_after(response.headers.get("Retry-After"))
                    if asked is not None:
                        if asked > s.max_retry_after:
                            raise HarvestError(
                                f"{url} asks to retry after {asked:.0f} s "
                                f"(more than {s.max_retry_after:.0f} s); try later"
                            )
                        pause = asked
                    raise RetryableResponse(f"HTTP {status}")
                return parse(status, response.content)
            except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:  # fails every time
                raise HarvestError(f"{url} is not an http(s) URL ({exc})") from None
            except (httpx.TimeoutException, httpx.TransportError, RetryableResponse) as exc:
                reason = str(exc) or type(exc).__name__
                unresolved = name_error(exc)
                limit = (
                    s.retries if unresolved is None else min(s.retries, name_retries(unresolved))
                )
                if attempt >= limit and unresolved is not None:
                    raise UnresolvedHost(url, unresolved) from None
                if attempt >= limit:
                    raise HarvestError(
                        f"{url}: giving up after {counted(attempt + 1, 'attempt')} ({reason})"
                    ) from exc
                attempt += 1
                log.warning(
                    "fetch %s failed (%s); retry %d of %d in %.1f s",
                    url,
                    reason,
                    attempt,
                    limit,
                    pause,
                )
                self._wait(pause)
