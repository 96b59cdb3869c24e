"""Building the indexes: import snapshot files into store + Tantivy, embed the backlog.

Both steps are restartable. An import commits the store per batch; every
``LEXICAL_COMMIT`` changed papers (and at the end) it brings researcher identities up to
date and indexes the changed papers in Tantivy with their researcher ids, once each, via
``DataDir.sync_lexical``, which is also what repairs a crash in between.
Embedding writes a checkpoint every ``chunk`` papers, so an interruption loses at most
the chunk in flight.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from tqdm import tqdm

from engine.datadir import DataDir
from indexer.snapshot import SkippedLine, SnapshotReader
from papersift.paper import Paper

log = logging.getLogger(__name__)

IMPORT_BATCH = 2000
LEXICAL_COMMIT = 100_000
EMBED_CHUNK = 256
LOG_EVERY = 2048  # papers between log lines when no progress bar is drawn


@dataclass
class ImportReport:
    read: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: list[SkippedLine] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"{self.read} records read: {self.added} added, {self.updated} updated, "
            f"{self.unchanged} unchanged, {len(self.skipped)} skipped"
        )


def _batches(papers: Iterable[Paper], size: int) -> Iterator[list[Paper]]:
    it = iter(papers)
    while batch := list(islice(it, size)):
        yield batch


def import_files(
    data: DataDir,
    paths: Iterable[Path],
    *,
    limit: int | None = None,
    progress: bool = False,
    on_skip: Callable[[SkippedLine], None] | None = None,
) -> ImportReport:
    """Import arXiv snapshot files (plain, .gz or .xz); ``limit`` caps records per file."""
    report = ImportReport()
    data.sync_lexical()  # finish whatever an interrupted run left behind

    def skipped(s: SkippedLine) -> None:
        report.skipped.append(s)
        if on_skip is not None:
            on_skip(s)

    pending: dict[int, Paper] = {}  # changed papers not yet in Tantivy
    for path in paths:
        reader = SnapshotReader(path, on_skip=skipped)
        bar = tqdm(
            total=reader.total_bytes,
            unit="B",
            unit_scale=True,
            desc=f"import {path.name}",
            disable=not progress,
            leave=True,
        )
        papers: Iterable[Paper] = reader
        if limit is not None:
            papers = islice(reader, limit)
        with bar:
            for batch in _batches(papers, IMPORT_BATCH):
                report.read += len(batch)
                counts, changed = data.store.upsert(batch)
                report.added += counts.added
                report.updated += counts.updated
                report.unchanged += counts.unchanged
                pending.update(changed)
                if len(pending) >= LEXICAL_COMMIT:
                    data.sync_lexical(pending)  # identities, then Tantivy, then its commit
                    pending.clear()
                bar.update(reader.bytes_read - bar.n)
                bar.set_postfix(papers=report.read, refresh=False)
    data.refresh_people(pending)  # researcher ids for the new papers, then Tantivy
    data.lexical.close_writer()
    data.write_manifest()
    return report


def _commit_lexical(data: DataDir) -> None:
    """Commit Tantivy and record the store sequence it now reflects (harvest pages)."""
    seq = data.store.seq
    data.lexical.commit()
    data.store.set_meta("lexical_seq", str(seq))


def embed_backlog(
    data: DataDir,
    *,
    limit: int | None = None,
    progress: bool = False,
    stop: threading.Event | None = None,
    chunk: int = EMBED_CHUNK,
) -> int:
    """Embed papers whose current text has no vector of the configured model yet."""
    embedder = data.embedder
    model = embedder.model_id
    pending = data.store.count() - data.store.embedded_count(model)
    if limit is not None:
        pending = min(pending, limit)
    done = 0
    with tqdm(total=pending, unit="paper", desc="embed", disable=not progress) as bar:
        while done < pending and not (stop is not None and stop.is_set()):
            rows = data.store.backlog(model, min(chunk, pending - done))
            if not rows:
                break
            vecs = embedder.embed([text for _, text, _ in rows])
            data.add_vectors([d for d, _, _ in rows], [h for _, _, h in rows], vecs)
            done += len(rows)
            bar.update(len(rows))
            if not progress and done // LOG_EVERY != (done - len(rows)) // LOG_EVERY:
                log.info("embedding: %d of %d papers done", done, pending)
    if done:
        if not (stop is not None and stop.is_set()):
            data.vectors.compact(data.store.text_hashes)
        data.write_manifest()
    return done


def bootstrap_if_empty(
    data: DataDir, source: str, *, progress: bool = False
) -> ImportReport | None:
    """Import the configured bootstrap corpus when the store is empty (first start)."""
    if data.store.count() > 0 or source == "none":
        return None
    if source == "demo":
        from papersift.resources import demo_corpus_path

        path = demo_corpus_path()
    else:
        path = Path(source).expanduser()
        if not path.is_absolute():
            path = data.config.base_dir / path
    log.info("importing %s into the empty index at %s", path, data.root)
    return import_files(data, [path], progress=progress)
