"""Crontab expressions read as cron reads them, as APScheduler triggers.

APScheduler 3's ``CronTrigger.from_crontab`` numbers the days of the week from Monday = 0
(its issue 286, fixed only in 4.x), so ``0 3 * * 1-5`` fired Tuesday to Saturday and the
default maintenance ``0 4 * * 0`` on Mondays; and it requires both a restricted day of the
month and a restricted day of the week where cron takes either. Here the day-of-week field
is read as crontab(5) defines it (0 and 7 are Sunday, names allowed) and handed over as
day names, and both restricted days give the union of the two schedules.
"""

from __future__ import annotations

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.combining import OrTrigger
from apscheduler.triggers.cron import CronTrigger

DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def _day(text: str) -> int:
    if text in DAYS:
        return DAYS.index(text)
    if not text.isdigit() or int(text) > 7:
        raise ValueError(f"day of week {text!r} is not 0-7 or sun-sat")
    return int(text)


def weekdays(field: str) -> str:
    """A crontab day-of-week field as APScheduler day names; ``*`` stays ``*``."""
    field = field.strip().lower()
    if field == "*":
        return field
    days: set[int] = set()
    for item in field.split(","):
        part, slash, step_text = item.partition("/")
        step = int(step_text) if slash and step_text.isdigit() else 1
        if slash and (not step_text.isdigit() or step < 1):
            raise ValueError(f"bad step in day of week {item!r}")
        if part == "*":
            lo, hi = 0, 6
        elif "-" in part:
            first, last = part.split("-", 1)
            lo, hi = _day(first), _day(last)
        else:
            lo = _day(part)
            hi = 6 if slash else lo  # "1/2": from Monday, every second day of the week
        if lo > hi:
            raise ValueError(f"day-of-week range {item!r} runs backwards")
        days.update(d % 7 for d in range(lo, hi + 1, step))
    return ",".join(DAYS[d] for d in sorted(days))


def cron_trigger(expr: str, timezone: str = "UTC") -> BaseTrigger:
    """The trigger of a 5-field crontab expression; ValueError names what is wrong."""
    fields = expr.split()
    if len(fields) != 5:
        raise ValueError(f"wrong number of fields: got {len(fields)}, expected 5")
    minute, hour, day, month, dow = fields
    days = weekdays(dow)
    if day != "*" and days != "*":  # cron runs on either day
        return OrTrigger([
            CronTrigger(minute=minute, hour=hour, day=day, month=month, timezone=timezone),
            CronTrigger(minute=minute, hour=hour, month=month, day_of_week=days,
                        timezone=timezone),
        ])  # fmt: skip
    return CronTrigger(
        minute=minute, hour=hour, day=day, month=month, day_of_week=days, timezone=timezone
    )
