"""The weight products of an optimised float32 graph run on the shipped model's own int8
weights: a pure graph-to-graph rewrite for the query session (``engine.model_graphs``).

The shipped model stores each projection as int8 values times one float scale per output
column, de-quantised by Cast + Mul; our graphs fold that into float32 once, so every query
reads 42 MB of float weights for a dozen tokens, and the embedding is bound by memory, not
arithmetic. Here each MatMul whose weight is exactly such a product, and each fused
Attention whose packed QKV weight is three of them, becomes com.microsoft MatMulNBits over
those very int8 values (8 bits, one scale per column repeated per block, the default zero
point 128) with accuracy level 4: onnxruntime quantises the activations per block of
``BLOCK`` values and multiplies in int8. The weights are unchanged; the activations are
rounded, so vectors move by cosine ~2e-4 (measured in bench/RESULTS.md).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from papersift.engine.onnx_fusion import replace_nodes

if TYPE_CHECKING:
    import onnx

# Activations are quantised per block of this many values along K: 16 moved query vectors
# less (cosine 0.99988 against 0.99977) for a third of the gain, 64 and 128 more (0.99957,
# 0.99922) for little more speed (MiniLM-L6, 200 title queries).
BLOCK = 32
INT8_ACCURACY = 4  # MatMulNBits' "int8 compute" level

_Int8Weight = tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]


def _key(w: npt.NDArray[Any]) -> bytes:
    return hashlib.blake2b(np.ascontiguousarray(w, np.float32).tobytes(), digest_size=16).digest()


def int8_weights(source: onnx.ModelProto) -> dict[bytes, _Int8Weight]:
    """Every 2-D int8 initializer that ``source`` de-quantises as Mul(Cast(q), scale) with
    one scale per column, keyed by the float32 product's bytes: the float weight a folded
    graph holds (the product rounds alike in numpy and onnxruntime)."""
    import onnx
    from onnx import numpy_helper

    g = source.graph
    inits = {i.name: i for i in g.initializer}
    int8_of: dict[str, str] = {}  # Cast output -> the int8 initializer it reads
    int8 = {name for name, i in inits.items() if i.data_type == onnx.TensorProto.INT8}
    for n in g.node:
        to = next((a.i for a in n.attribute if a.name == "to"), 0)
        if n.op_type == "Cast" and to == onnx.TensorProto.FLOAT and n.input[0] in int8:
            int8_of[n.output[0]] = n.input[0]
    found: dict[bytes, _Int8Weight] = {}
    for n in g.node:
        if n.op_type != "Mul" or len(n.input) != 2:
            continue
        for a in (0, 1):
            q_name, s_name = int8_of.get(n.input[a]), n.input[1 - a]
            if q_name is None or s_name not in inits:
                continue
            q = numpy_helper.to_array(inits[q_name])
            s = np.asarray(numpy_helper.to_array(inits[s_name]), np.float32)
            if q.ndim == 2 and s.size == q.shape[1] and s.shape in ((q.shape[1],), (1, q.shape[1])):
                scale = s.reshape(-1)
                found[_key(q.astype(np.float32) * scale)] = (q.astype(np.int8), scale)
    return found


def int8_products(
    model: onnx.ModelProto, weights: dict[bytes, _Int8Weight]
) -> tuple[onnx.ModelProto, int]:
    """A copy of ``model`` with each product over one of ``weights`` as MatMulNBits (and
    each fused Attention over three as MatMulNBits, Split and MultiHeadAttention); the
    number of products rewritten. Anything else is left alone."""
    import onnx
    from onnx import helper, numpy_helper

    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    g = copy.graph
    inits = {i.name: i for i in g.initializer}
    new_inits: list[onnx.TensorProto] = []

    def weight(name: str) -> npt.NDArray[np.float32] | None:
        if name not in inits:
            return None
        w = numpy_helper.to_array(inits[name])
        return w if w.ndim == 2 and w.dtype == np.float32 else None

    def nbits(x: str, q: npt.NDArray[np.int8], scale: npt.NDArray[np.float32], out: str,
              name: str) -> onnx.NodeProto:  # fmt: skip
        k, n = q.shape
        if k % BLOCK:
            raise ValueError(f"{name}: {k} rows are not whole blocks of {BLOCK}")
        blocks = k // BLOCK
        # [N, blocks, BLOCK] unsigned: the zero point 128 MatMulNBits assumes without one.
        packed = (q.T.astype(np.int16) + 128).astype(np.uint8).reshape(n, blocks, BLOCK)
        scales = np.repeat(scale[:, None], blocks, axis=1).astype(np.float32)
        new_inits.extend((
            numpy_helper.from_array(np.ascontiguousarray(packed), f"{name}.int8"),
            numpy_helper.from_array(scales, f"{name}.scales"),
        ))  # fmt: skip
        return helper.make_node(
            "MatMulNBits", [x, f"{name}.int8", f"{name}.scales"], [out], name=name,
            domain="com.microsoft", K=k, N=n, bits=8, block_size=BLOCK,
            accuracy_level=INT8_ACCURACY,
        )  # fmt: skip

    nodes: list[onnx.NodeProto] = []
    count = 0
    for node in g.node:
        w = weight(node.input[1]) if len(node.input) > 1 else None
        if w is not None and node.op_type == "MatMul" and node.domain == "":
            hit = weights.get(_key(w))
            if hit is not None:
                nodes.append(nbits(node.input[0], *hit, node.output[0], f"{node.name}.int8"))
                count += 1
                continue
        if w is not None and node.op_type == "Attention" and node.domain == "com.microsoft":
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            dim = w.shape[0]
            parts = [weights.get(_key(w[:, i * dim : (i + 1) * dim])) for i in range(3)]
            plain = len(node.input) == 4 and set(attrs) <= {"num_heads", "scale"}
            if w.shape[1] == 3 * dim and plain and all(p is not None for p in parts):
                q = np.concatenate([p[0] for p in parts if p is not None], axis=1)
                s = np.concatenate([p[1] for p in parts if p is not None])
                name = f"{node.name}.int8"
                qkv = [f"{name}.{part}" for part in "qkv"]
                nodes += [
                    nbits(node.input[0], q, s, f"{name}.qkv", f"{name}.qkv_proj"),
                    helper.make_node("Split", [f"{name}.qkv"], qkv, name=f"{name}.split", axis=-1),
                    helper.make_node(
                        "MultiHeadAttention", [*qkv, node.input[2], node.input[3]],
                        list(node.output), name=name, domain="com.microsoft", **attrs,
                    ),
                ]  # fmt: skip
                count += 3
                continue
        nodes.append(node)
    replace_nodes(copy, nodes, new_inits)
    return copy, count
