"""Sentence embeddings: an ONNX MiniLM-style model, its tokenizer, masked mean pooling, L2 norm."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
from tokenizers import Tokenizer

from papersift.core.errors import PapersiftError
from papersift.engine.model_graphs import (
    CPU_PROVIDERS,
    QUERY_MAX_CPU_SHARE,
    cpu_ratio,
    float32_graph,
    fused_graph,
    query_graph,
)
from papersift.engine.model_id import derive_model_id, sha256_file
from papersift.engine.quantize import QUANT_VERSION, quantized_graph

log = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]

# Batch 8 measured no slower per CPU-second than 16 or 32 (texts sorted by length) and peaked
# at ~400 MB RSS against ~600 MB for 16 at 256 tokens (bench/embed_bench.py).
DEFAULT_BATCH_SIZE = 8
# Texts tokenized and length-sorted together: bounds the memory of a long input list while
# keeping almost all of the gain of sorting (batches of similar length waste little padding).
_CHUNK = 1024
_PROVIDERS = CPU_PROVIDERS


class ModelError(PapersiftError):
    """The embedding model or its tokenizer is missing or cannot be loaded."""


def check_providers(providers: Sequence[str]) -> tuple[str, ...]:
    """The execution providers, checked against this onnxruntime build (ModelError if one
    is missing: onnxruntime would otherwise fall back to the CPU without a word)."""
    wanted = tuple(p.strip() for p in providers if p.strip()) or tuple(_PROVIDERS)
    available = ort.get_available_providers()
    missing = [p for p in wanted if p not in available]
    if missing:
        raise ModelError(
            f"onnxruntime execution provider {', '.join(missing)} is not available here "
            f"(this onnxruntime has {', '.join(available)}); fix [embedding] providers"
        )
    return wanted


def _brief(exc: Exception) -> str:
    """The first line of a library's error, for a one-line message of our own."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


class Embedder:
    """Turns texts into L2-normalised float32 vectors; thread-safe.

    ``model_path`` is an ONNX model with inputs ``input_ids`` and ``attention_mask`` (and
    optionally ``token_type_ids``) whose first or ``last_hidden_state`` output is
    [batch, tokens, dim]; ``tokenizer_path`` its HF ``tokenizer.json``. Texts are cut at
    ``max_length`` tokens and run ``batch_size`` at a time, shortest together. ``threads``
    sets onnxruntime's intra-op threads (0: its default); ``providers`` its execution
    providers, in order of preference (default CPU). With ``cache_dir`` the model's
    weights are converted to float32 and its attention and GELU fused once (the same vectors
    within 1e-6) and that graph is loaded from then on, falling back, with a warning, to the
    plain float32 graph and then to the original. ``model_id`` overrides the derived id.
    With ``query_int8`` too, queries run that graph's products on the model's int8 weights
    (``engine.onnx_int8``; papers are still embedded in float32).

    The model itself is loaded on first use (``embed``, ``embed_query``, ``dim`` unless
    ``dim`` was given, ``load``): reading ``model_id`` only hashes the files, so ``stats``
    never pays the ~1 s and ~100 MB of a session. Raises :class:`ModelError` for a missing
    model or tokenizer here, for one that cannot be loaded at first use.
    """

    def __init__(
        self,
        model_path: Path,
        tokenizer_path: Path,
        *,
        max_length: int = 256,
        batch_size: int = DEFAULT_BATCH_SIZE,
        threads: int = 0,
        cache_dir: Path | None = None,
        model_id: str | None = None,
        providers: Sequence[str] = CPU_PROVIDERS,
        dim: int | None = None,
        quantize: bool = False,
        query_int8: bool = False,
    ) -> None:
        if max_length < 2 or batch_size < 1 or threads < 0:
            raise ValueError(f"bad embedder settings: {max_length=} {batch_size=} {threads=}")
        if quantize and cache_dir is None:
            raise ValueError("an int8 graph is built into cache_dir: give one")
        self.max_length = max_length
        self.batch_size = batch_size
        for path, what in ((model_path, "model"), (tokenizer_path, "tokenizer")):
            if not path.is_file():
                raise ModelError(f"embedding {what} not found: {path}")
        try:
            self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as exc:
            raise ModelError(f"not a tokenizer.json: {tokenizer_path} ({_brief(exc)})") from exc
        # The vendored file pads every text to 128 and cuts at 128: pad per batch ourselves.
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length)
        self.providers = check_providers(providers)

        self._model_path = model_path
        self._model_sha = sha256_file(model_path)
        self.model_id: str = model_id or derive_model_id(
            model_path, self._model_sha, sha256_file(tokenizer_path)
        ) + (f"-int8pc{QUANT_VERSION}" if quantize else "")
        self._quantize = quantize
        self._query_int8 = query_int8
        self._cache_dir = cache_dir
        self._threads = threads
        self._expected_dim = dim
        self._load_lock = threading.Lock()
        self._session: ort.InferenceSession | None = None
        self._graph_path: Path = model_path
        self._query_session: ort.InferenceSession | None = None
        self._query_path: Path | None = None
        self._query_lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._session is not None

    @property
    def dim(self) -> int:
        """Vector dimension: as given, else from the loaded model."""
        if self._session is None:
            if self._expected_dim is not None:
                return self._expected_dim
            self.load()
        return self._dim

    @property
    def known_dim(self) -> int | None:
        """The dimension if known without loading the model."""
        return self._dim if self._session is not None else self._expected_dim

    def expect_dim(self, dim: int) -> None:
        """Vectors of this model are known to have ``dim`` components (checked at load)."""
        if self._session is None:
            self._expected_dim = dim

    @property
    def graph_path(self) -> Path:
        """The graph file actually loaded (loads the model)."""
        self.load()
        return self._graph_path

    def load(self) -> ort.InferenceSession:
        """The backlog session, loaded once (the cached optimised graph, built if missing)."""
        session = self._session
        if session is not None:
            return session
        with self._load_lock:
            if self._session is not None:
                return self._session
            session = None
            if self._quantize and self._cache_dir is not None:
                session, self._graph_path = self._load_quantized(self._cache_dir)
            elif self._cache_dir is not None:
                loaded = self._load_cached(
                    self._model_path, self._model_sha, self._cache_dir, self._threads,
                    self.providers,
                )  # fmt: skip
                if loaded is not None:
                    session, self._graph_path = loaded
            session = session or self._load(self._model_path, self._threads, self.providers)
            self._describe(session)
            self._session = session
            return session

    def _load_quantized(self, cache_dir: Path) -> tuple[ort.InferenceSession, Path]:
        """The int8 graph (engine.quantize) of the fused graph; no silent fall-back to
        float32, whose vectors would be stored under the int8 model id."""
        try:
            try:
                base = fused_graph(self._model_path, self._model_sha, cache_dir)
            except Exception as exc:
                log.warning("fused graph unavailable (%s): quantising the float32 graph",
                            _brief(exc))  # fmt: skip
                base = float32_graph(self._model_path, self._model_sha, cache_dir)
            path = quantized_graph(base, cache_dir)
        except Exception as exc:
            raise ModelError(
                f"cannot build the int8 graph of {self._model_path}: {_brief(exc)}"
            ) from exc
        return self._load(path, self._threads, self.providers), path

    def _describe(self, session: ort.InferenceSession) -> None:
        """Read inputs, output and dimension off a fresh session (checks the given dim)."""
        inputs = {i.name for i in session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= inputs:
            raise ModelError(
                f"not a sentence-embedding model (inputs {sorted(inputs)}): {self._model_path}"
            )
        self._with_types = "token_type_ids" in inputs
        outputs = session.get_outputs()
        out = next((o for o in outputs if o.name == "last_hidden_state"), outputs[0])
        self._output = out.name
        width = out.shape[-1] if len(out.shape) == 3 else None
        self._dim: int = width if isinstance(width, int) else self._run([[0, 0]], session).shape[1]
        if self._expected_dim is not None and self._expected_dim != self._dim:
            raise ModelError(
                f"{self._model_path} makes vectors of dimension {self._dim}, the index holds "
                f"{self._expected_dim}: set [embedding] model_id to a new name"
            )

    @classmethod
    def _load_cached(
        cls,
        model_path: Path,
        model_sha: str,
        cache_dir: Path,
        threads: int,
        providers: Sequence[str] = CPU_PROVIDERS,
    ) -> tuple[ort.InferenceSession, Path] | None:
        """A session on the fused graph, else on the float32 graph (each built into
        ``cache_dir`` if missing, a cached file that does not load rebuilt once), else None."""
        for kind, build in (("fused", fused_graph), ("float32", float32_graph)):
            for attempt in (1, 2):
                try:
                    path = build(model_path, model_sha, cache_dir)
                except Exception as exc:
                    log.warning("%s graph of %s unavailable: %s", kind, model_path, _brief(exc))
                    break
                try:
                    return cls._load(path, threads, providers), path
                except Exception as exc:
                    log.warning("cached %s graph %s does not load: %s", kind, path, _brief(exc))
                    if attempt == 2:
                        break
                    path.unlink(missing_ok=True)  # corrupt or foreign: build it again
        log.warning("using %s as shipped", model_path)
        return None

    @staticmethod
    def _load(
        path: Path, threads: int, providers: Sequence[str] = CPU_PROVIDERS, *, spin: bool = True
    ) -> ort.InferenceSession:
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # Memory patterns pay off for fixed shapes; ours change with every batch (padded to
        # its longest text) and the patterns raised peak RSS by ~290 MB at batch 16, 256
        # tokens, with no speed gain (bench/embed_bench.py).
        so.enable_mem_pattern = False
        if not spin:
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            return ort.InferenceSession(str(path), so, providers=list(providers))
        except Exception as exc:
            raise ModelError(f"cannot load ONNX model {path}: {_brief(exc)}") from exc

    def embed(
        self, texts: Sequence[str], on_batch: Callable[[int], object] | None = None
    ) -> Vectors:
        """One unit vector per text, float32 [len(texts), dim], in input order;
        ``on_batch(n)`` after each batch of ``n`` (a progress bar's update)."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts; use embed_query() for one")
        out = np.empty((len(texts), self.dim), np.float32)
        for start in range(0, len(texts), _CHUNK):
            encodings = self._tokenizer.encode_batch(list(texts[start : start + _CHUNK]))
            order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
            for b in range(0, len(order), self.batch_size):
                rows = order[b : b + self.batch_size]
                out[[start + i for i in rows]] = self._run([encodings[i].ids for i in rows])
                if on_batch is not None:
                    on_batch(len(rows))
        return out

    def embed_query(self, text: str) -> Vectors:
        """The unit vector of one text, float32 [dim], from the query session."""
        vector: Vectors = self._run([self._tokenizer.encode(text).ids], self._for_queries())[0]
        return vector

    @property
    def query_graph_path(self) -> Path:
        """The graph queries run on (loads the query session)."""
        self._for_queries()
        assert self._query_path is not None
        return self._query_path

    def _for_queries(self) -> ort.InferenceSession:
        """A second session, on the query graph or the same graph, whose threads do not
        spin-wait after a run.

        onnxruntime's workers spin for a while after each run, which pays off between the
        batches of a backlog but, after a query, takes the cores the rest of the search
        needs: keyword p50 at 663k papers went from 13.7 to 7.6 ms in the interleaved
        scale benchmark without it. The backlog session keeps spinning (5% faster).
        It runs on one thread: a second saved 0.4 ms of a 5 ms query and cost 1.4 ms more
        CPU, which a server answering requests in parallel pays in throughput.
        """
        with self._query_lock:
            if self._query_session is None:
                self._query_session, self._query_path = self._load_for_queries()
            return self._query_session

    def _load_for_queries(self) -> tuple[ort.InferenceSession, Path]:
        """The query graph's session if it is built, loads, runs and is clearly cheaper
        than the backlog graph's on this CPU (it needs onnxruntime's fast int8 kernels),
        else the backlog graph's, with a log line saying why."""
        graph = self.graph_path
        plain = self._load(graph, 1, self.providers, spin=False)
        # (Not from the shipped graph: only an optimised one is worth rewriting.)
        if (
            not self._query_int8
            or self._quantize
            or self._cache_dir is None
            or graph == self._model_path
        ):
            return plain, graph
        try:
            path = query_graph(self._model_path, self._model_sha, graph, self._cache_dir)
        except Exception as exc:
            log.warning("no int8 query graph (%s): queries use %s", _brief(exc), graph.name)
            return plain, graph
        if path is None:
            return plain, graph
        try:
            session = self._load(path, 1, self.providers, spin=False)
        except ModelError as exc:
            log.warning("%s; removed, built again by the next process", exc)
            path.unlink(missing_ok=True)
            return plain, graph
        try:
            share = cpu_ratio(session, plain)
        except Exception as exc:  # e.g. no 8-bit MatMulNBits kernel for this CPU
            log.warning("the int8 query graph does not run here (%s): queries use %s",
                        _brief(exc), graph.name)  # fmt: skip
            return plain, graph
        if share > QUERY_MAX_CPU_SHARE:
            # Not worth a line in the CLI: without AVX-512 VNNI, float32's kernels are faster.
            log.debug("the int8 query graph takes %.2fx the CPU of %s on this CPU: queries "
                      "use the latter", share, graph.name)  # fmt: skip
            return plain, graph
        log.debug("queries use the int8 query graph (%.2fx the CPU of %s on this CPU)",
                  share, graph.name)  # fmt: skip
        return session, path

    def _run(
        self, token_ids: list[list[int]], session: ort.InferenceSession | None = None
    ) -> Vectors:
        """Pad one batch to its longest text, run the model, mean-pool the real tokens."""
        run = (session or self.load()).run  # loading sets the input and output names
        width = max(len(ids) for ids in token_ids)
        ids = np.zeros((len(token_ids), width), np.int64)
        mask = np.zeros((len(token_ids), width), np.int64)
        for row, seq in enumerate(token_ids):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if self._with_types:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden: Vectors = np.asarray(run([self._output], feed)[0], np.float32)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: Vectors = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit
