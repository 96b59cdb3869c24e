"""The embedding models and vector indexes of a data directory, kept in step with the store:
the configured model the backlog embeds with, the one queries use and the switch between
them, checkpoints of new vectors, embedding progress (``engine.datadir.DataDir`` inherits
these, as it does ``engine.lexical_sync``)."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from papersift.core.config import Config
from papersift.core.errors import PapersiftError
from papersift.engine.embed import Embedder
from papersift.engine.embed_progress import EmbeddingProgress, progress_key, read_progress
from papersift.engine.model_files import ModelSpec
from papersift.engine.model_graphs import graph_cache_dir
from papersift.engine.model_id import default_model_id
from papersift.engine.store import PaperStore
from papersift.engine.vector_segments import model_dir_name, stored_dim
from papersift.engine.vectors import VectorIndex

log = logging.getLogger(__name__)
SERVING_MODEL = "serving_model"  # store meta: {"spec": ModelSpec, "id": model id} queries use


class VectorSync:
    """The models and vectors of a data directory (a mixin of ``DataDir``, whose config,
    manifest and store it uses).

    Two models can be in play: the configured one, which the backlog embeds with
    (``indexing_embedder``), and the one whose vectors queries use (``embedder``,
    ``vectors``), recorded in the store under SERVING_MODEL. They differ only after the
    configured model changed: queries keep the old model until the new one's vectors
    cover every paper the old one's did, then switch in one step (each process on its
    next refresh). Vectors of two models are never loaded into one index.
    """

    config: Config
    root: Path
    manifest: dict[str, Any]
    store: PaperStore
    graph_in_memory: bool

    def _init_vectors(self) -> None:
        """Nothing loaded yet: models and vectors load on first use."""
        self._indexing: Embedder | None = None  # the configured model
        self._serving: Embedder | None = None  # the model queries use
        self._vectors: VectorIndex | None = None  # the served model's, loaded
        self._indexing_vectors: VectorIndex | None = None  # the configured one's, not loaded
        self._generation = 0  # first generation of the next loaded vector index
        self._progress_counts: dict[str, tuple[Any, int]] = {}
        self._lock = threading.Lock()

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
        """The model whose vectors queries use (see the class); its session loads on first use."""
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
