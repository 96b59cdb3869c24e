"""The data directory: one storage boundary for the store, both indexes and the manifest.

Layout::

    manifest.json       schema version, model id and dimension, counts (plain JSON)
    papers.sqlite       the source of truth
    lexical/            the Tantivy index
    vectors/<model>/    embedding checkpoints of one model (seg-*.npz)
    models/             the optimised graph of the embedding model (built once)
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.atomic import sweep_temp_files, write_json_atomic
from engine.embed import Embedder
from engine.lexical import LexicalIndex
from engine.model_files import resolve_model_files
from engine.people import PEOPLE_SEQ, People
from engine.store import PaperStore
from engine.vectors import VectorIndex, model_dir_name
from engine.writer_lock import LOCK_NAME
from papersift import __version__
from papersift.config import Config
from papersift.errors import IndexVersionError
from papersift.paper import Paper

if TYPE_CHECKING:
    from indexer.identity_refresh import IdentityReport

# 2: researcher ids in the lexical index; 3: institutions (ROR ids); 4: the docid also as a
# raw text term (a list of 1,000 docids is 4x quicker to match as text than as integers),
# English stop words left out of title and abstract.
SCHEMA_VERSION = 4
# Older versions whose store is current: only the lexical index is rebuilt, from the store.
LEXICAL_REBUILD_FROM = frozenset({3})
log = logging.getLogger(__name__)
# Papers whose researcher identities one transaction brings up to date.
PEOPLE_SLICE = 100_000
MANIFEST = "manifest.json"


def read_manifest(root: Path) -> dict[str, Any] | None:
    path = root / MANIFEST
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise IndexVersionError(f"{path} is unreadable ({exc}); {_rebuild_hint(root)}") from None
    if not isinstance(data, dict):
        raise IndexVersionError(f"{path} is not a papersift manifest; {_rebuild_hint(root)}")
    return data


def _rebuild_hint(root: Path) -> str:
    return (
        f"move {root} aside (or point PAPERSIFT_DATA_DIR at a new folder) and rebuild with "
        "`papersift import FILE...` then `papersift index`"
    )


class DataDir:
    """Opens (or creates) everything under ``config.data_dir``; checks the manifest first."""

    def __init__(self, config: Config, *, create: bool = True) -> None:
        self.config = config
        self.root = config.data_dir
        manifest = read_manifest(self.root)
        if manifest is None:
            if self.root.exists() and any(p.name != LOCK_NAME for p in self.root.iterdir()):
                raise IndexVersionError(
                    f"{self.root} holds files but no {MANIFEST}: it is not a papersift data "
                    f"directory (or was made by an older version); {_rebuild_hint(self.root)}"
                )
            if not create:
                raise IndexVersionError(
                    f"no index at {self.root}; run `papersift import FILE...` first"
                )
            self.root.mkdir(parents=True, exist_ok=True)
            manifest = {"schema_version": SCHEMA_VERSION, "created": _now()}
        version = manifest.get("schema_version")
        rebuild_lexical = version in LEXICAL_REBUILD_FROM
        if version != SCHEMA_VERSION and not rebuild_lexical:
            raise IndexVersionError(
                f"{self.root} was built with index schema version {version}, this papersift "
                f"{__version__} reads version {SCHEMA_VERSION}; {_rebuild_hint(self.root)}"
            )
        self.manifest = manifest
        sweep_temp_files(self.root)  # what a killed writer left an hour or more ago
        s = config.search
        self.store = PaperStore(self.root / "papers.sqlite")
        if rebuild_lexical:
            # Crash-safe: the manifest keeps the old version until the rebuild is committed.
            log.warning(
                "%s: rebuilding the keyword index for index schema %s (was %s) from the "
                "store's %d papers; this runs once",
                self.root, SCHEMA_VERSION, version, self.store.count(),
            )  # fmt: skip
            self.store.set_meta("lexical_seq", "0")
            shutil.rmtree(self.root / "lexical", ignore_errors=True)
        self.lexical = LexicalIndex(
            self.root / "lexical", title_boost=s.title_boost, author_boost=s.author_boost
        )
        self.people = People(self.store)
        self.lexical.researcher_docids = self.people.docids_of
        # The researcher tables as last seen: a search result counts researchers from them.
        self.people_generation = self.store.get_meta(PEOPLE_SEQ) or "0"
        self._embedder: Embedder | None = None
        self._vectors: VectorIndex | None = None
        self._lock = threading.Lock()
        self._seen_seq = self.store.seq  # store changes the live indexes reflect
        self._seen_lexical = self.store.get_meta("lexical_seq")  # lexical commits seen
        if rebuild_lexical:
            self._replay_lexical({})
            self.lexical.close_writer()
            self.write_manifest()
        if not (self.root / MANIFEST).exists():
            self.write_manifest()

    # -- embedding model and vectors -----------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        """The configured model, loaded on first use."""
        with self._lock:
            if self._embedder is None:
                e = self.config.embedding
                model, tok = resolve_model_files(self.config)
                self._embedder = Embedder(
                    model,
                    tok,
                    max_length=e.max_length,
                    batch_size=e.batch_size,
                    threads=e.threads,
                    cache_dir=(self.root / "models") if e.float32_cache else None,
                    model_id=e.model_id or None,
                )
            return self._embedder

    @property
    def vectors(self) -> VectorIndex:
        """The vector index of the configured model, loaded on first use."""
        emb = self.embedder
        with self._lock:
            if self._vectors is None:
                s = self.config.search
                vi = VectorIndex(
                    self.root / "vectors" / model_dir_name(emb.model_id),
                    emb.dim,
                    ann_above=s.ann_above,
                    ann_ef=s.ann_ef,
                    exact_below=s.exact_below,
                )
                vi.load(self.store.text_hashes)
                self._vectors = vi
            return self._vectors

    @property
    def vectors_generation(self) -> int:
        """Changes whenever the loaded vectors change (-1 before they are loaded)."""
        vi = self._vectors
        return vi.generation if vi is not None else -1

    def refresh_vectors(self) -> int:
        """Pick up checkpoints written by another process; returns vectors added."""
        if self._vectors is None:
            return 0
        return self._vectors.load_new(self.store.text_hashes)

    def add_vectors(self, docids: list[int], hashes: list[str], vecs: np.ndarray) -> None:
        """Checkpoint a batch of new vectors: segment file, then store, then live index."""
        ids = np.asarray(docids, np.int64)
        vi = self.vectors
        path = vi.write_segment(ids, hashes, vecs)
        self.store.mark_embedded(self.embedder.model_id, docids, hashes)
        now = self.store.text_hashes(docids)  # a text may have changed while it was embedded
        live = np.fromiter((now.get(d) == h for d, h in zip(docids, hashes, strict=True)), bool)
        vi.add(ids[live], vecs[live])
        vi.mark_loaded(path)

    def drop_vectors(self, docids: Sequence[int]) -> None:
        """Remove deleted papers from the live vector index (segments are filtered on load)."""
        if self._vectors is not None and len(docids):
            self._vectors.remove(np.asarray(docids, np.int64))

    def refresh(self) -> bool:
        """Catch up with commits of another process (a CLI harvest or index run): reload the
        lexical searcher, load new vector segments, drop deleted papers' vectors. Cheap when
        nothing changed; returns whether anything did."""
        seq = self.store.seq
        vi = self._vectors
        changed = False
        if vi is not None and any(p.name not in vi._loaded for p in vi.segments()):
            self.refresh_vectors()  # reads the store's embedded set: only when worth it
            changed = True
        if seq != self._seen_seq:
            dead = self.store.tombstones_since(self._seen_seq)
            self.drop_vectors([d for d, _ in dead])
            self._seen_seq = seq
            changed = True
        people_seq = self.store.get_meta(PEOPLE_SEQ) or "0"
        if people_seq != self.people_generation:
            self.people_generation = people_seq
            changed = True
        lexical_seq = self.store.get_meta("lexical_seq")  # set only after a lexical commit
        if lexical_seq != self._seen_lexical:
            self.lexical.reload()
            self._seen_lexical = lexical_seq
            changed = True
        return changed

    # -- lexical consistency -------------------------------------------------------------

    def sync_lexical(self, known: Mapping[int, Paper] | None = None) -> int:
        """Index in Tantivy the store changes it has not absorbed (an import's new papers, or
        what a crash left out). ``known`` may hold current records of changed papers (saves
        decoding them again); returns the documents written or deleted."""
        return self._replay_lexical(known or {})

    def refresh_people(
        self, known: Mapping[int, Paper] | None = None, *, progress: bool = False
    ) -> IdentityReport:
        """Bring researcher identities up to date with the papers changed since the last
        run (an import's or a harvest's), ``PEOPLE_SLICE`` papers per transaction so a
        big backlog neither holds every paper in memory nor loses its work to a crash.
        ``known`` as for ``sync_lexical``."""
        from tqdm import tqdm

        from indexer.identity_refresh import IdentityReport, refresh_identities

        total = IdentityReport()
        pending = self.people_pending()
        with tqdm(total=pending, unit="paper", desc="researchers", disable=not progress) as bar:
            while True:
                r = refresh_identities(self.store, known, self.config.lab, limit=PEOPLE_SLICE)
                total += r
                bar.update(min(r.papers, bar.total - bar.n))
                if r.papers < PEOPLE_SLICE:
                    break
        self.people_generation = self.store.get_meta(PEOPLE_SEQ) or "0"
        return total

    def people_pending(self) -> int:
        """Papers changed since researcher identities were last brought up to date."""
        return self.store.changes_since(int(self.store.get_meta(PEOPLE_SEQ) or 0))

    def _replay_lexical(self, known: Mapping[int, Paper]) -> int:
        done = int(self.store.get_meta("lexical_seq") or 0)
        target = self.store.seq
        if done >= target:
            return 0
        n = 0
        docids = [d for d, _ in self.store.changes_after(done)]
        for i in range(0, len(docids), 5000):
            chunk = docids[i : i + 5000]
            decoded = self.store.get([d for d in chunk if d not in known])
            self.lexical.upsert(
                [
                    (d, known[d] if d in known else decoded[d])
                    for d in chunk
                    if d in known or d in decoded
                ]
            )
            n += len(chunk)
        dead = self.store.tombstones_since(done)
        if dead:
            self.lexical.delete([d for d, _ in dead])
            n += len(dead)
        self.lexical.commit()
        self.store.set_meta("lexical_seq", str(target))
        return n

    # -- manifest ------------------------------------------------------------------------

    def write_manifest(self) -> None:
        data = dict(self.manifest)
        data.update(
            schema_version=SCHEMA_VERSION,
            papersift_version=__version__,
            papers=self.store.count(),
            updated=_now(),
        )
        if self._embedder is not None:
            data.update(
                model_id=self._embedder.model_id,
                dimension=self._embedder.dim,
                embedded=self.store.embedded_count(self._embedder.model_id),
            )
        write_json_atomic(self.root / MANIFEST, data)
        self.manifest = data

    def close(self) -> None:
        self.lexical.close_writer()
        self.store.close()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
