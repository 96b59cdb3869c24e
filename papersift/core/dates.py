"""Date filters as people type them (``2024``, ``2024-05``, ``2024-05-17``): one reading for
the web's ``from``/``to`` parameters and the CLI's ``--from``/``--to``."""

from __future__ import annotations

import calendar
import re
from datetime import date

DATE_FORMS = "2024, 2024-05 or 2024-05-17"
_DATE = re.compile(r"^(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?$")


def parse_partial_date(raw: str, *, end: bool) -> date:
    """``2024`` / ``2024-05`` / ``2024-05-17``; a partial date is its first or (``end``) its
    last day, so ``to=2020`` includes December 2020. ValueError if it is none of them."""
    m = _DATE.match(raw)
    if not m:
        raise ValueError(f"not a date such as {DATE_FORMS}: {raw!r}")
    year, month, day = int(m.group(1)), m.group(2), m.group(3)
    if month is None:
        return date(year, 12, 31) if end else date(year, 1, 1)
    mon = int(month)
    if day is None:
        last = calendar.monthrange(year, mon)[1] if 1 <= mon <= 12 else 0
        return date(year, mon, last if end else 1)
    return date(year, mon, int(day))


def check_order(
    date_from: date | None, date_to: date | None, names: tuple[str, str] = ("'from'", "'to'")
) -> None:
    """ValueError (saying so with the two filters' ``names``) if the range is backwards."""
    if date_from and date_to and date_from > date_to:
        raise ValueError(f"{names[0]} is after {names[1]}; swap them.")
