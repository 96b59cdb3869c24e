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
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from papersift import __version__
from papersift.core.config import Config
from papersift.core.errors import IndexVersionError, make_data_dir, not_a_folder
from papersift.core.resources import demo_import_hint
from papersift.engine.atomic import sweep_temp_files, write_json_atomic
from papersift.engine.graph import Graph
from papersift.engine.lexical import LexicalIndex
from papersift.engine.lexical_sync import LexicalSync
from papersift.engine.people import PEOPLE_SEQ, People
from papersift.engine.store import PaperStore
from papersift.engine.vector_sync import VectorSync
from papersift.engine.writer_lock import LOCK_NAME

# 2: researcher ids in the lexical index; 3: institutions (ROR ids); 4: the docid also as a
# raw text term (a list of 1,000 docids is 4x quicker to match as text than as integers),
# English stop words left out of title and abstract; 5: TeX accents read as letters and
# letters folded to ASCII in title and abstract (Schr\"odinger = Schrodinger); 6: title and
# abstract also unstemmed, for which forms of a word a paper holds (engine.word_forms).
SCHEMA_VERSION = 6
# Older versions whose store is current: only the lexical index is rebuilt, from the store.
LEXICAL_REBUILD_FROM = frozenset({3, 4, 5})
log = logging.getLogger(__name__)
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


def check_root(config: Config, *, create: bool) -> dict[str, Any] | None:
    """The manifest of the data directory of ``config``, or None for a new one (``create``);
    creates nothing, so a command can check before it takes the writer lock. Raises the
    one-line error for a file, a folder of something else, or no index (not ``create``)."""
    root = config.data_dir
    if root.exists() and not root.is_dir():
        raise not_a_folder(root)
    manifest = read_manifest(root)
    if manifest is None:
        if root.exists() and any(p.name != LOCK_NAME for p in root.iterdir()):
            raise IndexVersionError(
                f"{root} holds files but no {MANIFEST}: it is not a papersift data "
                f"directory (or was made by an older version); {_rebuild_hint(root)}"
            )
        if not create:
            raise IndexVersionError(_no_index(config))
    return manifest


def _no_index(config: Config) -> str:
    """Why there is no index, and what to do: the default data directory of the working
    directory is most likely not the one meant (the command was run from another folder)."""
    root = config.data_dir
    if config.data_dir_defaulted:
        return (
            f"no index at {root} (the default data directory: no config.toml here and "
            "PAPERSIFT_DATA_DIR is not set); use --config FILE or PAPERSIFT_DATA_DIR, or run "
            f"`papersift import FILE...` to start one here {demo_import_hint()}"
        )
    return f"no index at {root}; run `papersift import FILE...` first {demo_import_hint()}"


def _rebuild_hint(root: Path) -> str:
    return (
        f"move {root} aside (or point PAPERSIFT_DATA_DIR at a new folder) and rebuild with "
        "`papersift import FILE...` then `papersift index`"
    )


class DataDir(LexicalSync, VectorSync):
    """Opens (or creates) everything under ``config.data_dir``; checks the manifest first."""

    def __init__(
        self, config: Config, *, create: bool = True, graph_in_memory: bool = False
    ) -> None:
        """``graph_in_memory``: read the vector graph rather than map it (``engine.ann.read``),
        as the server does."""
        self.config = config
        self.graph_in_memory = graph_in_memory
        self.root = config.data_dir
        manifest = check_root(config, create=create)
        if manifest is None:
            make_data_dir(self.root)
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
        # A keyword index that held commits and is gone (deleted, lost with a disk) would
        # answer every search with nothing: built again from the store, as for a new schema.
        lost = (
            bool(int(self.store.get_meta("lexical_seq") or 0))
            and not (self.root / "lexical" / "meta.json").exists()
        )
        if lost:
            log.warning("%s: the keyword index is missing; rebuilding it from the store's %d "
                        "papers", self.root, self.store.count())  # fmt: skip
        elif rebuild_lexical:
            # Crash-safe: the manifest keeps the old version until the rebuild is committed.
            log.warning(
                "%s: rebuilding the keyword index for index schema %s (was %s) from the "
                "store's %d papers; this runs once",
                self.root, SCHEMA_VERSION, version, self.store.count(),
            )  # fmt: skip
        rebuild_lexical = rebuild_lexical or lost
        self.lexical_rebuilt = rebuild_lexical  # ``papersift doctor --fix`` need not again
        if rebuild_lexical:
            self.reset_lexical()
            shutil.rmtree(self.root / "lexical", ignore_errors=True)
        self.lexical = LexicalIndex(
            self.root / "lexical", title_boost=s.title_boost, author_boost=s.author_boost
        )
        self.people = People(self.store)
        self.lexical.researcher_docids = self.people.docids_of
        # The researcher tables as last seen: a search result counts researchers from them.
        self.people_generation = self.store.get_meta(PEOPLE_SEQ) or "0"
        self.graph = Graph(self.store)  # references and citations (enrichment writes them)
        self._init_vectors()  # models and vectors load on first use (engine.vector_sync)
        self._seen_seq = self.store.seq  # store changes the live indexes reflect
        self._seen_lexical = self._lexical_commits()  # lexical commits seen
        if rebuild_lexical:
            self._replay_lexical({})
            self.lexical.close_writer()
            self.write_manifest()
        if not (self.root / MANIFEST).exists():
            self.write_manifest()

    def refresh(self) -> bool:
        """Catch up with commits of another process (a CLI harvest or index run): reload the
        lexical searcher, load new vector segments, drop deleted papers' vectors. Cheap when
        nothing changed; returns whether anything did."""
        seq = self.store.seq
        vi = self._vectors
        changed = False
        if self._serving_changed() and self.update_serving_model():
            vi, changed = None, True  # the other model's vectors load on the next query
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
        changed |= self.graph.refresh()
        lexical_seq = self._lexical_commits()
        if lexical_seq != self._seen_lexical:
            self.lexical.reload()
            self._seen_lexical = lexical_seq
            changed = True
        return changed

    # -- researchers ---------------------------------------------------------------------

    def people_pending(self) -> int:
        """Papers changed since researcher identities were last brought up to date."""
        return self.store.changes_since(int(self.store.get_meta(PEOPLE_SEQ) or 0))

    # -- manifest ------------------------------------------------------------------------

    def write_manifest(self) -> None:
        data = dict(self.manifest)
        data.update(
            schema_version=SCHEMA_VERSION,
            papersift_version=__version__,
            papers=self.store.count(),
            updated=_now(),
        )
        emb = self._serving or self._indexing
        if emb is not None and (emb.loaded or emb.known_dim is not None):
            data.update(
                model_id=emb.model_id,
                dimension=emb.dim,
                embedded=self.store.embedded_count(emb.model_id),
            )
        write_json_atomic(self.root / MANIFEST, data)
        self.manifest = data

    def close(self) -> None:
        if self._vectors is not None:  # its graph check reads the store: let it finish
            self._vectors.wait_checked(timeout=30)
        self.lexical.close_writer()
        self.store.close()

    def __enter__(self) -> DataDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
