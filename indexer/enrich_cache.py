"""The enrich cache: each OpenAlex / Semantic Scholar answer (status and body) kept as one
JSON file under the data directory's ``enrich-cache/``, reused until it expires.

A found record expires after ``[enrich] cache_days``, so citation counts are refreshed; a
not-found answer (404) after ``not_found_days``, so a paper a source had not indexed yet is
asked about again. An entry's age comes from the ``fetched`` time stored in it, or, in a
file written before that field existed, from the file's modification time.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from papersift.engine.atomic import write_json_atomic
from papersift.indexer.enrich import WorkRecord
from papersift.indexer.fetch import Fetcher

DAY = 86400.0
# An entry this close to its expiry counts as expired, so a job run every `cache_days` days
# (or every `not_found_days`) asks again at each run, not at every second one when this
# run's request came a little earlier than the last's.
SLACK = 3600.0

Parse = Callable[[int, bytes], WorkRecord | None]


@dataclass(frozen=True)
class Expiry:
    """How long answers are reused, in seconds (0: never)."""

    found: float
    not_found: float

    @classmethod
    def of_days(cls, cache_days: float, not_found_days: float) -> Expiry:
        """From the settings; a not-found answer is never kept longer than a found one."""
        return cls(cache_days * DAY, min(not_found_days, cache_days) * DAY)

    def fresh(self, status: int, age: float) -> bool:
        limit = self.found if status == 200 else self.not_found
        return 0.0 <= age < limit - SLACK


@dataclass
class Tally:
    """One source's answers in a run: found or not (404), and how many came from the cache."""

    found: int = 0
    not_found: int = 0
    cached: int = 0

    @property
    def asked(self) -> int:
        return self.found + self.not_found


class CachedFetcher:
    """GETs through the polite fetcher, keeping each (status, body) under ``root`` (None:
    no cache) and answering from there while the entry is fresh."""

    def __init__(
        self,
        fetcher: Fetcher,
        root: Path | None,
        expiry: Expiry,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.fetcher, self.root, self.expiry, self._now = fetcher, root, expiry, now
        self.tally = Tally()

    def get(self, url: str, params: dict[str, str], parse: Parse) -> WorkRecord | None:
        """``parse(status, body)`` of the cached answer while fresh, else of a new one."""
        path = None if self.root is None else self.root / _name(url, params)
        if path is not None and path.is_file():
            saved = json.loads(path.read_text(encoding="utf-8"))
            status = int(saved["status"])
            if self.expiry.fresh(status, self._now() - _fetched(saved, path)):
                self.tally.cached += 1
                return self._counted(parse(status, saved["body"].encode("utf-8")))

        def keep(status: int, body: bytes) -> WorkRecord | None:
            record = parse(status, body)  # raises (and so is not cached) on errors
            if path is not None:
                text = body.decode("utf-8", "replace")
                stamp = datetime.fromtimestamp(self._now(), UTC).isoformat(timespec="seconds")
                entry = {"url": url, "status": status, "body": text, "fetched": stamp}
                write_json_atomic(path, entry)  # makes the folder
            return record

        return self._counted(self.fetcher.get(url, params, keep))

    def _counted(self, record: WorkRecord | None) -> WorkRecord | None:
        if record is None:
            self.tally.not_found += 1
        else:
            self.tally.found += 1
        return record


def _name(url: str, params: dict[str, str]) -> str:
    name = hashlib.sha256(f"{url}?{sorted(params.items())}".encode()).hexdigest()[:32]
    return f"{name[:2]}/{name}.json"


def _fetched(saved: dict[str, Any], path: Path) -> float:
    """When the answer was fetched: its stored time, else (an entry written before the time
    was stored, or one whose time does not read) the file's modification time."""
    try:
        when = datetime.fromisoformat(str(saved["fetched"]))
    except (KeyError, ValueError):
        return path.stat().st_mtime
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()
