"""The embedding model's graph files, built once into the cache directory and loaded from
then on: the float32 graph (int8 weights de-quantised once), the fused graph (attention
and GELU as onnxruntime kernels, ``engine.onnx_fusion``) and the query graph (the fused
graph's products on the model's int8 weights, ``engine.onnx_int8``), each named by its
source's bytes and the onnxruntime version that wrote it."""

from __future__ import annotations

import logging
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

from papersift.engine.atomic import write_atomically
from papersift.engine.onnx_fusion import fuse
from papersift.engine.onnx_int8 import int8_products, int8_weights

log = logging.getLogger(__name__)

CPU_PROVIDERS = ["CPUExecutionProvider"]
# Bumped whenever fuse() changes what it writes: part of the cached graph's file name.
FUSION_VERSION = 1
# A fused graph is kept only if it reproduces the unfused graph's output this closely.
FUSION_TOLERANCE = 1e-4
# Bumped whenever int8_products changes what it writes: part of the query graph's name.
QUERY_VERSION = 1
# A query graph is kept only if its pooled unit vectors are this close (cosine) to its
# source graph's on the probe batch; measured: 0.9994 at worst on 200 title queries.
QUERY_MIN_COSINE = 0.999
# The int8 query graph is used only where it costs at most this share of the float32 graph's
# CPU, since float32 is the exact computation: measured 0.58-0.74 with AVX-512 VNNI, but
# 1.12-1.20 on AVX2 alone (Zen 3), where MatMulNBits' int8 kernel is slower than float32's
# SGEMM; where onnxruntime has no int8 kernel it de-quantises every weight per run (~4x).
QUERY_MAX_CPU_SHARE = 0.9
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


def query_graph(source: Path, source_sha: str, graph: Path, cache_dir: Path) -> Path | None:
    """The cached query graph of ``graph`` (the fused or float32 graph of ``source``), built
    if missing; None when ``source`` holds no int8 weights that ``graph`` uses.

    Measured (bench/query_int8.py): a third less CPU per query embedding, whose cost is
    mostly reading 42 MB of float32 weights for a dozen tokens. The graph is kept only if
    its vectors stay within ``QUERY_MIN_COSINE`` of ``graph``'s on a padded probe batch;
    papers are always embedded by ``graph`` itself, so stored vectors never change.
    """
    target = cache_dir / f"{graph.stem}-q8w{QUERY_VERSION}.onnx"
    if target.is_file():
        return target
    import onnx

    weights = int8_weights(onnx.load(str(source)))
    model, count = int8_products(onnx.load(str(graph)), weights) if weights else (None, 0)
    if model is None or not count:
        log.info("no int8 weights of %s in %s: queries use the float32 graph", source, graph)
        return None
    with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".q8w-") as tmp:
        built = Path(tmp) / "query.onnx"
        onnx.save(model, str(built))
        del model
        cosine = probe_cosine(graph, built)
        if cosine < QUERY_MIN_COSINE:
            raise ValueError(f"query graph vectors differ (cosine {cosine:.5f} on the probe)")
        with open(built, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(built, target)
    log.info("saved the query graph of %s as %s (%d int8 weights, probe cosine %.5f)",
             graph, target, count, cosine)  # fmt: skip
    return target


def _probe() -> dict[str, np.ndarray]:
    """A padded batch of three texts' token ids (ids < 100 exist in any vocabulary)."""
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 100, (3, 19), dtype=np.int64)
    mask = np.ones_like(ids)
    mask[1, 11:] = mask[2, 4:] = 0  # key padding, as in a length-sorted batch
    ids[mask == 0] = 0
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}


def _run(session: ort.InferenceSession, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The session's outputs for those of ``feeds`` it takes."""
    wanted = {i.name: feeds[i.name] for i in session.get_inputs()}
    return [np.asarray(a) for a in session.run(None, wanted)]


def _run_probe(session: ort.InferenceSession) -> list[np.ndarray]:
    return _run(session, _probe())


def probe_cosine(reference: Path, candidate: Path) -> float:
    """The least cosine between the two graphs' mean-pooled first outputs on the probe."""
    mask = _probe()["attention_mask"][:, :, None].astype(np.float32)
    pooled = []
    for path in (reference, candidate):
        hidden = _run_probe(ort.InferenceSession(str(path), providers=CPU_PROVIDERS))[0]
        v = (hidden * mask).sum(axis=1) / mask.sum(axis=1)
        pooled.append(v / np.linalg.norm(v, axis=1, keepdims=True))
    return float((pooled[0] * pooled[1]).sum(axis=1).min())


def cpu_ratio(candidate: ort.InferenceSession, reference: ort.InferenceSession) -> float:
    """The CPU a short query takes on ``candidate`` over what it takes on ``reference``
    (medians of 5 alternating runs after 2 each; this thread's CPU: sessions of one
    intra-op thread run on the caller). Raises whatever a run raises."""
    ids = np.random.default_rng(1).integers(1, 100, (1, 12), dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": 0 * ids}
    times: list[list[int]] = [[], []]
    for _ in range(7):
        for which, session in enumerate((candidate, reference)):
            start = time.thread_time_ns()
            _run(session, feeds)
            times[which].append(time.thread_time_ns() - start)
    return float(np.median(times[0][2:]) / max(float(np.median(times[1][2:])), 1.0))


def check_same_output(reference: Path, candidate: Path) -> None:
    """Raise unless ``candidate`` gives ``reference``'s outputs on a padded probe batch."""
    ref = ort.InferenceSession(str(reference), providers=CPU_PROVIDERS)
    new = ort.InferenceSession(str(candidate), providers=CPU_PROVIDERS)
    for o, (a, b) in enumerate(zip(_run_probe(ref), _run_probe(new), strict=True)):
        tol = FUSION_TOLERANCE
        if a.shape != b.shape or not np.allclose(a, b, rtol=tol, atol=tol):
            diff = float(np.abs(a - b).max()) if a.shape == b.shape else float("nan")
            raise ValueError(f"fused graph output {o} differs (max abs diff {diff:.2g})")
