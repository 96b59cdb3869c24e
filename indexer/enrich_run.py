"""Where enrichment records come from: saved JSON files, or the OpenAlex and Semantic
Scholar APIs (politely: one request at a time with a pause, retries with backoff that
honour ``Retry-After``, ``mailto``, and an on-disk cache under the data directory)."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from papersift.core.errors import PapersiftError
from papersift.engine.atomic import write_json_atomic
from papersift.engine.datadir import DataDir
from papersift.indexer import openalex, semanticscholar
from papersift.indexer.enrich import EnrichReport, WorkRecord, apply_records
from papersift.indexer.fetch import Fetcher, FetchSettings
from papersift.indexer.identity_refresh import refresh_people

log = logging.getLogger(__name__)
BATCH = 200  # papers fetched between two writes


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


class _Cached:
    """GETs through the polite fetcher, keeping each (status, body) under ``root``."""

    def __init__(self, fetcher: Fetcher, root: Path | None) -> None:
        self.fetcher, self.root, self.hits = fetcher, root, 0

    def get(
        self, url: str, params: dict[str, str], parse: Callable[[int, bytes], WorkRecord | None]
    ) -> WorkRecord | None:
        path = None
        if self.root is not None:
            name = hashlib.sha256(f"{url}?{sorted(params.items())}".encode()).hexdigest()[:32]
            path = self.root / name[:2] / f"{name}.json"
            if path.is_file():
                saved = json.loads(path.read_text(encoding="utf-8"))
                self.hits += 1
                return parse(int(saved["status"]), saved["body"].encode("utf-8"))

        def keep(status: int, body: bytes) -> WorkRecord | None:
            record = parse(status, body)  # raises (and so is not cached) on errors
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                text = body.decode("utf-8", "replace")
                write_json_atomic(path, {"url": url, "status": status, "body": text})
            return record

        return self.fetcher.get(url, params, keep)


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
    requests made and the answers taken from the cache."""
    cfg, harvest = data.config.enrich, data.config.harvest
    settings = FetchSettings(
        timeout=harvest.timeout_seconds, retries=harvest.retries, delay=cfg.delay_seconds,
        mailto=cfg.mailto,
    )  # fmt: skip
    targets = _targets(data, arxiv_ids, limit)
    root = data.root / "enrich-cache" if cfg.cache else None
    total = EnrichReport()
    requests = hits = 0
    sources = [("openalex", cfg.openalex_url), ("s2", cfg.semanticscholar_url)]
    for name, base in sources:
        if not base:
            continue
        kw: dict[str, Any] = {"stop": stop} if sleep is None else {"sleep": sleep, "stop": stop}
        with Fetcher(settings, **kw) as fetcher:
            cached = _Cached(fetcher, None if root is None else root / name)
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
            hits += cached.hits
    data.sync_lexical()
    refresh_people(data)
    return total, requests, hits


def _fetch_one(
    cached: _Cached, source: str, base: str, arxiv_id: str, doi: str | None, mailto: str
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
