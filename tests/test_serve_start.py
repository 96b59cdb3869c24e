"""``papersift serve`` on an address it cannot have: one line and exit 1, never an abort.

A real ``papersift serve`` process against a real socket already listening on the port.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.corpus import sample_records, write_jsonl


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port another socket is listening on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def serve(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``python *argv`` with an empty data directory of its own and no bootstrap."""
    env = {**os.environ, "PAPERSIFT_DATA_DIR": str(tmp_path / "data"),
           "PAPERSIFT_DATA_BOOTSTRAP": "none"}  # fmt: skip
    return subprocess.run(
        [sys.executable, *argv], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip


def test_port_in_use_is_one_line_before_any_start_up_work(tmp_path: Path, taken_port: int) -> None:
    start = time.monotonic()
    out = serve(tmp_path, "-m", "papersift", "serve", "--port", str(taken_port))
    assert out.returncode == 1, out.stderr
    assert out.stderr == (
        f"papersift: error: port {taken_port} on 127.0.0.1 is in use; "
        "pick another with --port or [server] port\n"
    )
    assert not (tmp_path / "data").exists(), "nothing was imported, loaded or started"
    assert time.monotonic() - start < 30


def test_start_failing_in_uvicorn_exits_cleanly(tmp_path: Path, taken_port: int) -> None:
    """If the port is taken between the check and uvicorn's bind (the check skipped here),
    the threads are stopped before exit: exit 1, not onnxruntime's abort (134)."""
    script = (
        "import sys, papersift.serve\n"
        "papersift.serve.check_address = lambda host, port: None\n"
        "from papersift.cli import main\n"
        f"sys.exit(main(['serve', '--port', '{taken_port}']))\n"
    )
    out = serve(tmp_path, "-c", script)
    assert out.returncode == 1, out.stderr
    assert "terminate called" not in out.stderr and "Traceback" not in out.stderr
    assert "address already in use" in out.stderr  # uvicorn's own log line, then ours:
    assert out.stderr.splitlines()[-1] == (
        f"papersift: error: the server could not start on port {taken_port} (see the error above)"
    )
    assert (tmp_path / "data").is_dir(), "the start-up work ran before uvicorn failed"


def serve_until_stopped(
    tmp_path: Path, bootstrap: str = "none", stop: int = signal.SIGINT
) -> tuple[int, str, str]:
    """``papersift serve`` on a free port until /healthz answers, then ``stop``; its exit
    code, stdout and stderr."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PAPERSIFT_DATA_DIR": str(tmp_path / "data"),
           "PAPERSIFT_DATA_BOOTSTRAP": bootstrap}  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "papersift", "serve", "--port", str(port)], cwd=tmp_path,
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
                    conn.sendall(
                        b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                    )
                    if conn.recv(64).startswith(b"HTTP/1.1 200"):
                        break
            except OSError:
                time.sleep(0.2)
    finally:
        proc.send_signal(stop)
        out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def test_every_log_line_goes_to_stderr_in_one_format(tmp_path: Path) -> None:
    """uvicorn's lines (start-up, one per request) come through the CLI's handler: on
    stderr as ``TIME LEVEL logger: message`` like every other line; stdout stays empty."""
    _, out, err = serve_until_stopped(tmp_path)
    assert out == ""
    line = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ [\w.]+: .+")
    lines = err.splitlines()
    assert lines and all(line.fullmatch(x) for x in lines), err
    # Started on an empty index with no bootstrap: the admin is told what to do.
    assert any(" WARNING papersift.serve: the index is empty" in x for x in lines), err
    access = [x for x in lines if " INFO uvicorn.access: " in x]
    assert access and access[-1].endswith('"GET /healthz HTTP/1.1" 200'), err


@pytest.mark.slow
def test_sigterm_stops_the_jobs_at_a_checkpoint_and_exits_0(tmp_path: Path) -> None:
    """``systemctl stop`` sends SIGTERM: uvicorn shuts down, then raises the signal again.
    That used to kill the process there, before the embedding job stopped and logged its
    end (exit -15, no end line); now the job ends at a checkpoint and serve exits 0."""
    corpus = write_jsonl(tmp_path / "corpus.jsonl", sample_records())
    code, _, err = serve_until_stopped(tmp_path, str(corpus), signal.SIGTERM)
    assert code == 0, err[-2000:]
    assert re.search(r"job=embed event=finished outcome=(stopped|ok) ", err), err[-2000:]
    assert "Traceback" not in err and "terminate called" not in err
