"""Stats with the embedding backlog's progress: what ``stats``, the API and the home page show."""

from __future__ import annotations

from dataclasses import replace

from papersift.engine.datadir import DataDir
from papersift.engine.embed_progress import read_progress
from papersift.engine.results import Stats


def stats_with_progress(engine: object) -> Stats:
    """``engine.stats()`` plus :class:`~engine.embed_progress.EmbeddingProgress` of the
    configured model (how far back it has embedded, the measured rate, the ETA). Loads no
    model: both only hash the model files and read counts from the store."""
    stats: Stats = engine.stats()  # type: ignore[attr-defined]
    data = getattr(engine, "data", None)
    if not isinstance(data, DataDir):
        return stats
    model = data.indexing_embedder.model_id
    if model == stats.model_id:  # counted already: no second pass over the store
        progress = read_progress(data.store, model, stats.embedded, stats.papers)
    else:  # queries still use the previous model's vectors: show the new one's progress
        progress = data.embedding_progress(model)
    return replace(stats, embedding=progress)
