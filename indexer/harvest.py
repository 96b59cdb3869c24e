"""Checkpointed harvesting: OAI-PMH pages (and arXiv API lookups) applied to store + indexes.

Per page: the store takes the papers and deletions in its own transactions, the lexical
index commits and records the sequence it absorbed, then the checkpoint (the next
resumption token) is saved in the store's meta table. A crash anywhere is repaired on the
next run: ``sync_lexical`` replays what the lexical index missed and the checkpoint resumes
the list; a page applied twice changes nothing, as upserts are idempotent.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import date

from tqdm import tqdm

from papersift.core.config import Config
from papersift.core.paper import Paper
from papersift.core.wording import counted
from papersift.engine.datadir import DataDir
from papersift.engine.query import arxiv_id_in
from papersift.indexer.arxiv_api import fetch_ids
from papersift.indexer.build import _commit_lexical, index_backlog
from papersift.indexer.fetch import Fetcher, FetchSettings, HarvestError
from papersift.indexer.identity_refresh import refresh_people
from papersift.indexer.oai import NotOaiError, OaiError, OaiPage, parse_response

log = logging.getLogger(__name__)


@dataclass
class HarvestReport:
    pages: int = 0
    records: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    skipped: list[str] = field(default_factory=list)
    resumed: bool = False
    requests: int = 0

    def line(self) -> str:
        return (
            f"{counted(self.records, 'record')} in {counted(self.pages, 'page')}: "
            f"{self.added:,} added, {self.updated:,} updated, {self.unchanged:,} unchanged, "
            f"{self.deleted:,} deleted, {len(self.skipped):,} skipped"
            + (" (resumed)" if self.resumed else "")
        )

    def counts(self) -> dict[str, int]:
        return {
            "records": self.records,
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "deleted": self.deleted,
            "skipped": len(self.skipped),
        }


@dataclass
class Checkpoint:
    """Where a harvest of one (endpoint, format, set) stands; JSON in the store's meta."""

    window_from: str | None = None  # the window of the run in progress
    until: str | None = None
    token: str | None = None  # next page of the run in progress; None: no run in progress
    started: str | None = None  # responseDate of the run's first page
    next_from: str | None = None  # where the next run starts, once a run completed


@dataclass(frozen=True)
class SetWindow:
    """What the harvest of one set is about to ask for: records changed from ``start``
    (None: of any date) to ``until`` (None: now), and why it starts there."""

    set_spec: str | None  # None: all sets
    start: date | None
    until: date | None
    resuming: bool  # an interrupted run's list, from its resumption token
    reason: str  # why it starts at ``start``


def fetch_settings(config: Config) -> FetchSettings:
    h = config.harvest
    return FetchSettings(
        timeout=h.timeout_seconds,
        retries=h.retries,
        delay=h.delay_seconds,
        backoff=2 * h.delay_seconds,
        mailto=h.mailto,
    )


def _key(url: str, prefix: str, set_spec: str | None) -> str:
    return f"harvest {url} {prefix} {set_spec or '*'}"


def load_checkpoint(data: DataDir, url: str, prefix: str, set_spec: str | None) -> Checkpoint:
    raw = data.store.get_meta(_key(url, prefix, set_spec))
    return Checkpoint(**json.loads(raw)) if raw else Checkpoint()


def _save(data: DataDir, key: str, cp: Checkpoint) -> None:
    data.store.set_meta(key, json.dumps(asdict(cp), sort_keys=True))


def apply_papers(
    data: DataDir, papers: Sequence[Paper], deleted: Sequence[str], *, versioned: bool = True
) -> tuple[int, int, int, int]:
    """Upsert and delete in store and both indexes; (added, updated, unchanged, deleted).

    ``versioned=False`` (metadataPrefix ``arXiv``): the records carry no version number, so
    each takes the stored one and replaces the stored record when its content differs.
    """
    if not versioned and papers:
        stored = data.store.versions([p.arxiv_id for p in papers])
        papers = [replace(p, version=max(p.version, stored.get(p.arxiv_id, 1))) for p in papers]
    counts, changed = data.store.upsert(papers)
    if changed:
        data.lexical.upsert(changed)
    removed = data.store.delete(deleted) if deleted else []
    if removed:
        data.lexical.delete(removed)
        data.drop_vectors(removed)
    _commit_lexical(data)
    return counts.added, counts.updated, counts.unchanged, len(removed)


def _apply_page(data: DataDir, page: OaiPage, report: HarvestReport) -> None:
    added, updated, unchanged, deleted = apply_papers(
        data, page.papers, page.deleted, versioned=page.versioned
    )
    report.pages += 1
    report.records += len(page.papers) + len(page.deleted) + len(page.skipped)
    report.added += added
    report.updated += updated
    report.unchanged += unchanged
    report.deleted += deleted
    report.skipped.extend(page.skipped)
    for reason in page.skipped:  # the admin page counts them; the log says which and why
        log.warning("harvest: skipped record %s", reason)


def harvest(
    data: DataDir,
    *,
    url: str | None = None,
    date_from: date | None = None,
    until: date | None = None,
    progress: bool = False,
    stop: threading.Event | None = None,
    fetcher: Fetcher | None = None,
    announce: Callable[[SetWindow], None] | None = None,
) -> HarvestReport:
    """Harvest the configured sets from an OAI-PMH endpoint into the index, resumably.

    Without ``date_from`` a run continues where the last completed one ended (or, the first
    time, from the newest ``updated`` date in the store); an interrupted run resumes from
    its resumption token. Before a set's first request, ``announce`` is told what it asks
    for (else a log line says so). Raises HarvestError when the source keeps failing.
    """
    cfg = data.config.harvest
    endpoint = url or cfg.url
    sets: list[str | None] = [*cfg.sets.split()] or [None]
    report = HarvestReport()
    data.sync_lexical()  # finish whatever an interrupted run left behind
    own = fetcher is None
    fx = fetcher or Fetcher(fetch_settings(data.config), stop=stop)
    try:
        for set_spec in sets:
            _harvest_set(data, fx, endpoint, cfg.metadata_prefix, set_spec, date_from, until,
                         report, progress, stop, announce)  # fmt: skip
        refresh_people(data)  # researcher ids of the new papers (as after an import)
    finally:
        report.requests = fx.requests
        if own:
            fx.close()
        data.lexical.close_writer()  # release the writer lock for other processes
        data.write_manifest()
    return report


def _harvest_set(
    data: DataDir,
    fx: Fetcher,
    url: str,
    prefix: str,
    set_spec: str | None,
    date_from: date | None,
    until: date | None,
    report: HarvestReport,
    progress: bool,
    stop: threading.Event | None,
    announce: Callable[[SetWindow], None] | None = None,
) -> None:
    key = _key(url, prefix, set_spec)
    cp = load_checkpoint(data, url, prefix, set_spec)
    wanted_until = until.isoformat() if until else None
    resuming = (
        cp.token is not None
        and (date_from is None or date_from.isoformat() == cp.window_from)
        and wanted_until in (None, cp.until)
    )
    reason = "the interrupted run's window"
    if not resuming:
        newest = None if date_from or cp.next_from else data.store.newest_updated()
        start = date_from or _date(cp.next_from) or newest
        reason = (
            "as asked" if date_from else "where the last harvest ended" if cp.next_from
            else "the newest update date of a paper in the index" if newest
            else "the index holds no paper yet"
        )  # fmt: skip
        cp = Checkpoint(
            window_from=start.isoformat() if start else None,
            until=wanted_until,
            next_from=cp.next_from,
        )
    report.resumed = report.resumed or resuming
    fresh = {"verb": "ListRecords", "metadataPrefix": prefix}
    for name, value in (("from", cp.window_from), ("until", cp.until), ("set", set_spec)):
        if value:
            fresh[name] = value
    params = {"verb": "ListRecords", "resumptionToken": cp.token or ""} if resuming else fresh
    if announce is not None:
        announce(SetWindow(set_spec, _date(cp.window_from), _date(cp.until), resuming, reason))
    log.log(logging.DEBUG if announce else logging.INFO, "harvest %s %s: %s", url,
            set_spec or "all sets", params)  # fmt: skip
    with tqdm(unit="rec", desc=f"harvest {set_spec or 'all'}", disable=not progress) as bar:
        while True:
            if stop is not None and stop.is_set():
                raise HarvestError("harvest stopped; the next run resumes it")
            try:
                page = fx.get(url, params, parse_response)
            except OaiError as exc:
                if exc.code == "noRecordsMatch":
                    page = OaiPage()
                elif exc.code == "badResumptionToken" and resuming:
                    log.warning("resumption token expired; restarting the window %s", fresh)
                    params, resuming = fresh, False  # once: a fresh list's token must work
                    continue
                else:
                    raise
            except NotOaiError as exc:  # the message names what came back, and now where from
                raise NotOaiError(
                    f"{url} answered {exc}: is it an OAI-PMH endpoint? ([harvest] url or --url; "
                    "arXiv's is https://export.arxiv.org/oai2)"
                ) from None
            _apply_page(data, page, report)
            if cp.started is None and page.response_date is not None:
                cp.started = page.response_date.isoformat()
            if page.complete_size is not None:
                bar.total = page.complete_size
            bar.update(len(page.papers) + len(page.deleted) + len(page.skipped))
            log.info(
                "harvest page %d: %d papers, %d deleted; %s",
                report.pages, len(page.papers), len(page.deleted),
                "more to come" if page.token else "complete",
            )  # fmt: skip
            if page.token:
                cp.token = page.token
                _save(data, key, cp)
                params = {"verb": "ListRecords", "resumptionToken": page.token}
                continue
            if cp.until is None and cp.started is not None:
                cp.next_from = max(cp.next_from or "", cp.started)
            cp.token = None
            _save(data, key, cp)
            return


def _date(text: str | None) -> date | None:
    return date.fromisoformat(text) if text else None


def add_ids(
    data: DataDir, ids: Sequence[str], *, fetcher: Fetcher | None = None
) -> tuple[HarvestReport, list[str]]:
    """Fetch papers by arXiv id from the API and upsert them; also returns ids not found."""
    wanted: list[str] = []
    for raw in ids:
        arxiv_id = arxiv_id_in(raw)  # also arXiv:ID and abs/pdf URLs, as search reads them
        if arxiv_id is None:
            raise HarvestError(f"not an arXiv id: {raw!r}")
        wanted.append(arxiv_id)
    data.sync_lexical()
    own = fetcher is None
    fx = fetcher or Fetcher(fetch_settings(data.config))
    report = HarvestReport()
    try:
        api_url = data.config.harvest.api_url
        papers = fetch_ids(fx, api_url, list(dict.fromkeys(wanted)), report.skipped)
        for reason in report.skipped:
            log.warning("add: skipped record %s", reason)
        added, updated, unchanged, _ = apply_papers(data, papers, [])
        refresh_people(data)
        report.pages, report.records = 1, len(papers) + len(report.skipped)
        report.added, report.updated, report.unchanged = added, updated, unchanged
    finally:
        report.requests = fx.requests
        if own:
            fx.close()
        data.lexical.close_writer()
        data.write_manifest()
    found = {p.arxiv_id for p in papers}
    return report, [i for i in dict.fromkeys(wanted) if i not in found]


def reindex(data: DataDir, *, progress: bool = False, stop: threading.Event | None = None) -> int:
    """Index maintenance: repair the lexical index, work through the backlog (researcher
    identities, embeddings), fold vector segments, let Tantivy merge and write the keyword
    index as one segment if its papers are scattered; returns the papers embedded."""
    data.sync_lexical()
    _, done = index_backlog(data, progress=progress, stop=stop)
    if not (stop is not None and stop.is_set()):
        data.indexing_vectors.compact(data.store.text_hashes)
    data.lexical.close_writer()
    data.compact_lexical(progress=progress, stop=stop)
    data.write_manifest()
    return done
