"""Building the indexes: import snapshot files into store + Tantivy, then the backlog.

Every step is restartable. An import commits the store per batch and hands the changed
papers to Tantivy, which commits every ``LEXICAL_COMMIT`` papers and at the end; after a
crash ``DataDir.sync_lexical`` replays what Tantivy had not committed. An import that left
the keyword index in several segments writes it again as one (``engine.lexical_rewrite``).
Into an index nothing was ever committed to (a first import), Tantivy gets every paper at
the end instead, in one segment. Keyword search works as soon as the import returns. The
backlog (``index_backlog``: ``papersift index``, and the server in the background) then
clusters researcher identities and embeds the papers. Embedding writes a checkpoint every
``chunk`` papers, so an interruption loses at most the chunk in flight.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from papersift.core.progress import Progress
from papersift.core.wording import counted
from papersift.engine.datadir import DataDir
from papersift.indexer.embed_queue import EmbedQueue, EmbedRun, mark_imported
from papersift.indexer.identity_refresh import refresh_people
from papersift.indexer.parse_worker import ParallelReader
from papersift.indexer.snapshot import SkippedLine

log = logging.getLogger(__name__)

IMPORT_BATCH = 2000
LEXICAL_COMMIT = 100_000
EMBED_CHUNK = 256


@dataclass
class ImportReport:
    read: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: list[SkippedLine] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"{counted(self.read, 'record')} read: {self.added:,} added, {self.updated:,} "
            f"updated, {self.unchanged:,} unchanged, {len(self.skipped):,} skipped"
        )


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
    data.sync_lexical(progress=progress)  # finish whatever an interrupted run left behind
    # Into an index nothing was committed to, Tantivy gets every paper at the end, in one
    # segment, rather than a segment per LEXICAL_COMMIT written again as one after.
    bulk = data.lexical_empty()

    def skipped(s: SkippedLine) -> None:
        report.skipped.append(s)
        if on_skip is not None:
            on_skip(s)
        else:  # e.g. the bootstrap import of `serve`: the log says what was skipped
            log.warning("import: skipped line %d: %s", s.line, s.reason)

    uncommitted = 0  # papers written to Tantivy since its last commit
    for path in paths:
        # Parsing runs in a child process for big files, beside the writes here.
        reader = ParallelReader(path, on_skip=skipped, limit=limit, batch=IMPORT_BATCH)
        # With a limit the records are the work (the first 100k of a 4 GB file end long
        # before its bytes do), or the share of the file read if that is further (a file
        # shorter than the limit); without one, the share of the file read.
        bar = (
            Progress(limit, f"import {path.name}", unit="paper", bar=progress, log=log,
                     leave=True)
            if limit is not None
            else Progress(reader.total_bytes, f"import {path.name}", unit="B", bar=progress,
                          log=log, unit_scale=True, leave=True)
        )  # fmt: skip
        in_file = 0
        with bar, reader:
            for batch in reader:
                report.read += len(batch)
                in_file += len(batch)
                counts, changed = data.store.upsert(batch)
                mark_imported(data.store)  # imported papers wait their turn by date
                report.added += counts.added
                report.updated += counts.updated
                report.unchanged += counts.unchanged
                if not bulk:
                    data.lexical.upsert(changed)
                    uncommitted += len(changed)
                    if uncommitted >= LEXICAL_COMMIT:
                        _commit_lexical(data)
                        uncommitted = 0
                if limit is not None:
                    share = reader.bytes_read / reader.total_bytes if reader.total_bytes else 0
                    bar.update(max(in_file, min(limit, round(share * limit))) - bar.done)
                else:
                    bar.update(reader.bytes_read - bar.done, papers=report.read)
    if bulk:
        data.sync_lexical(progress=progress)  # every paper, one segment
    else:
        _commit_lexical(data)
        data.lexical.close_writer()
        data.compact_lexical(progress=progress)  # one segment, not one per LEXICAL_COMMIT
    data.write_manifest()
    return report


def _commit_lexical(data: DataDir) -> None:
    """Commit Tantivy and record the store sequence it now reflects (import batches,
    harvest pages: the caller has written every change up to it)."""
    data.commit_lexical(data.store.seq)


def embed_backlog(
    data: DataDir,
    *,
    limit: int | None = None,
    progress: bool = False,
    stop: threading.Event | None = None,
    chunk: int = EMBED_CHUNK,
    cluster: str | None = None,
    changed_only: bool = False,
) -> int:
    """Embed papers whose current text has no vector of the configured model yet: changed
    papers first, then newest first (``indexer.embed_queue``); with ``changed_only`` only
    the changed ones (harvested or added since the last import: what ``harvest`` and ``add``
    brought in, not an import's backlog). With ``cluster`` (or ``[embedding] cluster``) the
    batches run on a Dask scheduler at that address."""
    address = data.config.embedding.cluster if cluster is None else cluster
    if address:
        from papersift.indexer.embed_cluster import embed_on_cluster

        return embed_on_cluster(
            data, address, limit=limit, progress=progress, stop=stop, changed_only=changed_only
        )
    embedder = data.indexing_embedder
    model = embedder.model_id
    pending = data.store.count() - data.store.embedded_count(model)
    if limit is not None:
        pending = min(pending, limit)
    queue = EmbedQueue(data.store, model, changed_only=changed_only)
    with tqdm(total=pending, unit="paper", desc="embed", disable=not progress) as bar:
        run = EmbedRun(data.store, model, pending, bar if progress else None)
        while run.done < pending and not (stop is not None and stop.is_set()):
            rows = queue.take(min(chunk, pending - run.done))
            if not rows:
                break
            # The bar moves per batch: per checkpoint it jumped from 0% to 85% (256 of 300).
            vecs = embedder.embed(
                [text for _, text, _, _ in rows], bar.update if progress else None
            )
            data.add_vectors([r[0] for r in rows], [r[2] for r in rows], vecs)
            queue.finish([r[0] for r in rows])
            run.checkpoint(len(rows), queue)
    finish_backlog(data, run.done, stopped=stop is not None and stop.is_set())
    return run.done


def finish_backlog(data: DataDir, done: int, *, stopped: bool) -> None:
    """After a backlog run: switch queries to the new model once it covers what the old one
    did, fold the checkpoints (unless stopped), write the manifest."""
    if done and not stopped:
        data.indexing_vectors.compact(data.store.text_hashes)
    data.update_serving_model()
    if done:
        data.write_manifest()


def embed_brought_in(
    data: DataDir, count: int, *, progress: bool = False, stop: threading.Event | None = None
) -> int:
    """Embed what a harvest or ``add`` brought in (``count``: the papers it added or
    updated): the changed part of the queue, never an import's backlog, which can be a day
    of work and is ``papersift index``'s or the server's embed job's."""
    if not count:
        return 0
    return embed_backlog(data, limit=count, progress=progress, stop=stop, changed_only=True)


def index_backlog(
    data: DataDir,
    *,
    limit: int | None = None,
    progress: bool = False,
    stop: threading.Event | None = None,
    cluster: str | None = None,
) -> tuple[int, int]:
    """What an import leaves for later: researcher identities, then embeddings (``limit``
    caps the papers embedded; ``cluster`` as for ``embed_backlog``). Returns (papers
    clustered, papers embedded)."""
    clustered = refresh_people(data, progress=progress).papers
    if stop is not None and stop.is_set():
        return clustered, 0
    done = embed_backlog(data, limit=limit, progress=progress, stop=stop, cluster=cluster)
    return clustered, done


def bootstrap_if_empty(
    data: DataDir, source: str, *, progress: bool = False
) -> ImportReport | None:
    """Import the configured bootstrap corpus when the store is empty (first start)."""
    if data.store.count() > 0 or source == "none":
        return None
    if source == "demo":
        from papersift.core.resources import demo_corpus_path

        path = demo_corpus_path()
    else:
        path = Path(source).expanduser()
        if not path.is_absolute():
            path = data.config.base_dir / path
    log.info("importing %s into the empty index at %s", path, data.root)
    return import_files(data, [path], progress=progress)
