"""The embedding model's graph files, built once into the cache directory and loaded from
then on: the float32 graph (int8 weights de-quantised once) and the fused graph (attention
and GELU as onnxruntime kernels, ``engine.onnx_fusion``), each named by its source's bytes
and the onnxruntime version that wrote it."""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

import numpy as np
import onnxruntime as ort

from papersift.engine.atomic import write_atomically
from papersift.engine.onnx_fusion import fuse

log = logging.getLogger(__name__)

CPU_PROVIDERS = ["CPUExecutionProvider"]
# Bumped whenever fuse() changes what it writes: part of the cached graph's file name.
FUSION_VERSION = 1
# A fused graph is kept only if it reproduces the unfused graph's output this closely.
FUSION_TOLERANCE = 1e-4
# Moves the graph cache of data directories and cluster workers alike.
CACHE_VARIABLE = "PAPERSIFT_MODEL_CACHE"


def graph_cache_dir(data_root: Path) -> Path:
    """Where a data directory keeps its optimised graphs: ``PAPERSIFT_MODEL_CACHE`` if set,
    else its ``models`` folder. Graph files are named by their source's bytes and the
    onnxruntime version, so any number of data directories and workers can share one."""
    explicit = os.environ.get(CACHE_VARIABLE)
    return Path(explicit) if explicit else data_root / "models"


def cache_target(source: Path, source_sha: str, cache_dir: Path, kind: str) -> Path:
    # Keyed by the source bytes and the onnxruntime version that wrote it (the saved graph
    # is that version's optimiser output; another version re-converts rather than trusts it).
    return cache_dir / f"{source.stem}-{source_sha[:16]}-ort{ort.__version__}-{kind}.onnx"


def save_basic_graph(source: Path, out: Path) -> None:
    """Save onnxruntime's basic-level optimisation of ``source`` as ``out``.

    Basic optimisations fold the constant weight de-quantisation (Cast + Mul on int8
    initializers) into float32 initializers and leave standard ONNX ops only; the
    hardware-specific fusions of the higher levels are redone at load time instead.
    """
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = str(out)
    ort.InferenceSession(str(source), so, providers=CPU_PROVIDERS)


def float32_graph(source: Path, source_sha: str, cache_dir: Path) -> Path:
    """The cached float32 graph of ``source``, built once, atomically, if missing.

    Measured with onnxruntime 1.32: this buys memory, not speed. The shipped model stores
    int8 weights de-quantised by Cast + Mul nodes, which onnxruntime's default constant
    folding already turns into float32 once per session, so both graphs run the same
    kernels. Loading the saved graph skips that work: ~40 MB less resident and ~70 MB
    lower peak for a query-only process, and a slightly faster load. It is the fallback
    when :func:`fused_graph` cannot be built.
    """
    target = cache_target(source, source_sha, cache_dir, "f32")
    if not target.is_file():
        write_atomically(target, lambda tmp: save_basic_graph(source, tmp))
        log.info("saved the float32 graph of %s as %s", source, target)
    return target


def fused_graph(source: Path, source_sha: str, cache_dir: Path) -> Path:
    """The cached float32 graph of ``source`` with attention and GELU fused, built if missing.

    The shipped model is a PyTorch (dynamo) export: each layer's attention is a dozen
    separate nodes (three projections, reshapes and transposes, two scaling Muls, the mask
    Add, Softmax, an IsNaN + Where guard over the whole [batch, heads, tokens, tokens]
    tensor) and GELU five more. Neither onnxruntime's own graph optimiser nor its
    ``onnxruntime.transformers`` optimizer recognises that attention pattern (the latter
    fuses only GELU here, and needs torch and sympy besides), so :func:`fuse` rewrites them
    into onnxruntime's ``com.microsoft`` Attention (one packed QKV GEMM, scaling, mask and
    softmax in one kernel) and BiasGelu. Measured (bench/embed_bench.py, demo papers at 256
    tokens, batch 8): 1.2-1.3x less CPU per paper than the float32 graph; unit vectors within
    2e-7 of the shipped graph's on 500 papers (cosine > 0.9999998). The graph is kept
    only if it reproduces the unfused output on a padded probe batch; needs the ``onnx``
    package at build time only.
    """
    target = cache_target(source, source_sha, cache_dir, f"fused{FUSION_VERSION}")
    if target.is_file():
        return target
    import onnx  # only to build the graph: a cached one loads without it

    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".fuse-") as tmp:
        basic = Path(tmp) / "basic.onnx"
        save_basic_graph(source, basic)
        fused, counts = fuse(onnx.load(str(basic)))
        built = Path(tmp) / "fused.onnx"
        onnx.save(fused, str(built))
        del fused
        check_same_output(basic, built)  # before any process can see it under its name
        with open(built, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(built, target)
    log.info(
        "saved the fused graph of %s as %s (%d attention, %d GELU fused)",
        source, target, counts["attention"], counts["gelu"],
    )  # fmt: skip
    return target


def check_same_output(reference: Path, candidate: Path) -> None:
    """Raise unless ``candidate`` gives ``reference``'s outputs on a padded probe batch."""
    ref = ort.InferenceSession(str(reference), providers=CPU_PROVIDERS)
    new = ort.InferenceSession(str(candidate), providers=CPU_PROVIDERS)
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 100, (3, 19), dtype=np.int64)  # ids < 100 exist in any vocabulary
    mask = np.ones_like(ids)
    mask[1, 11:] = mask[2, 4:] = 0  # key padding, as in a length-sorted batch
    ids[mask == 0] = 0
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    feed = {i.name: feeds[i.name] for i in ref.get_inputs()}
    for o, (a, b) in enumerate(zip(ref.run(None, feed), new.run(None, feed), strict=True)):
        a, b = np.asarray(a), np.asarray(b)
        tol = FUSION_TOLERANCE
        if a.shape != b.shape or not np.allclose(a, b, rtol=tol, atol=tol):
            diff = float(np.abs(a - b).max()) if a.shape == b.shape else float("nan")
            raise ValueError(f"fused graph output {o} differs (max abs diff {diff:.2g})")
