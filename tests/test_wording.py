"""Counts in the CLI's lines: thousands separated, one in the singular."""

from __future__ import annotations

from papersift.core.wording import counted


def test_counted() -> None:
    assert counted(1, "record") == "1 record"
    assert [counted(n, "paper") for n in (0, 2, 2000)] == ["0 papers", "2 papers", "2,000 papers"]
    assert (
        counted(3, "entry", "entries") == "3 entries"
        and counted(1, "entry", "entries") == "1 entry"
    )
