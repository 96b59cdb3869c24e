"""An int8 variant of the fused float32 graph, built once with onnxruntime's quantisation tools.

Dynamic quantisation (weights int8 per output channel, activations quantised per batch at
run time; MatMul and the fused Attention) with the four nodes that moved the vectors most
left in float32: the feed-forward down-projections (the MatMul fed by GELU) of the first
three layers and the fourth layer's attention. They were found by quantising one node at a
time on 48 demo abstracts (bench/quant_bench.py, the ``keep4`` variant; GELU's output is
heavy-tailed, so one scale per tensor loses its small values), not on SciFact. Per-tensor
weights, as an earlier naive attempt used, drifted to cosine 0.92. The result changes the
vectors (cosine ~0.998 to float32), so an ``Embedder`` on it has a model id of its own.
"""

from __future__ import annotations

import logging
import os
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

QUANT_VERSION = 2  # bumped whenever what quantized_graph writes changes
_OPS = ["MatMul", "Attention"]
_GELU = ("Gelu", "BiasGelu", "FastGelu")
# The measured sensitivity order on MiniLM-L6 (bench/RESULTS.md, issue 18): layers by index.
KEEP_FFN_LAYERS = (0, 1, 2)
KEEP_ATTENTION_LAYERS = (3,)


def ffn_down_projections(graph: Path) -> list[str]:
    """Names of the MatMul nodes whose input is a GELU's output, in layer order."""
    import onnx

    model = onnx.load(str(graph), load_external_data=False)
    gelu_out = {o for n in model.graph.node if n.op_type in _GELU for o in n.output}
    return [n.name for n in model.graph.node if n.op_type == "MatMul" and n.input[0] in gelu_out]


def attention_nodes(graph: Path) -> list[str]:
    """Names of the fused Attention nodes, in layer order."""
    import onnx

    model = onnx.load(str(graph), load_external_data=False)
    return [n.name for n in model.graph.node if n.op_type == "Attention"]


def kept_in_float32(graph: Path) -> list[str]:
    """The nodes ``quantized_graph`` leaves in float32 (layers the graph lacks are skipped)."""
    ffn, att = ffn_down_projections(graph), attention_nodes(graph)
    return [ffn[i] for i in KEEP_FFN_LAYERS if i < len(ffn)] + [
        att[i] for i in KEEP_ATTENTION_LAYERS if i < len(att)
    ]


def _drop_preprocessing_advice(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith("Please consider to run pre-processing")


def quantized_graph(fused: Path, cache_dir: Path) -> Path:
    """The cached int8 graph of ``fused`` (a float32 graph), built atomically if missing."""
    target = cache_dir / f"{fused.stem}-int8pc{QUANT_VERSION}.onnx"
    if target.is_file():
        return target
    from onnxruntime.quantization import QuantType, quantize_dynamic

    keep = kept_in_float32(fused)
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".quant-") as tmp:
        built = Path(tmp) / "int8.onnx"
        # onnxruntime logs advice to run its pre-processing on the root logger, as a WARNING
        # on every build; the graph is already fused and shape-inferred, so drop that line.
        root = logging.getLogger()
        root.addFilter(_drop_preprocessing_advice)
        try:
            quantize_dynamic(
                str(fused), str(built), weight_type=QuantType.QInt8, per_channel=True,
                op_types_to_quantize=_OPS, nodes_to_exclude=keep,
            )  # fmt: skip
        finally:
            root.removeFilter(_drop_preprocessing_advice)
        with open(built, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(built, target)
    log.info("saved the int8 graph of %s as %s (%d nodes kept in float32: %s)",
             fused, target, len(keep), ", ".join(keep))  # fmt: skip
    return target
