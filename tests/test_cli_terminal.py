"""The CLI on a terminal, as an admin runs it: a real subprocess on a pseudo-terminal, so
that it draws its progress bars and asks its questions."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from papersift.core.config import Config
from tests.test_cli import config_path

# A log line's start: "2026-12-07 10:12:11,555 INFO papersift...".
LOG_LINE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ papersift")


def on_terminal(
    *args: str, env: dict[str, str] | None = None, typed: str = "", timeout: float = 300
) -> tuple[int, str]:
    """Run ``papersift ARGS`` with a 160-column pseudo-terminal as stdin, stdout and stderr;
    ``typed`` is what the user types. Returns the exit code and everything shown."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "papersift", *args],
        stdin=slave, stdout=slave, stderr=slave, env={**os.environ, **(env or {})},
    )  # fmt: skip
    os.close(slave)
    if typed:
        os.write(master, typed.encode())
    shown = bytearray()
    try:
        while True:
            ready, _, _ = select.select([master], [], [], timeout)
            if not ready:
                proc.kill()
                raise AssertionError(f"no output for {timeout} s: {bytes(shown)[-500:]!r}")
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child has closed the terminal
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(master)
    return proc.wait(timeout), shown.decode("utf-8", "replace")


@pytest.mark.slow
def test_log_lines_go_above_the_progress_bar(small: Config, tmp_path: Path) -> None:
    """Building the model's graph logs a line while the embed bar is drawn: it was written
    into the bar's line ("embed:   0%|...| 0/300 [00:00<?, ?paper/s]2026-12-07 ... INFO
    ... saved the fused graph ...")."""
    cache = tmp_path / "graphs"  # empty: the graph is built, and that is logged, mid-bar
    cache.mkdir()
    code, shown = on_terminal("index", "--config", config_path(small),
                              env={"PAPERSIFT_MODEL_CACHE": str(cache)})  # fmt: skip
    assert code == 0, shown
    assert "embed: 100%" in shown and "saved the fused graph" in shown, shown
    starts = [m.start() for m in LOG_LINE.finditer(shown)]
    assert starts, shown
    for at in starts:  # each at the start of a line (the bar cleared first), none mid-bar
        assert shown[at - 1] in "\r\n", shown[max(0, at - 120) : at + 80]


@pytest.mark.slow
def test_user_remove_asks_on_a_terminal(tmp_path: Path) -> None:
    """It deleted a member's library at the first word."""
    from papersift.engine.library import Library
    from papersift.engine.members import Members

    (tmp_path / "d").mkdir()
    cfg = tmp_path / "config.toml"
    cfg.write_text('[data]\ndir = "d"\n', encoding="utf-8")
    members = Members(tmp_path / "d")
    try:
        kim = members.add("kim@lab.example", "a long enough password", "Kim")
        library = Library(members)
        library.save(kim.id, library.ensure_tag(kim.id, "reading").id, ["2401.10241"])
        code, shown = on_terminal("user", "remove", "kim@lab.example", "--config", str(cfg),
                                  typed="n\n")  # fmt: skip
        assert code == 1, shown
        assert "remove kim@lab.example (Kim) and their library (1 saved paper)? [y/N] " in shown
        assert shown.endswith("nothing removed: kim@lab.example keeps the account and library\r\n")
        assert members.by_email("kim@lab.example") is not None
        code, shown = on_terminal("user", "remove", "kim@lab.example", "--config", str(cfg),
                                  typed="y\n")  # fmt: skip
        assert code == 0 and shown.endswith("removed kim@lab.example and their library\r\n")
        assert members.all() == []
    finally:
        members.close()
