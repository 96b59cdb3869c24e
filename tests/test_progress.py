"""Progress reporting without a terminal: log lines with the rate and the time left."""

from __future__ import annotations

import logging

import pytest

from papersift.core.progress import Progress, duration


def test_duration_reads_like_a_person_says_it() -> None:
    assert [duration(s) for s in (0, 59.4, 75, 599, 601, 5400)] == [
        "0 s", "59 s", "1 min 15 s", "9 min 59 s", "10 min", "1 h 30 min",
    ]  # fmt: skip


def test_log_lines_every_interval_with_rate_and_eta(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    log = logging.getLogger("test.progress")
    caplog.set_level(logging.INFO, logger="test.progress")
    with Progress(1000, "embed", unit="paper", bar=False, log=log, clock=lambda: now[0]) as p:
        for _ in range(10):  # 100 papers every 10 s: 10 papers/s
            now[0] += 10
            p.update(100)
    lines = [r.getMessage() for r in caplog.records]
    # A line every 30 s (at 30, 60, 90 s), none once everything is done.
    assert lines == [
        "embed: 300 of 1,000 papers (30%), 10.0 papers/s, about 1 min 10 s left",
        "embed: 600 of 1,000 papers (60%), 10.0 papers/s, about 40 s left",
        "embed: 900 of 1,000 papers (90%), 10.0 papers/s, about 10 s left",
    ]
    assert p.rate == pytest.approx(10.0)


def test_a_bar_on_a_terminal_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    log = logging.getLogger("test.progress.bar")
    caplog.set_level(logging.INFO, logger="test.progress.bar")
    with Progress(10, "import x", unit="B", bar=True, log=log, clock=lambda: now[0]) as p:
        now[0] += 100
        p.update(5, papers=3)
        assert p.line() == "import x: 50% read, about 1 min 40 s left"
    assert not caplog.records


def test_a_note_says_what_the_count_does_not(caplog: pytest.LogCaptureFixture) -> None:
    """In the log at INFO after a step long enough to log its progress; after a short one
    only with -v (DEBUG): "keyword index: writing the segment" after importing 50 papers."""
    now = [0.0]
    log = logging.getLogger("test.progress")
    caplog.set_level(logging.DEBUG, logger="test.progress")
    for seconds in (1.0, 45.0):
        with Progress(10, "compact keyword index", unit="paper", bar=False, log=log,
                      clock=lambda: now[0]) as p:  # fmt: skip
            now[0] += seconds
            p.update(10)
            p.note("writing the segment")
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.DEBUG, "compact keyword index: writing the segment"),
        (logging.INFO, "compact keyword index: writing the segment"),
    ]
