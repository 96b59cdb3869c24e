"""The embedding backlog as a queue: changed papers first, then the rest newest first.

Order: papers harvested or added since the last import (their store ``seq`` is above the
``embed_priority_seq`` mark an import sets) jump the queue, most recent change first; then
every other paper without a vector of the model, by first-version date, newest first, then
docid. After an hour on a bulk snapshot the recent literature is covered, not 1991.

Both the in-process backlog (``indexer.build.embed_backlog``) and the cluster coordinator
(``indexer.embed_cluster``) take their batches from an :class:`EmbedQueue` and report each
checkpoint through :class:`EmbedRun`, so they embed in the same order and write the same
checkpoints and progress records.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from papersift.engine.embed_progress import format_duration, record_progress
from papersift.engine.store import PaperStore

log = logging.getLogger(__name__)

PRIORITY_SEQ = "embed_priority_seq"
LOG_EVERY = 2048  # papers between log lines when no progress bar is drawn
RATE_WINDOW = 600.0  # seconds of recent checkpoints the rate (and so the ETA) is taken over
_TOP = ("\uffff", 0)  # above every ISO date: the start of a newest-first pass

Row = tuple[int, str, str, str]  # docid, text, text hash, first-version date


def mark_imported(store: PaperStore) -> None:
    """Everything changed so far is bulk work (an import): it waits its turn by date."""
    store.set_meta(PRIORITY_SEQ, str(store.seq))


class EmbedQueue:
    """Hands out batches of papers still to embed with ``model``; never one in flight twice.

    A pass by date walks down from the newest paper with a cursor, so it reads each row
    once; when it runs dry it starts again from the top once, for papers imported behind
    it meanwhile. Not thread-safe: one coordinator takes and finishes batches.
    """

    def __init__(self, store: PaperStore, model: str, *, changed_only: bool = False) -> None:
        self.store = store
        self.model = model
        self.changed_only = changed_only  # a harvest's or add's own papers, not the rest
        self.in_flight: set[int] = set()
        self._cursor = _TOP
        self._restarted = False
        self.reached: str | None = None  # oldest first-version date written by the date pass
        self._dated: dict[int, str] = {}  # in-flight docids of the date pass -> their date

    def take(self, n: int) -> list[Row]:
        """Up to ``n`` papers to embed next (fewer only when the backlog is that short)."""
        rows = self._changed(n)
        if not rows and not self.changed_only:
            rows = self._newest(n)
            self._dated.update((r[0], r[3]) for r in rows)
        self.in_flight.update(r[0] for r in rows)
        return rows

    def finish(self, docids: list[int]) -> None:
        """These were written (or given up): no longer in flight."""
        for d in docids:
            self.in_flight.discard(d)
            day = self._dated.pop(d, None)
            if day is not None and (self.reached is None or day < self.reached):
                self.reached = day

    def _changed(self, n: int) -> list[Row]:
        mark = int(self.store.get_meta(PRIORITY_SEQ) or 0)
        seq = self.store.seq  # read first: a change committed after it is above it
        rows = self.store.backlog_changed(self.model, mark, n + len(self.in_flight))
        if not rows:
            if seq > mark:
                # Nothing changed after the mark waits any more: move it up, so the query
                # stays short however many harvests have been embedded since the import.
                self.store.set_meta(PRIORITY_SEQ, str(seq))
            return []
        return [r for r in rows if r[0] not in self.in_flight][:n]

    def _newest(self, n: int) -> list[Row]:
        while True:
            rows = self.store.backlog_newest(self.model, n + len(self.in_flight), self._cursor)
            fresh = [r for r in rows if r[0] not in self.in_flight][:n]
            if fresh:
                self._cursor = (fresh[-1][3], fresh[-1][0])
                return fresh
            if rows:  # all in flight: step past them
                self._cursor = (rows[-1][3], rows[-1][0])
                continue
            if self._restarted or self._cursor == _TOP:
                return []
            self._cursor, self._restarted = _TOP, True


@dataclass
class EmbedRun:
    """One run through the backlog: papers done, rate, ETA; reports each checkpoint.

    ``report`` is the one place progress is shown: it moves ``bar`` (a tqdm bar, or None)
    and, without a bar, logs a line every ``LOG_EVERY`` papers with the rate and ETA. The
    rate is that of the last ``RATE_WINDOW`` seconds (the whole run while it is younger):
    a days-long run's average since its start lags when the machine's load changes.
    """

    store: PaperStore
    model: str
    pending: int
    bar: object | None = None
    clock: Callable[[], float] = time.monotonic
    done: int = 0
    on_checkpoint: Callable[[EmbedRun], None] | None = None
    # (clock, done) at the start and at each checkpoint since the last one a whole window old.
    _marks: deque[tuple[float, int]] = field(default_factory=deque, init=False, repr=False)

    def __post_init__(self) -> None:
        self._marks.append((self.clock(), self.done))

    @property
    def rate(self) -> float:
        """Papers per second over the recent window."""
        since, done_then = self._marks[0]
        elapsed = self.clock() - since
        return (self.done - done_then) / elapsed if elapsed > 0 else 0.0

    @property
    def eta_seconds(self) -> float | None:
        rate = self.rate
        return max(0, self.pending - self.done) / rate if rate else None

    def checkpoint(self, n: int, queue: EmbedQueue) -> None:
        """``n`` more papers were written: record the rate and reach, report."""
        before = self.done
        self.done += n
        now = self.clock()
        self._marks.append((now, self.done))
        while now - self._marks[1][0] >= RATE_WINDOW:
            self._marks.popleft()  # the next mark still covers a whole window
        record_progress(self.store, self.model, self.rate, queue.reached)
        self.report(before)
        if self.on_checkpoint is not None:
            self.on_checkpoint(self)

    def report(self, before: int) -> None:
        if self.bar is not None:  # to the papers written (the caller may move it per batch)
            self.bar.update(self.done - self.bar.n)  # type: ignore[attr-defined]
            return
        if self.done // LOG_EVERY != before // LOG_EVERY or self.done >= self.pending:
            eta = self.eta_seconds
            log.info(
                "embedding: %d of %d papers done, %.1f papers/s%s",
                self.done, self.pending, self.rate,
                f", about {format_duration(eta)} to go" if eta else "",
            )  # fmt: skip
