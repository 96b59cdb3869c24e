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
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from papersift import __version__
from papersift.core.config import Config
from papersift.core.errors import IndexVersionError, PapersiftError, make_data_dir, not_a_folder
from papersift.core.resources import demo_import_hint
from papersift.engine.atomic import sweep_temp_files, write_json_atomic
from papersift.engine.embed import Embedder, default_model_id
from papersift.engine.embed_progress import EmbeddingProgress, progress_key, read_progress
from papersift.engine.graph import Graph
from papersift.engine.lexical import LexicalIndex
from papersift.engine.lexical_sync import LexicalSync
from papersift.engine.model_files import ModelSpec
from papersift.engine.model_graphs import graph_cache_dir
from papersift.engine.people import PEOPLE_SEQ, People
from papersift.engine.store import PaperStore
from papersift.engine.vector_segments import model_dir_name, stored_dim
from papersift.engine.vectors import VectorIndex
from papersift.engine.writer_lock import LOCK_NAME

# 2: researcher ids in the lexical index; 3: institutions (ROR ids); 4: the docid also as a
# raw text term (a list of 1,000 docids is 4x quicker to match as text than as integers),
# English stop words left out of title and abstract; 5: TeX accents read as letters and
# letters folded to ASCII in title and abstract (Schr\"odinger = Schrodinger).
SCHEMA_VERSION = 5
# Older versions whose store is current: only the lexical index is rebuilt, from the store.
LEXICAL_REBUILD_FROM = frozenset({3, 4})
log = logging.getLogger(__name__)
MANIFEST = "manifest.json"
SERVING_MODEL = "serving_model"  # store meta: {"spec": ModelSpec, "id": model id} queries use


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


def check_root(root: Path, *, create: bool) -> dict[str, Any] | None:
    """The manifest of the data directory ``root``, or None for a new one (``create``);
    creates nothing, so a command can check before it takes the writer lock. Raises the
    one-line error for a file, a folder of something else, or no index (not ``create``)."""
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
            raise IndexVersionError(
                f"no index at {root}; run `papersift import FILE...` first " + demo_import_hint()
            )
    return manifest


def _rebuild_hint(root: Path) -> str:
    return (
        f"move {root} aside (or point PAPERSIFT_DATA_DIR at a new folder) and rebuild with "
        "`papersift import FILE...` then `papersift index`"
    )


class DataDir(LexicalSync):
    """Opens (or creates) everything under ``config.data_dir``; checks the manifest first."""

    def __init__(
        self, config: Config, *, create: bool = True, graph_in_memory: bool = False
    ) -> None:
        """``graph_in_memory``: read the vector graph rather than map it (``engine.ann.read``),
        as the server does."""
        self.config = config
        self.graph_in_memory = graph_in_memory
        self.root = config.data_dir
        manifest = check_root(self.root, create=create)
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
        self._indexing: Embedder | None = None  # the configured model
        self._serving: Embedder | None = None  # the model queries use
        self._vectors: VectorIndex | None = None  # the served model's, loaded
        self._indexing_vectors: VectorIndex | None = None  # the configured one's, not loaded
        self._generation = 0  # first generation of the next loaded vector index
        self._progress_counts: dict[str, tuple[Any, int]] = {}
        self._lock = threading.Lock()
        self._seen_seq = self.store.seq  # store changes the live indexes reflect
        self._seen_lexical = self._lexical_commits()  # lexical commits seen
        if rebuild_lexical:
            self._replay_lexical({})
            self.lexical.close_writer()
            self.write_manifest()
        if not (self.root / MANIFEST).exists():
            self.write_manifest()

    # -- embedding model and vectors -----------------------------------------------------
    #
    # Two models can be in play: the configured one, which the backlog embeds with
    # (``indexing_embedder``), and the one whose vectors queries use (``embedder``,
    # ``vectors``), recorded in the store under SERVING_MODEL. They differ only after the
    # configured model changed: queries keep the old model until the new one's vectors
    # cover every paper the old one's did, then switch in one step (each process on its
    # next refresh). Vectors of two models are never loaded into one index.

    def _make_embedder(self, spec: ModelSpec) -> Embedder:
        e = self.config.embedding
        model, tok = spec.paths()
        known = self.manifest.get("dimension") if self.manifest.get("model_id") else None
        emb = Embedder(
            model,
            tok,
            max_length=spec.max_length,
            batch_size=e.batch_size,
            threads=e.threads,
            # An int8 spec (the served model, say) needs the cache whatever the config says
            # now: its graph was built there.
            cache_dir=graph_cache_dir(self.root) if e.float32_cache or spec.quantize else None,
            model_id=spec.model_id or None,
            providers=e.providers.split(","),
            quantize=spec.quantize,
            query_int8=e.query_int8,
        )
        if self.manifest.get("model_id") != emb.model_id or not isinstance(known, int):
            known = stored_dim(self.root / "vectors" / model_dir_name(emb.model_id))
        if known is not None:
            emb.expect_dim(known)  # stats need no session: the manifest or a segment knows
        return emb

    @property
    def indexing_embedder(self) -> Embedder:
        """The configured model (what the backlog embeds with), loaded on first use."""
        with self._lock:
            return self._configured()

    def _configured(self) -> Embedder:
        if self._indexing is None:
            self._indexing = self._make_embedder(ModelSpec.of(self.config))
        return self._indexing

    @property
    def embedder(self) -> Embedder:
        """The model whose vectors queries use (see above); its session loads on first use."""
        with self._lock:
            if self._serving is None:
                self._serving = self._choose_serving()
            return self._serving

    def _serving_record(self) -> tuple[ModelSpec, str] | None:
        raw = self.store.get_meta(SERVING_MODEL)
        if raw is None and self.manifest.get("model_id") == default_model_id():
            # Written before the record existed: the manifest names the bundled model.
            return ModelSpec(max_length=self.config.embedding.max_length), default_model_id()
        try:
            value = json.loads(raw) if raw else None
            if not isinstance(value, dict):
                return None
            spec = ModelSpec.parse(json.dumps(value["spec"]))
            return (spec, str(value["id"])) if spec is not None else None
        except (KeyError, TypeError, ValueError):
            return None

    def _choose_serving(self) -> Embedder:
        new = self._configured()
        record = self._serving_record()
        if record is not None and record[1] != new.model_id:
            spec, old_id = record
            if self.store.uncovered(old_id, new.model_id) == 0:
                log.info("queries switch from %s to %s: its vectors cover as much", old_id,
                         new.model_id)  # fmt: skip
            else:
                try:
                    old = self._make_embedder(spec)
                except PapersiftError as exc:
                    log.warning("queries use %s, whose vectors cover less than %s's: %s",
                                new.model_id, old_id, exc)  # fmt: skip
                    return new
                if old.model_id == old_id:
                    return old
                log.warning("the files of %s changed (now %s): queries use %s", old_id,
                            old.model_id, new.model_id)  # fmt: skip
                return new
        if record is None or record[1] != new.model_id:
            spec = ModelSpec.of(self.config)
            value = {"spec": json.loads(spec.json()), "id": new.model_id}
            self.store.set_meta(SERVING_MODEL, json.dumps(value, sort_keys=True))
        return new

    def update_serving_model(self) -> bool:
        """Switch queries to the configured model if its vectors now cover what the served
        one's did (or another process has switched); returns whether queries changed model."""
        with self._lock:
            if self._serving is None:
                return False
            before = self._serving
            self._serving = self._choose_serving()
            if self._serving is before:
                return False
            vi = self._vectors
            if vi is not None:
                self._generation = vi.generation + 1
            self._vectors = None  # the new model's vectors load on the next query
            return True

    def _serving_changed(self) -> bool:
        """Cheap: has another process recorded another serving model than ours?"""
        if self._serving is None:
            return False
        record = self._serving_record()
        return record is not None and record[1] != self._serving.model_id

    def _vector_index(self, model_id: str, dim: int) -> VectorIndex:
        s = self.config.search
        return VectorIndex(
            self.root / "vectors" / model_dir_name(model_id),
            dim,
            ann_above=s.ann_above,
            ann_ef=s.ann_ef,
            exact_below=s.exact_below,
            graph_in_memory=self.graph_in_memory,
        )

    @property
    def vectors(self) -> VectorIndex:
        """The vector index of the model queries use, loaded on first use."""
        emb = self.embedder
        dim = emb.dim  # may load the model: not under the lock queries take
        with self._lock:
            if self._vectors is None:
                vi = self._vector_index(emb.model_id, dim)
                vi.generation = self._generation
                vi.load(self.store.text_hashes)
                self._vectors = vi
            return self._vectors

    @property
    def indexing_vectors(self) -> VectorIndex:
        """Where the configured model's checkpoints go: the served index when it is that
        model's and loaded, else one that writes and compacts without loading vectors."""
        emb = self.indexing_embedder
        dim = emb.dim
        with self._lock:
            if self._vectors is not None and self._serving is emb:
                return self._vectors
            if self._indexing_vectors is None or self._indexing_vectors.dim != dim:
                self._indexing_vectors = self._vector_index(emb.model_id, dim)
            return self._indexing_vectors

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
        """Checkpoint a batch of new vectors of the configured model: segment file, then
        store, then the live index if queries use this model."""
        ids = np.asarray(docids, np.int64)
        emb = self.indexing_embedder
        served = self.embedder  # chosen (and recorded) before the first vectors land
        writer = self.indexing_vectors
        path = writer.write_segment(ids, hashes, vecs)
        self.store.mark_embedded(emb.model_id, docids, hashes)
        vi = self._vectors
        if vi is None or served is not emb:
            return
        now = self.store.text_hashes(docids)  # a text may have changed while it was embedded
        live = np.fromiter((now.get(d) == h for d, h in zip(docids, hashes, strict=True)), bool)
        vi.add(ids[live], vecs[live])
        vi.mark_loaded(path)

    def embedding_progress(self, model_id: str | None = None) -> EmbeddingProgress:
        """Coverage, reach, measured rate and ETA of the vectors queries use (or of
        ``model_id``). Cheap enough to ask per query: the served index's live count when it
        is loaded, else the store's count (remembered until the store or vectors change);
        never loads the model."""
        model = model_id or self.embedder.model_id
        vi = self._vectors
        seq = self.store.seq
        if model_id is None and vi is not None:
            embedded = vi.size
        else:
            key = (seq, model, self.store.get_meta(progress_key(model)))
            cached = self._progress_counts.get("embedded")
            if cached is None or cached[0] != key:
                cached = (key, self.store.embedded_count(model))
                self._progress_counts["embedded"] = cached
            embedded = cached[1]
        papers = self._progress_counts.get("papers")
        if papers is None or papers[0] != seq:
            papers = (seq, self.store.count())
            self._progress_counts["papers"] = papers
        return read_progress(self.store, model, min(embedded, papers[1]), papers[1])

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
