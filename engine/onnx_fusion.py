"""Attention and GELU of a PyTorch-exported MiniLM-style ONNX graph rewritten into
onnxruntime's fused ``com.microsoft`` kernels: a pure graph-to-graph rewrite, checked
against the unfused output by ``engine.model_graphs`` before it is used."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import onnx

_Array = npt.NDArray[Any]


def fuse(model: onnx.ModelProto) -> tuple[onnx.ModelProto, dict[str, int]]:
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

    replace_nodes(model, [*g.node, *added], new_inits)
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


def replace_nodes(
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
