"""Where enrichment records come from: saved JSON files, or the OpenAlex and Semantic
Scholar APIs (politely: one request at a time with a pause, retries with backoff that
honour ``Retry-After``, ``mailto``, and an on-disk cache under the data directory whose
answers expire, ``indexer.enrich_cache``)."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from papersift.core.errors import PapersiftError
from papersift.engine.datadir import DataDir
from papersift.indexer import openalex, semanticscholar
from papersift.indexer.enrich import EnrichReport, WorkRecord, apply_records
from papersift.indexer.enrich_cache import CachedFetcher, Expiry, Tally
from papersift.indexer.fetch import Fetcher, FetchSettings
from papersift.indexer.identity_refresh import refresh_people

log = logging.getLogger(__name__)
BATCH = 200  # papers fetched between two writes
# A source that answers 404 for this many papers of a run, and for none otherwise, is
# named as likely misconfigured; a few papers may all be too new for it to know them.
NOTHING_FOUND_AFTER = 20
SOURCES = {"openalex": ("OpenAlex", "openalex_url"),
           "s2": ("Semantic Scholar", "semanticscholar_url")}  # fmt: skip


def _parse_any(obj: Any) -> Iterator[WorkRecord]:
    if isinstance(obj, list):
        for item in obj:
            yield from _parse_any(item)
    elif isinstance(obj, dict):
        for key in ("results", "data"):  # OpenAlex lists, S2 search/bulk answers
            if isinstance(obj.get(key), list) and "id" not in obj and "paperId" not in obj:
                yield from _parse_any(obj[key])
                return
        if "paperId" in obj:
            yield semanticscholar.parse_paper(obj)
        elif str(obj.get("id", "")).rsplit("/", 1)[-1].startswith("W"):
            yield openalex.parse_work(obj)
        else:
            raise ValueError("neither an OpenAlex work nor a Semantic Scholar paper")


def read_files(paths: Sequence[Path]) -> list[WorkRecord]:
    """Records from saved responses: one object, an array, a list answer or JSON lines."""
    out: list[WorkRecord] = []
    for path in paths:
        if not path.is_file():
            raise PapersiftError(f"no such file: {path}")
        text = path.read_text(encoding="utf-8")
        try:
            objs = [json.loads(text)]
        except ValueError:
            try:
                objs = [json.loads(line) for line in text.splitlines() if line.strip()]
            except ValueError as exc:
                raise PapersiftError(f"{path}: not JSON or JSON lines ({exc})") from None
        try:
            for obj in objs:
                out.extend(_parse_any(obj))
        except (ValueError, AttributeError, TypeError) as exc:
            raise PapersiftError(f"{path}: {exc}") from None
    return out


def enrich_files(data: DataDir, paths: Sequence[Path]) -> EnrichReport:
    report = apply_records(data.store, read_files(paths), data.graph)
    data.sync_lexical()
    refresh_people(data)  # new author ids and affiliations join and place researchers
    return report


def enrich_online(
    data: DataDir,
    *,
    arxiv_ids: Sequence[str] = (),
    limit: int | None = None,
    progress: bool = False,
    sleep: Callable[[float], None] | None = None,
    stop: threading.Event | None = None,
) -> tuple[EnrichReport, int, int]:
    """Ask the APIs about these papers (default: every paper); returns the report, the
    requests made and the answers taken from the cache. A source that answers 404 to every
    one of many papers is named in the report's warnings: its URL is likely wrong, and
    "0 matched" alone did not say so."""
    cfg, harvest = data.config.enrich, data.config.harvest
    settings = FetchSettings(
        timeout=harvest.timeout_seconds, retries=harvest.retries, delay=cfg.delay_seconds,
        mailto=cfg.mailto,
    )  # fmt: skip
    expiry = Expiry.of_days(cfg.cache_days, cfg.not_found_days)
    targets = _targets(data, arxiv_ids, limit)
    root = data.root / "enrich-cache" if cfg.cache else None
    total = EnrichReport()
    requests = hits = 0
    for name, base in (("openalex", cfg.openalex_url), ("s2", cfg.semanticscholar_url)):
        if not base:
            continue
        kw: dict[str, Any] = {"stop": stop} if sleep is None else {"sleep": sleep, "stop": stop}
        with Fetcher(settings, **kw) as fetcher:
            cached = CachedFetcher(fetcher, None if root is None else root / name, expiry)
            bar = tqdm(targets, unit="paper", desc=name, disable=not progress)
            records: list[WorkRecord] = []
            for n, (arxiv_id, doi) in enumerate(bar, start=1):
                rec = _fetch_one(cached, name, base.rstrip("/"), arxiv_id, doi, cfg.mailto)
                if rec is not None:
                    records.append(replace_arxiv(rec, arxiv_id))
                if len(records) >= BATCH or n == len(targets):
                    _add(total, apply_records(data.store, records, data.graph))
                    records = []
            requests += fetcher.requests
            hits += cached.tally.cached
        total.not_found += cached.tally.not_found
        warning = _nothing_found(name, base, cached.tally)
        if warning:  # said by the caller: the CLI prints it, the job shows and logs it
            total.warnings.append(warning)
    data.sync_lexical()
    refresh_people(data)
    return total, requests, hits


def _nothing_found(source: str, base: str, tally: Tally) -> str | None:
    """The warning when ``source`` answered 404 for every paper of a run that asked about
    at least ``NOTHING_FOUND_AFTER`` (fewer may all be too new to be known)."""
    if tally.found or tally.asked < NOTHING_FOUND_AFTER:
        return None
    label, key = SOURCES[source]
    cache = f" ({tally.cached:,} answers from the cache)" if tally.cached else ""
    return (
        f"{label} answered 404 (not found) for all {tally.asked:,} papers asked about{cache}: "
        f"check [enrich] {key} ({base})"
    )


def _fetch_one(
    cached: CachedFetcher, source: str, base: str, arxiv_id: str, doi: str | None, mailto: str
) -> WorkRecord | None:
    if source == "openalex":
        params = {"mailto": mailto} if mailto else {}
        return cached.get(base + openalex.work_path(arxiv_id, doi), params, openalex.parse_response)
    params = {"fields": semanticscholar.FIELDS}
    url = base + semanticscholar.paper_path(arxiv_id, doi)
    return cached.get(url, params, semanticscholar.parse_response)


def replace_arxiv(rec: WorkRecord, arxiv_id: str) -> WorkRecord:
    """We asked for this paper by its id: the answer is about it even if it names no
    arXiv id (a journal DOI)."""
    from dataclasses import replace

    return rec if rec.arxiv_id == arxiv_id else replace(rec, arxiv_id=arxiv_id)


def _targets(
    data: DataDir, arxiv_ids: Sequence[str], limit: int | None
) -> list[tuple[str, str | None]]:
    out = data.store.ids_and_dois(arxiv_ids or None)
    return out[:limit] if limit else out


def _add(total: EnrichReport, part: EnrichReport) -> None:
    for key in ("records", "matched", "updated", "authors_matched", "ids_added",
                "id_conflicts", "affiliations", "affiliations_matched",
                "graph_updated"):  # fmt: skip
        setattr(total, key, getattr(total, key) + getattr(part, key))
    total.unmatched += part.unmatched
    total.skipped += part.skipped
