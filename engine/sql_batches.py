"""Values for a SQL ``IN (...)`` list in batches SQLite takes, each with its placeholders:
the one way the store's readers look up many keys at once."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")
# Values per statement: well under SQLite's limit on bound variables (999 before 3.32).
BATCH = 500


def in_batches(values: Sequence[T], size: int = BATCH) -> Iterator[tuple[str, list[T]]]:
    """``("?,?,...", values)`` for each run of up to ``size`` of ``values``, in order."""
    for i in range(0, len(values), size):
        chunk = list(values[i : i + size])
        yield ",".join("?" * len(chunk)), chunk
