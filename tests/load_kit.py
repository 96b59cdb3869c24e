"""Load while writing, shared by ``tests/test_load_while_writing.py`` and
``bench/reliability.py``: a real ``papersift serve`` process, a bounded loopback load
generator that records every request's outcome and latency, and a poll until papers written
by another process are findable through the server.
"""

from __future__ import annotations

import itertools
import signal
import socket
import statistics
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.reliability_kit import ENV, PAPERSIFT

QUERIES = [
    "neural networks",
    "quantum",
    "black hole entropy",
    "language model",
    "graph",
    "dark matter",
    "optimization algorithm",
    "galaxy",
]
MODES = ["keyword", "semantic", "hybrid"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(config_path: Path, log_path: Path, timeout: float = 180) -> Iterator[str]:
    """``papersift serve`` on a free loopback port until it answers /healthz; yields its URL."""
    port = free_port()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [*PAPERSIFT, "serve", "--config", str(config_path), "--port", str(port)],
            env=ENV,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"serve exited: {log_path.read_text()[-1000:]}")
            try:
                if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("serve did not answer /healthz")
            time.sleep(0.2)
        yield url
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass
class LoadStats:
    latencies: list[float] = field(default_factory=list)  # seconds, successful requests
    failures: list[str] = field(default_factory=list)

    @property
    def requests(self) -> int:
        return len(self.latencies) + len(self.failures)

    def percentile(self, p: float) -> float:
        """Milliseconds; 0 without data."""
        if len(self.latencies) < 2:
            return 1000 * (self.latencies[0] if self.latencies else 0.0)
        return 1000 * statistics.quantiles(self.latencies, n=100, method="inclusive")[p - 1]


class LoadGenerator:
    """``clients`` threads searching /api/v1/search and /search back to back until stopped."""

    def __init__(self, url: str, clients: int = 2) -> None:
        self.url = url
        self.stats = LoadStats()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._client, args=[i], daemon=True) for i in range(clients)
        ]

    def _paths(self, offset: int) -> Iterator[tuple[str, dict[str, str]]]:
        for n, q in enumerate(itertools.cycle(QUERIES)):
            if (n + offset) % 4 == 3:
                yield "/search", {"q": q}
            else:
                yield "/api/v1/search", {"q": q, "mode": MODES[(n + offset) % 3]}

    def _client(self, offset: int) -> None:
        with httpx.Client(base_url=self.url, timeout=60) as http:
            for path, params in self._paths(offset):
                if self._stop.is_set():
                    return
                start = time.perf_counter()
                try:
                    status = http.get(path, params=params).status_code
                    failure = "" if status == 200 else f"HTTP {status} for {path} {params}"
                except httpx.HTTPError as exc:
                    failure = f"{type(exc).__name__} for {path} {params}: {exc}"
                took = time.perf_counter() - start
                with self._lock:
                    if failure:
                        self.stats.failures.append(failure)
                    else:
                        self.stats.latencies.append(took)

    def __enter__(self) -> LoadGenerator:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=120)


def findable(url: str, arxiv_id: str, title: str, mode: str) -> bool:
    """Whether a search for the paper's title in ``mode`` shows it on the first page."""
    r = httpx.get(f"{url}/api/v1/search", params={"q": title[:200], "mode": mode}, timeout=60)
    return r.status_code == 200 and arxiv_id in {h["paper"]["id"] for h in r.json()["hits"]}


def wait_findable(url: str, papers: dict[str, str], mode: str, timeout: float = 120) -> list[str]:
    """Poll until every paper (id -> title) is findable in ``mode``; returns those that are
    still not findable when ``timeout`` runs out (empty when all are)."""
    deadline = time.monotonic() + timeout
    missing = dict(papers)
    while missing and time.monotonic() < deadline:
        missing = {i: t for i, t in missing.items() if not findable(url, i, t, mode)}
        if missing:
            time.sleep(0.5)
    return sorted(missing)
