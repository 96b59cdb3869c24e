"""Embedding the backlog on a Dask distributed cluster (``papersift index --cluster ADDRESS``).

The coordinator (this process, beside the data directory) takes batches from the same
:class:`~indexer.embed_queue.EmbedQueue` as the in-process path, keeps a bounded number of
them on the cluster, and writes each batch that comes back exactly as the in-process path
does (``DataDir.add_vectors``: segment file, store, live index; then a progress record).
Workers hold nothing but the model: each worker process loads it once, from its own
installed papersift (the bundled model) or from a path every worker can read, and refuses
work if the model there has another id than the coordinator's (another vector space).

Failures: a worker that dies mid-batch loses nothing, as the scheduler runs a task whose
worker was lost again elsewhere (Dask's ``allowed-failures``). Nothing is marked embedded
before its vectors are written here, so a coordinator killed mid-run leaves the unwritten
batches in the backlog, and the next run takes them again, like ``papersift index``.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from tqdm import tqdm

from papersift.core.errors import PapersiftError
from papersift.engine.datadir import DataDir
from papersift.engine.embed import Embedder, Vectors
from papersift.engine.model_files import ModelSpec
from papersift.engine.model_graphs import CACHE_VARIABLE
from papersift.indexer.embed_queue import EmbedQueue, EmbedRun, Row

if TYPE_CHECKING:
    from distributed import Future

log = logging.getLogger(__name__)

CLUSTER_CHUNK = 64  # papers per task: ~2 s of one core; small enough to lose little
CONNECT_GRACE = 5.0  # seconds past the client's own timeout before a silent host is given up
_worker_lock = threading.Lock()
_worker_models: dict[tuple[str, str, int, int], Embedder] = {}


class ClusterError(PapersiftError):
    """The cluster cannot be reached or a batch failed for a reason rerunning cannot fix."""


def worker_cache_dir() -> Path:
    """Where a worker keeps the optimised graph it builds once: ``PAPERSIFT_MODEL_CACHE``,
    else ``$XDG_CACHE_HOME/papersift/models`` (``~/.cache/papersift/models``)."""
    explicit = os.environ.get(CACHE_VARIABLE)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "papersift" / "models"


def _worker_embedder(spec_json: str, expect_id: str, batch_size: int, cache: bool) -> Embedder:
    key = (spec_json, expect_id, batch_size, int(cache))
    with _worker_lock:
        emb = _worker_models.get(key)
        if emb is None:
            spec = ModelSpec.parse(spec_json)
            if spec is None:
                raise ClusterError(f"malformed model spec {spec_json!r}")
            model, tok = spec.paths()
            providers = os.environ.get("PAPERSIFT_EMBEDDING_PROVIDERS", "CPUExecutionProvider")
            emb = Embedder(
                model,
                tok,
                max_length=spec.max_length,
                batch_size=batch_size,
                # One Dask thread is one core: a task's session runs on one thread unless
                # the worker's environment says otherwise.
                threads=int(os.environ.get("PAPERSIFT_EMBEDDING_THREADS", "1")),
                cache_dir=worker_cache_dir() if cache else None,
                model_id=spec.model_id or None,
                providers=providers.split(","),
                quantize=spec.quantize and cache,
            )
            if emb.model_id != expect_id:
                raise ClusterError(
                    f"this worker's model is {emb.model_id}, the coordinator embeds with "
                    f"{expect_id}: install the same papersift (or model files) on every worker"
                )
            emb.load()
            _worker_models[key] = emb
    return emb


def embed_batch(
    spec_json: str, expect_id: str, batch_size: int, cache: bool, texts: list[str]
) -> Vectors:
    """The task a worker runs: one batch of texts to unit vectors (the model loaded once per
    worker process)."""
    return _worker_embedder(spec_json, expect_id, batch_size, cache).embed(texts)


def _connect(client_class: Any, address: str, timeout: float) -> Any:
    """A Dask ``Client`` of the scheduler at ``address``, or ClusterError. Its own
    ``timeout`` does not bound the first exchange: a host that accepts the connection and
    never answers (not a Dask scheduler) held it for good, the command silent. So the client
    is made on a thread of its own and given up after the timeout and a little more."""
    made: list[Any] = []
    failed: list[BaseException] = []

    def make() -> None:
        try:
            made.append(client_class(address, timeout=timeout))
        except Exception as exc:  # OSError, TimeoutError, a malformed address
            failed.append(exc)

    worker = threading.Thread(target=make, name="dask-connect", daemon=True)
    worker.start()
    worker.join(timeout + CONNECT_GRACE)
    if failed:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {failed[0]}")
    if not made:  # left waiting on a daemon thread: it ends with the process
        raise ClusterError(
            f"no answer from {address} within {timeout + CONNECT_GRACE:.0f} s: is a Dask "
            "scheduler listening there (`dask scheduler`)?"
        )
    return made[0]


def embed_on_cluster(
    data: DataDir,
    address: str,
    *,
    limit: int | None = None,
    progress: bool = False,
    stop: threading.Event | None = None,
    chunk: int = CLUSTER_CHUNK,
    in_flight: int | None = None,
    compact: bool = True,
    timeout: float = 30.0,
    changed_only: bool = False,
) -> int:
    """Embed the backlog on the Dask scheduler at ``address``; returns the papers embedded.

    At most ``in_flight`` batches (default: twice the cluster's threads, so no worker
    waits for the next one) are out at once; ``compact=False`` leaves the checkpoints
    unfolded (tests look at them). Raises :class:`ClusterError` when the scheduler cannot
    be reached, ``distributed`` is not installed, or a batch fails on every try.
    """
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise ClusterError(
            "embedding on a cluster needs the `distributed` package: "
            "pip install 'papersift[cluster]'"
        ) from None
    from papersift.indexer.build import finish_backlog

    emb = data.indexing_embedder  # hashes the files; the model loads on the workers only
    model = emb.model_id
    spec = ModelSpec.of(data.config).json()
    cache = data.config.embedding.float32_cache
    batch = data.config.embedding.batch_size
    pending = data.store.count() - data.store.embedded_count(model)
    if limit is not None:
        pending = min(pending, limit)
    if pending <= 0:
        finish_backlog(data, 0, stopped=False)
        return 0
    client = _connect(Client, address, timeout)
    stopped = False
    queue = EmbedQueue(data.store, model, changed_only=changed_only)
    out: dict[Future[Any], list[Row]] = {}
    try:
        threads = sum(client.nthreads().values())
        room = in_flight or max(2, 2 * threads)
        log.info("embedding %d papers on %s (%d worker threads, %d batches of %d in flight)",
                 pending, address, threads, room, chunk)  # fmt: skip
        ready = as_completed()
        submitted = 0

        def submit() -> bool:
            nonlocal submitted
            rows = queue.take(min(chunk, pending - submitted))
            if not rows:
                return False
            fut = client.submit(
                embed_batch, spec, model, batch, cache, [r[1] for r in rows], pure=False
            )
            out[fut] = rows
            ready.add(fut)
            submitted += len(rows)
            return True

        with tqdm(total=pending, unit="paper", desc="embed", disable=not progress) as bar:
            run = EmbedRun(data.store, model, pending, bar if progress else None)
            while len(out) < room and submitted < pending and submit():
                pass
            for fut in ready:
                rows = out.pop(fut)
                vecs = _result(fut, len(rows))
                if emb.known_dim is None:
                    emb.expect_dim(vecs.shape[1])  # the coordinator never loads the model
                elif vecs.shape[1] != emb.known_dim:
                    raise ClusterError(
                        f"a worker returned vectors of dimension {vecs.shape[1]}, "
                        f"not {emb.known_dim}"
                    )
                docids = [r[0] for r in rows]
                data.add_vectors(docids, [r[2] for r in rows], vecs)
                queue.finish(docids)
                run.checkpoint(len(rows), queue)
                if stop is not None and stop.is_set():
                    stopped = True
                    break
                while len(out) < room and submitted < pending and submit():
                    pass
    finally:
        for fut in out:
            fut.cancel()
        client.close()
    finish_backlog(data, run.done, stopped=stopped or not compact)
    return run.done


def _result(fut: Future[Any], n: int) -> Vectors:
    try:
        value: Any = fut.result()
    except ClusterError:
        raise
    except Exception as exc:
        raise ClusterError(f"a batch failed on the cluster: {type(exc).__name__}: {exc}") from exc
    finally:
        fut.release()
    vecs = np.asarray(value, np.float32)
    if vecs.ndim != 2 or vecs.shape[0] != n:
        raise ClusterError(f"a worker returned vectors of shape {vecs.shape} for {n} texts")
    return vecs
