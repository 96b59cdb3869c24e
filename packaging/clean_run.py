"""Run the one-file executable as on a machine without Python: ``env -i``, PATH=/usr/bin:/bin.

Used by ``tests/test_binary.py`` and ``bench/binary_bench.py``, which load it by its path:
a folder named ``packaging`` is not importable next to the installed ``packaging``
distribution (which wins), and should not try to be.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CLEAN_PATH = "/usr/bin:/bin"
START_TIMEOUT = 900.0  # first start imports the demo corpus: ~20 s here, generous for CI


class BinaryError(RuntimeError):
    """The binary exited or did not answer; carries the tail of its log."""


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    log: Path
    started_seconds: float  # from exec to the first healthy /healthz

    def get(self, path: str) -> tuple[int, bytes]:
        try:
            with urllib.request.urlopen(self.url + path, timeout=60) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def json(self, path: str) -> Any:
        status, body = self.get(path)
        if status != 200:
            raise BinaryError(f"GET {path}: HTTP {status}: {body[:300]!r}")
        return json.loads(body)

    def wait_embedded(self, timeout: float = 600.0) -> dict[str, Any]:
        """Poll /api/v1/stats until every paper has a vector (the background embed job)."""
        deadline = time.monotonic() + timeout
        while True:
            stats: dict[str, Any] = self.json("/api/v1/stats")
            if stats["papers"] and stats["embedded"] == stats["papers"]:
                return stats
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise BinaryError(f"embedding did not finish: {stats}\n" + self.log_tail())
            time.sleep(0.5)

    def log_tail(self, chars: int = 4000) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")[-chars:]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def clean_command(binary: Path, home: Path, *args: str) -> list[str]:
    """``env -i`` with only PATH, HOME and TMPDIR (where the binary unpacks itself)."""
    tmp = home / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    env = ["/usr/bin/env", "-i", f"PATH={CLEAN_PATH}", f"HOME={home}", f"TMPDIR={tmp}"]
    return [*env, str(binary), *args]


@contextmanager
def serving(binary: Path, home: Path, *args: str, cwd: Path | None = None) -> Iterator[Server]:
    """``binary serve --port FREE ARGS...`` in a clean environment, healthy; stopped after."""
    port = free_port()
    log = home / f"serve-{port}.log"
    cmd = clean_command(binary, home, "serve", "--host", "127.0.0.1", "--port", str(port), *args)
    start = time.monotonic()
    with open(log, "wb") as out:
        # Own session: the bootloader's child and threads go with it when it must be killed.
        process = subprocess.Popen(
            cmd, cwd=cwd or home, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = Server(f"http://127.0.0.1:{port}", process, log, 0.0)
    try:
        _wait_healthy(server)
        server.started_seconds = time.monotonic() - start
        yield server
    finally:
        stop(process)


def _wait_healthy(server: Server) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise BinaryError(
                f"exited with status {server.process.returncode} before serving:\n"
                + server.log_tail()
            )
        try:
            with urllib.request.urlopen(server.url + "/healthz", timeout=5) as resp:
                if resp.status == 200:
                    return
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.25)
    raise BinaryError(f"no healthy /healthz after {START_TIMEOUT:.0f} s:\n" + server.log_tail())


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the bootloader forwards it; uvicorn shuts down), SIGKILL if it hangs."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def mapped_files(pid: int) -> set[str]:
    """Files mapped into a process and all its descendants (shared libraries, the model)."""
    paths: set[str] = set()
    pending = [pid]
    while pending:
        p = pending.pop()
        try:
            maps = Path(f"/proc/{p}/maps").read_text()
            children = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except OSError:
            continue
        for line in maps.splitlines():
            parts = line.split(maxsplit=5)  # address perms offset device inode [path]
            if len(parts) == 6:
                paths.add(parts[5])
        pending += [int(c) for c in children]
    return {p for p in paths if p.startswith("/")}
