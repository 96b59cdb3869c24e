"""Crontab expressions fire when cron would fire them (``papersift.core.cron``).

The reference is the calendar itself: each expected day is worked out from Python's own
weekday numbers, not from APScheduler's.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from papersift.core.config_load import load_config
from papersift.core.cron import cron_trigger, weekdays
from papersift.core.errors import ConfigError

START = datetime(2026, 12, 4, 17, 0, tzinfo=UTC)  # a Friday


def fires(expr: str, n: int = 14) -> list[datetime]:
    trigger = cron_trigger(expr)
    out: list[datetime] = []
    now = START
    while len(out) < n:
        nxt = trigger.get_next_fire_time(out[-1] if out else None, now)
        assert nxt is not None
        out.append(nxt)
        now = nxt + timedelta(seconds=1)
    return out


def days_after(start: datetime, count: int, keep: set[int]) -> list[datetime]:
    """The first ``count`` days after ``start`` at 03:00 whose Python weekday is in ``keep``."""
    day = start.replace(hour=3, minute=0, second=0, microsecond=0)
    out = []
    while len(out) < count:
        day += timedelta(days=1)
        if day.weekday() in keep:
            out.append(day)
    return out


@pytest.mark.parametrize(
    ("field", "python_weekdays"),
    [
        ("1-5", {0, 1, 2, 3, 4}),  # Monday to Friday
        ("mon-fri", {0, 1, 2, 3, 4}),
        ("0", {6}),  # Sunday
        ("7", {6}),
        ("sun", {6}),
        ("6,0", {5, 6}),
        ("5-7", {4, 5, 6}),
        ("*/2", {6, 1, 3, 5}),  # Sunday, Tuesday, Thursday, Saturday
        ("1/3", {0, 3}),  # Monday, Thursday (from 1, every third, to Saturday)
    ],
)
def test_day_of_week_is_read_as_cron_reads_it(field: str, python_weekdays: set[int]) -> None:
    assert fires(f"0 3 * * {field}") == days_after(START, 14, python_weekdays)


def test_every_day_and_the_readme_examples() -> None:
    assert fires("0 3 * * *") == days_after(START, 14, set(range(7)))
    assert [f.weekday() for f in fires("0 4 * * 0", 3)] == [6, 6, 6]  # maintenance: Sundays
    assert {f.weekday() for f in fires("0 3 * * 1-5", 10)} == {0, 1, 2, 3, 4}


def test_day_of_month_or_day_of_week() -> None:
    """Both restricted: cron runs on either (the 1st of the month, and every Monday)."""
    got = fires("0 3 1 * 1", 8)
    assert all(f.day == 1 or f.weekday() == 0 for f in got)
    assert any(f.day == 1 and f.weekday() != 0 for f in got)
    assert any(f.weekday() == 0 and f.day != 1 for f in got)
    assert got == sorted(set(got))


@pytest.mark.parametrize("field", ["8", "5-1", "*/0", "*/x", "funday", "1-"])
def test_bad_day_of_week_is_refused(field: str) -> None:
    with pytest.raises(ValueError):
        weekdays(field)


def test_bad_expression_in_config_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[schedule]\nharvest = "0 3 * * 9"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(path, env={})
    assert "[schedule] harvest" in str(err.value) and "\n" not in str(err.value)
