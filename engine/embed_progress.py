"""How far the embedding backlog has got: coverage, how far back in time, the measured rate.

The backlog (``indexer.embed_queue``) goes newest first and records, at every checkpoint,
the first-version date of the oldest paper it has reached and its measured rate under one
store ``meta`` key per model. Reading that back is one small query: ``stats``, ``doctor``,
the API and the admin page show it without loading the model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from papersift.engine.store import PaperStore

_KEY = "embed_progress:"


@dataclass(frozen=True, slots=True)
class EmbeddingProgress:
    """Vectors of one model against the papers in the store.

    ``rate`` is the papers/s the last backlog run measured (wall time, writes included;
    None before any run), ``reached`` the first-version date down to which that run has
    embedded every paper (newest first; None once papers were added or removed since, as
    the next run starts again from the newest), ``measured_at`` when it last checkpointed.
    """

    model_id: str
    embedded: int
    total: int
    rate: float | None = None
    reached: date | None = None
    measured_at: datetime | None = None

    @property
    def coverage(self) -> float:
        return self.embedded / self.total if self.total else 1.0

    @property
    def pending(self) -> int:
        return max(0, self.total - self.embedded)

    @property
    def eta_seconds(self) -> float | None:
        """Seconds the rest of the backlog takes at the measured rate (0 when done)."""
        if not self.pending:
            return 0.0
        return self.pending / self.rate if self.rate else None

    def as_tuple(self) -> tuple[int, int, float | None, float | None]:
        """(embedded, total, rate papers/s, ETA seconds): what a search degrades on."""
        return self.embedded, self.total, self.rate, self.eta_seconds

    def line(self, running: bool = True) -> str:
        """One human line: "5,000 of 6,267 papers (79.8%); embedded down to 2024-03; ...";
        without the rate and time to go when the backlog is not being embedded (``running``)."""
        parts = [f"{self.embedded:,} of {self.total:,} papers ({self.coverage:.1%})"]
        if not self.pending:
            parts.append("all embedded")
        elif self.reached is not None:
            parts.append(f"embedded down to {self.reached:%Y-%m}")
        if not running:
            return "; ".join(parts)
        if self.rate:
            parts.append(f"{self.rate:.1f} papers/s measured")
        eta = self.eta_seconds
        if self.pending and eta is not None:
            parts.append(f"about {format_duration(eta)} to go")
        return "; ".join(parts)

    def json(self) -> dict[str, object]:
        """The JSON form (``engine.serialize.EmbeddingProgress``) as builtins."""
        import msgspec

        from papersift.engine.serialize import progress_body

        out: dict[str, object] = msgspec.to_builtins(progress_body(self))
        return out


def format_duration(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3.5 h``; at least ``1 s`` ("about 0 s to go" read oddly)."""
    if seconds < 90:
        return f"{max(seconds, 1):.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def progress_key(model: str) -> str:
    """The store ``meta`` key of a model's progress record (changes at every checkpoint)."""
    return _KEY + model


def record_progress(store: PaperStore, model: str, rate: float, reached: str | None) -> None:
    """Remember a backlog run's measured rate and how far back it has embedded."""
    old = _read(store, model)
    value = {
        "rate": round(rate, 3),
        "reached": reached if reached is not None else old.get("reached"),
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "papers": store.count(),  # the reach holds for these papers (``parse_progress``)
    }
    store.set_meta(_KEY + model, json.dumps(value, sort_keys=True))


def read_progress(store: PaperStore, model: str, embedded: int, total: int) -> EmbeddingProgress:
    """The recorded rate and reach of ``model`` with the given counts."""
    return parse_progress(store.get_meta(_KEY + model), model, embedded, total)


def parse_progress(
    raw_json: str | None, model: str, embedded: int, total: int
) -> EmbeddingProgress:
    """:func:`read_progress` from the stored value itself (``doctor`` reads SQLite directly)."""
    raw = _parse(raw_json)
    rate, reached, at = raw.get("rate"), raw.get("reached"), raw.get("at")
    if raw.get("papers", total) != total:
        # Papers came or went since: new ones may be newer than the reach ("embedded down
        # to 1992-02" beside 100 new papers of this month not embedded), so it is not said.
        reached = None
    try:
        day = date.fromisoformat(reached) if isinstance(reached, str) else None
        when = datetime.fromisoformat(at) if isinstance(at, str) else None
    except ValueError:
        day = when = None
    return EmbeddingProgress(
        model, embedded, total, float(rate) if isinstance(rate, int | float) else None, day, when
    )


def _read(store: PaperStore, model: str) -> dict[str, object]:
    return _parse(store.get_meta(_KEY + model))


def _parse(raw: str | None) -> dict[str, object]:
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
