"""Scheduled jobs inside ``serve`` (APScheduler): harvest, enrichment, embedding, maintenance.

Each job runs the same function as its CLI command (``papersift harvest``, ``papersift
index``, ``papersift reindex``), so a system cron can call those instead. One run of a kind
at a time: a run that would overlap the one in progress is skipped and logged. A refresh
job picks up papers another process committed (``SearchEngine.refresh``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Literal

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.interval import IntervalTrigger

from papersift.core.config import Config
from papersift.core.cron import cron_trigger as crontab_trigger
from papersift.core.errors import ConfigError, PapersiftError
from papersift.engine.search import SearchEngine
from papersift.engine.writer_lock import WriterBusy, holder, writer_lock

log = logging.getLogger(__name__)

JOBS = ("harvest", "enrich", "embed", "maintenance", "digest")
# Jobs that write only members.sqlite: they need not wait for the papers' writer lock.
NO_WRITER = frozenset({"digest"})
# A job that finds the data directory's writer lock held waits this long, then is skipped
# (logged at INFO; the next run tries again): short, so a long import does not pile jobs up.
WRITER_WAIT = 10.0
# A job that needs the writer while this server's embed job holds it (a first embedding can
# take a day) asks it to pause at its next checkpoint (256 papers, ~10 s on 2 cores), waits
# up to this long for the writer, and starts the embed job again when done.
PAUSE_WAIT = 180.0
Counts = dict[str, int]  # what a run did, by name: the admin page and the log show them


@dataclass
class JobStatus:
    name: str
    schedule: str  # the cron expression; empty: only run on demand
    running: bool = False
    last_start: datetime | None = None
    last_end: datetime | None = None
    # ok, error, skipped (writer busy), stopped (shut down), paused (for another job); None
    # while running
    outcome: str | None = None
    # the error, a warning of a run that went through (enrich: a source that found nothing),
    # or who held the writer when skipped; empty while running
    message: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    runs: int = 0
    skipped: int = 0


@dataclass(frozen=True)
class NotStarted:
    """Why ``JobRunner.trigger`` did not start a run."""

    # its own run in progress; another job writes; the job cannot run here (digest, no mail)
    reason: Literal["running", "writer", "off"]
    message: str


def cron_trigger(name: str, expr: str) -> BaseTrigger:
    try:
        return crontab_trigger(expr)
    except ValueError as exc:
        raise ConfigError(
            f"config: [schedule] {name} is not a cron expression: {expr!r} ({exc})"
        ) from None


class JobRunner:
    """Owns the scheduler and the status of each job; thread-safe."""

    def __init__(
        self,
        engine: SearchEngine,
        config: Config,
        *,
        triggers: Mapping[str, BaseTrigger] | None = None,
        progress: bool = False,
        today: Callable[[], date] | None = None,
    ) -> None:
        self.engine = engine
        self.today = today  # the digest job's "today" (UTC); tests give a day with papers
        self.progress = progress  # the embed job draws a progress bar (serve on a terminal)
        self.data = engine.data
        self.config = config
        self.stop = threading.Event()
        self._embed_stop = threading.Event()  # set: the embed job stops at a checkpoint
        crons = {name: str(getattr(config.schedule, name)).strip() for name in JOBS}
        if not config.mail.host:  # no mail: the digest job has nothing to send with
            crons["digest"] = ""
        self._triggers: dict[str, BaseTrigger] = {
            name: cron_trigger(name, expr) for name, expr in crons.items() if expr
        }
        self._triggers.update(triggers or {})
        self.status = {name: JobStatus(name, crons[name]) for name in JOBS}
        self._locks = {name: threading.Lock() for name in JOBS}
        self._status_lock = threading.Lock()
        self._warmed: object = None  # the keyword index generation whose radar window is kept
        self._bodies: dict[str, Callable[[], Counts | tuple[Counts, str]]] = {
            "harvest": self._harvest,
            "enrich": self._enrich,
            "embed": self._embed,
            "maintenance": self._maintenance,
            "digest": self._digest,
        }
        # max_instances=2 lets an overlapping run reach run(), which skips and records it.
        self._scheduler = BackgroundScheduler(
            timezone=UTC,
            job_defaults={"coalesce": True, "max_instances": 2, "misfire_grace_time": 600},
        )

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> None:
        for name, trigger in self._triggers.items():
            self._scheduler.add_job(self.run, trigger, args=[name], id=name, name=name)
        self._scheduler.add_job(
            self._refresh,
            IntervalTrigger(seconds=self.config.schedule.refresh_seconds, timezone=UTC),
            id="refresh",
            name="refresh",
        )
        self._scheduler.start()
        log.info("scheduler started: %s", ", ".join(sorted(self._triggers)) or "no cron jobs")

    def shutdown(self, wait: bool = True) -> None:
        """Ask running jobs to stop at their next checkpoint and (``wait``) let them."""
        self.stop.set()
        self._embed_stop.set()
        if self._scheduler.running:
            self._scheduler.shutdown(wait=wait)
        if wait:
            for lock in self._locks.values():  # jobs started by trigger() run in own threads
                if lock.acquire(timeout=30):
                    lock.release()

    # -- running ------------------------------------------------------------------------

    def run(self, name: str) -> bool:
        """Run job ``name`` now in this thread; False if a run of it is in progress."""
        if name not in self._bodies:
            raise KeyError(name)
        lock = self._locks[name]
        status = self.status[name]
        if not lock.acquire(blocking=False):
            with self._status_lock:
                status.skipped += 1
            log.info("job=%s event=skipped reason=previous-run-in-progress", name)
            return False
        start = time.monotonic()
        pausing = False
        try:
            writing = ExitStack()
            try:
                if name not in NO_WRITER:
                    pausing = self._pause_embed(name)
                    wait = PAUSE_WAIT if pausing else WRITER_WAIT
                    writing.enter_context(writer_lock(self.data.root, f"job {name}", wait=wait))
            except WriterBusy as exc:  # a CLI run or another job writes: try at the next run
                with self._status_lock:
                    status.skipped += 1
                    status.outcome, status.message = "skipped", str(exc)
                log.info("job=%s event=skipped reason=writer-busy holder=%r", name,
                         holder(self.data.root))  # fmt: skip
                return False
            with self._status_lock:  # the last run's outcome and message describe no run now
                status.running, status.last_start = True, datetime.now(UTC)
                status.outcome, status.message, status.counts = None, "", {}
            log.info("job=%s event=started", name)
            try:
                done = self._bodies[name]()
                counts, message = done if isinstance(done, tuple) else (done, "")
                # Asked to stop (the server shuts down) or to pause: it ended at a checkpoint.
                outcome = "ok"
                if self.stop.is_set():
                    outcome = "stopped"
                elif name == "embed" and self._embed_stop.is_set():
                    outcome = "paused"
                if message:  # shown beside the outcome on the admin page
                    log.warning("job=%s event=warning message=%r", name, message)
            except PapersiftError as exc:
                counts, outcome, message = {}, "error", str(exc)
                log.error("job=%s event=failed error=%r", name, message)
            except Exception as exc:  # logged with its traceback; the server keeps running
                counts, outcome, message = {}, "error", f"{type(exc).__name__}: {exc}"
                log.exception("job=%s event=failed", name)
            finally:
                writing.close()
            with self._status_lock:
                status.running, status.last_end = False, datetime.now(UTC)
                status.outcome, status.message, status.counts = outcome, message, counts
                status.runs += 1
            pairs = " ".join(f"{k}={v}" for k, v in counts.items())
            log.info(
                "job=%s event=finished outcome=%s seconds=%.1f %s",
                name, outcome, time.monotonic() - start, pairs,
            )  # fmt: skip
            self.engine.refresh()
            return True
        finally:
            lock.release()
            if pausing and not self.stop.is_set():  # the paused embedding goes on
                self._embed_stop.clear()
                self.trigger("embed")

    def _pause_embed(self, name: str) -> bool:
        """Ask this server's embed job, if it runs, to stop at its next checkpoint so job
        ``name`` can have the writer; whether it was asked."""
        with self._status_lock:
            if name == "embed" or not self.status["embed"].running:
                return False
        self._embed_stop.set()
        log.info("job=embed event=pausing reason=%s", name)
        return True

    def trigger(self, name: str) -> NotStarted | None:
        """Start job ``name`` in the background now; None if started, else why not.

        Not started: the job cannot run here (the digest without mail), a run of it is in
        progress, or another job of this server holds the writer lock (the run would wait
        for it and then be skipped). A writer in another process cannot be seen without
        taking its lock: the run starts, and if it finds the lock still held it ends as
        ``skipped`` naming the holder.
        """
        if name not in self._bodies:
            raise KeyError(name)
        if name == "digest" and not self.config.mail.host:
            from papersift.indexer.digest_run import MAIL_OFF_SENTENCE

            return NotStarted("off", MAIL_OFF_SENTENCE)
        if self._locks[name].locked():
            with self._status_lock:
                self.status[name].skipped += 1
            log.info("job=%s event=skipped reason=previous-run-in-progress", name)
            return NotStarted("running", f"A run of {name} is in progress; this one was skipped.")
        writer = self._writing(name)
        if writer is not None:
            log.info("job=%s event=not-started reason=writer-busy holder=%r", name, writer)
            message = f"{writer}; the {name} run was not started. Try again when it finishes."
            return NotStarted("writer", message)
        threading.Thread(target=self.run, args=[name], name=f"job-{name}", daemon=True).start()
        return None

    def _writing(self, name: str) -> str | None:
        """Which other job of this server writes the data directory now (None: none does)."""
        if name in NO_WRITER:
            return None
        with self._status_lock:
            for other, s in self.status.items():
                # The embed job pauses for others (``_pause_embed``): it is no obstacle.
                if other not in (name, "embed") and other not in NO_WRITER and s.running:
                    since = _iso(s.last_start) or "?"
                    return f"The {other} job is writing to the data directory (since {since})"
        return None

    def _harvest(self) -> dict[str, int]:
        from papersift.indexer.build import embed_brought_in
        from papersift.indexer.harvest import harvest

        report = harvest(self.data, stop=self.stop)
        counts = report.counts()
        # Its own papers, as the command does: the embed job works through the rest.
        counts["embedded"] = embed_brought_in(
            self.data, report.added + report.updated, stop=self.stop
        )
        return counts

    def _enrich(self) -> tuple[Counts, str]:
        from papersift.indexer.enrich_run import enrich_online

        report, requests, cached = enrich_online(self.data, stop=self.stop)
        self._refresh()
        counts = {
            "updated": report.updated, "matched": report.matched, "requests": requests,
            "cached": cached, "not_found": report.not_found,
        }  # fmt: skip
        return counts, "; ".join(report.warnings)

    def _embed(self) -> dict[str, int]:
        from papersift.indexer.build import index_backlog

        clustered, embedded = index_backlog(
            self.data, stop=self._embed_stop, progress=self.progress
        )
        return {"clustered": clustered, "embedded": embedded}

    def _maintenance(self) -> dict[str, int]:
        from papersift.indexer.harvest import reindex

        return {"embedded": reindex(self.data, stop=self.stop)}

    def _digest(self) -> dict[str, int]:
        from papersift.indexer.digest_run import run_digests

        report = run_digests(self.engine, self.config, today=self.today() if self.today else None)
        if report.error:  # logged once by run(); nothing unsent was recorded: next run retries
            raise PapersiftError(report.error)
        return report.counts()

    def _refresh(self) -> None:
        try:
            if self.engine.refresh():
                log.info("job=refresh event=finished outcome=ok changed=1")
        except Exception:  # a failed refresh is retried at the next interval
            log.exception("job=refresh event=failed")
        self._warm_radar()

    def _warm_radar(self) -> None:
        """Once per keyword-index generation, analyse the radar's window before a member's
        home page has to (``engine.radar.warm``); until someone would ask, only check that
        at each refresh."""
        from papersift.engine.radar import warm

        generation = self.engine.data.lexical.generation
        if generation == self._warmed or self.stop.is_set():
            return
        start = time.monotonic()
        try:
            papers = warm(self.engine, self.config.lab)
        except Exception:  # the first request will analyse it instead
            log.exception("job=warm-radar event=failed")
            return
        if papers is not None:
            self._warmed = generation
        if papers:
            log.info(
                "job=warm-radar event=finished papers=%d seconds=%.1f",
                papers, time.monotonic() - start,
            )  # fmt: skip

    # -- status -------------------------------------------------------------------------

    def next_run(self, name: str) -> datetime | None:
        job = self._scheduler.get_job(name) if self._scheduler.running else None
        return None if job is None else job.next_run_time

    def snapshot(self) -> dict[str, Any]:
        """Everything the admin page and API show."""
        progress = self.data.embedding_progress(self.data.indexing_embedder.model_id)
        papers, embedded = progress.total, progress.embedded
        jobs = []
        with self._status_lock:
            for name in JOBS:
                s = self.status[name]
                jobs.append(
                    {
                        "name": name,
                        "schedule": s.schedule,
                        "running": s.running,
                        "last_start": _iso(s.last_start),
                        "last_end": _iso(s.last_end),
                        "outcome": s.outcome,
                        "message": s.message,
                        "counts": dict(s.counts),
                        "runs": s.runs,
                        "skipped": s.skipped,
                        "next_run": _iso(self.next_run(name)),
                    }
                )
        return {
            "papers": papers,
            "embedded": embedded,
            "embedding_backlog": papers - embedded,
            "embedding": progress.json(),
            "embedding_line": progress.line(),
            "scheduler_running": bool(self._scheduler.running),
            "jobs": jobs,
        }


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat(timespec="seconds")
