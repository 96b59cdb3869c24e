"""Progress of a long step: a tqdm bar on a terminal, else a log line now and then with
the rate and the time left, so a log file or ``journalctl`` shows how far it got."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from types import TracebackType

from tqdm import tqdm

LOG_SECONDS = 30.0  # between log lines when there is no bar


def duration(seconds: float) -> str:
    """``75`` -> ``1 min 15 s``, ``5400`` -> ``1 h 30 min``: how long, for a person."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s" if s < 600 else f"{round(s / 60)} min"
    return f"{s // 3600} h {s % 3600 // 60} min"


class Progress:
    """``update(n)`` as work gets done. ``total`` and ``unit`` describe the work; ``scale``
    turns units into what the log line counts (bytes of a file count as percent only)."""

    def __init__(
        self,
        total: int,
        desc: str,
        *,
        unit: str,
        bar: bool,
        log: logging.Logger,
        every: float = LOG_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        **tqdm_args: object,
    ) -> None:
        self.total, self.desc, self.unit, self.log, self.every = total, desc, unit, log, every
        self.clock = clock
        self.done = 0
        self.start = self.last = clock()
        self.bar = tqdm(total=total, desc=desc, unit=unit, disable=not bar, **tqdm_args)
        self.logging = not bar

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()

    @property
    def rate(self) -> float:
        """Units per second since the start."""
        elapsed = self.clock() - self.start
        return self.done / elapsed if elapsed > 0 else 0.0

    def line(self) -> str:
        """``embed: 2,048 of 6,189 papers (33%), 9.1 papers/s, about 7 min 35 s left``."""
        pct = 100 * self.done / self.total if self.total else 100.0
        rate = self.rate
        text = f"{self.desc}: {self.done:,} of {self.total:,} {self.unit}s ({pct:.0f}%)"
        if self.unit == "B":  # a file read: the size says little, the share does
            text = f"{self.desc}: {pct:.0f}% read"
        elif rate > 0:
            text += f", {rate:,.1f} {self.unit}s/s"
        if rate > 0 and self.done < self.total:
            text += f", about {duration((self.total - self.done) / rate)} left"
        return text

    def update(self, n: int, **postfix: object) -> None:
        self.done += n
        self.bar.update(n)
        if postfix:
            self.bar.set_postfix(refresh=False, **postfix)
        now = self.clock()
        if self.logging and now - self.last >= self.every and self.done < self.total:
            self.last = now
            self.log.info("%s", self.line())

    def note(self, text: str) -> None:
        """Say what the step is doing that its count does not show (a final write). In the
        log only for a step long enough to have logged its progress: after a short one (an
        import of 50 papers) the line was noise without -v."""
        self.bar.set_postfix_str(text, refresh=True)
        if self.logging:
            long = self.clock() - self.start >= self.every
            self.log.log(logging.INFO if long else logging.DEBUG, "%s: %s", self.desc, text)

    def close(self) -> None:
        self.bar.close()
