"""Quantised variants of the embedding model against the fused float32 graph (issue 18).

Every variant is built once from the fused float32 graph (what ``Embedder`` loads by
default) with onnxruntime's own tools (``onnxruntime.quantization``):

- ``dyn-int8-pc``: dynamic int8, weights per output channel (MatMul and Attention);
- ``dyn-int8-pc-keepK``: the same, leaving in float32 the K nodes whose quantisation alone
  moved the vectors most (measured here, one node at a time, on calibration abstracts);
- ``qdq-static``: static QDQ (activations uint8, weights int8 per channel), calibrated
  (MinMax) on real demo abstracts;
- ``int8-shipped``: what ``[embedding] quantize = true`` loads (``engine.quantize``:
  dynamic per channel, the keep4 list resolved by layer: the first three GELU-fed
  down-projections and the fourth attention kept in float32), built by ``Embedder`` itself;
- ``bf16``: MatMul weights and inputs in bfloat16 (the CPU has AVX512-BF16), if onnxruntime
  runs it at all.

Calibration and sensitivity use demo papers disjoint from the timed and compared ones.
Measured: papers/s at ``--max-length`` tokens over demo papers at several batch sizes
(variants interleaved, order alternating per round), cosine to the float32 vectors, query
latency, and (``--scifact``) SciFact nDCG@10 in semantic and default hybrid mode through
the real engine, the variant also embedding the queries.

    .venv/bin/python bench/quant_bench.py [--papers 256] [--rounds 3] [--batches 8,16,32,64]
        [--scifact fused-f32,int8-shipped] [--variants ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import CACHE
from bench.embed_bench import cpu_seconds, demo_texts
from papersift.engine.embed import Embedder
from papersift.engine.model_id import default_model_path, default_tokenizer_path

QUANT = CACHE / "quant"
OPS = ["MatMul", "Attention"]


def fused_graph() -> Path:
    emb = Embedder(default_model_path(), default_tokenizer_path(), cache_dir=QUANT / "fused")
    return emb.graph_path


def quantizable(graph: Path) -> list[str]:
    import onnx

    return [n.name for n in onnx.load(str(graph)).graph.node if n.op_type in OPS]


def dynamic(graph: Path, out: Path, exclude: list[str] = (), only: list[str] | None = None) -> Path:  # type: ignore[assignment]
    from onnxruntime.quantization import QuantType, quantize_dynamic

    extra: dict[str, Any] = {} if only is None else {"nodes_to_quantize": only}
    quantize_dynamic(
        str(graph), str(out), weight_type=QuantType.QInt8, per_channel=True,
        op_types_to_quantize=OPS, nodes_to_exclude=list(exclude), **extra,
    )  # fmt: skip
    return out


def sensitivity(graph: Path, calib: list[str]) -> dict[str, float]:
    """1 - mean cosine to float32 when only that node is quantised (cached by graph)."""
    path = QUANT / f"sensitivity-{graph.stem}.json"
    if path.exists():
        return dict(json.loads(path.read_text()))
    ref = Embedder(graph, default_tokenizer_path()).embed(calib)
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in quantizable(graph):
            one = dynamic(graph, Path(tmp) / "one.onnx", only=[name])
            vecs = Embedder(one, default_tokenizer_path()).embed(calib)
            out[name] = float(1 - (vecs * ref).sum(axis=1).mean())
            print(f"  sensitivity {name}: {out[name]:.2e}", file=sys.stderr, flush=True)
    path.write_text(json.dumps(out, indent=1))
    return out


def static_qdq(graph: Path, out: Path, calib: list[str], max_length: int) -> Path:
    from onnxruntime.quantization import (
        CalibrationDataReader,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(default_tokenizer_path()))
    tok.no_padding()
    tok.enable_truncation(max_length)

    class Reader(CalibrationDataReader):  # type: ignore[misc]
        def __init__(self) -> None:
            self.feeds = iter(
                {
                    "input_ids": np.asarray([e.ids], np.int64),
                    "attention_mask": np.ones((1, len(e.ids)), np.int64),
                    "token_type_ids": np.zeros((1, len(e.ids)), np.int64),
                }
                for e in tok.encode_batch(calib)
            )

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.feeds, None)

    import onnx

    names = {i.name for i in onnx.load(str(graph)).graph.input}

    class Filtered(Reader):
        def get_next(self) -> dict[str, np.ndarray] | None:
            feed = super().get_next()
            return None if feed is None else {k: v for k, v in feed.items() if k in names}

    quantize_static(
        str(graph), str(out), Filtered(), quant_format=QuantFormat.QDQ, per_channel=True,
        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, op_types_to_quantize=OPS,
    )  # fmt: skip
    return out


def bf16(graph: Path, out: Path) -> Path:
    """MatMul in bfloat16: weights stored bf16, activations cast to bf16 and back."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(graph))
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    nodes = []
    for n in g.node:
        if n.op_type == "MatMul" and n.input[1] in inits:
            w = numpy_helper.to_array(inits[n.input[1]]).astype(np.float32)
            bits = (w.view(np.uint32) + 0x8000) >> 16  # round to nearest bf16
            raw = bits.astype(np.uint16).tobytes()
            name = n.input[1] + ".bf16"
            t = helper.make_tensor(name, TensorProto.BFLOAT16, w.shape, raw, raw=True)
            g.initializer.append(t)
            a16 = n.input[0] + f".{n.name}.bf16"
            y16 = n.output[0] + ".bf16"
            nodes.append(helper.make_node("Cast", [n.input[0]], [a16], to=TensorProto.BFLOAT16))
            nodes.append(helper.make_node("MatMul", [a16, t.name], [y16], name=n.name))
            nodes.append(helper.make_node("Cast", [y16], [n.output[0]], to=TensorProto.FLOAT))
        else:
            nodes.append(n)
    del g.node[:]
    g.node.extend(nodes)
    onnx.save(model, str(out))
    return out


def build_variants(
    wanted: list[str], calib: list[str], probe: list[str], max_length: int
) -> dict[str, Path]:
    QUANT.mkdir(parents=True, exist_ok=True)
    base = fused_graph()
    out: dict[str, Path] = {"fused-f32": base}
    for name in wanted:
        target = QUANT / f"{base.stem}-{name}.onnx"
        if name.startswith("dyn-int8-pc"):
            keep = int(name.split("keep")[1]) if "keep" in name else 0
            sens = sensitivity(base, probe) if keep else {}
            worst = sorted(sens, key=sens.__getitem__, reverse=True)[:keep]
            if not target.exists():
                dynamic(base, target, exclude=worst)
            if keep:
                print(f"{name}: float32 kept for {', '.join(worst)}", file=sys.stderr)
        elif name == "qdq-static" and not target.exists():
            static_qdq(base, target, calib, max_length)
        elif name == "bf16" and not target.exists():
            bf16(base, target)
        elif name == "int8-shipped":
            emb = Embedder(default_model_path(), default_tokenizer_path(),
                           cache_dir=QUANT / "fused", quantize=True)  # fmt: skip
            target = emb.graph_path
        out[name] = target
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", type=int, default=256, help="papers embedded per round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batches", default="8,16,32,64")
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--agree", type=int, default=500)
    ap.add_argument("--calib", type=int, default=128, help="calibration abstracts (QDQ)")
    ap.add_argument("--sens", type=int, default=48, help="abstracts per sensitivity probe")
    ap.add_argument(
        "--variants",
        default="dyn-int8-pc,dyn-int8-pc-keep4,int8-shipped,qdq-static,bf16",
    )
    ap.add_argument("--scifact", default="", help="comma-separated variants to score on SciFact")
    args = ap.parse_args()

    texts, queries = demo_texts(3 * max(args.papers, args.agree))
    timed, agree, calib = texts[0::3][: args.papers], texts[1::3][: args.agree], texts[2::3]
    # Calibration and sensitivity texts are disjoint from the timed and compared papers.
    variants = build_variants(
        args.variants.split(","), calib[: args.calib], calib[-args.sens :], args.max_length
    )
    batches = [int(b) for b in args.batches.split(",")]

    tok = default_tokenizer_path()
    emb: dict[str, Embedder] = {}
    failed: dict[str, str] = {}
    for name, path in variants.items():
        try:
            e = Embedder(path, tok, max_length=args.max_length)
            e.embed(timed[:8])
            emb[name] = e
        except Exception as exc:  # a variant onnxruntime cannot run: say so
            failed[name] = str(exc).splitlines()[0][:160]
    ref = emb["fused-f32"].embed(agree)
    cos = {n: (e.embed(agree) * ref).sum(axis=1) for n, e in emb.items()}

    load0 = os.getloadavg()
    rate: dict[tuple[str, int], list[float]] = {}
    cpu: dict[tuple[str, int], list[float]] = {}
    for r in range(args.rounds):
        for b in batches:
            names = list(emb) if (r + b) % 2 == 0 else list(emb)[::-1]
            for n in names:
                e = emb[n]
                e.batch_size = b
                c0, w0 = cpu_seconds(), time.perf_counter()
                e.embed(timed)
                rate.setdefault((n, b), []).append(len(timed) / (time.perf_counter() - w0))
                cpu.setdefault((n, b), []).append((cpu_seconds() - c0) / len(timed) * 1000)
    lat: dict[str, list[float]] = {n: [] for n in emb}
    for q in queries[:100]:
        for n, e in emb.items():
            t0 = time.perf_counter()
            e.embed_query(q)
            lat[n].append((time.perf_counter() - t0) * 1000)
    load1 = os.getloadavg()

    print(f"{len(timed)} demo papers per round, max_length {args.max_length}, {args.rounds} "
          f"interleaved rounds, load {load0[0]:.1f} before / {load1[0]:.1f} after")  # fmt: skip
    head = ["variant", "batch", "papers/s (median)", "best", "CPU ms/paper", "vs f32 (CPU)",
            "mean cos", "min cos", "query p50 ms"]  # fmt: skip
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for b in batches:
        base = statistics.median(cpu[("fused-f32", b)])
        for n in emb:
            c = statistics.median(cpu[(n, b)])
            print(f"| {n} | {b} | {statistics.median(rate[(n, b)]):.1f} | "
                  f"{max(rate[(n, b)]):.1f} | {c:.1f} | {base / c:.2f}x | "
                  f"{cos[n].mean():.5f} | {cos[n].min():.5f} | "
                  f"{statistics.median(lat[n]):.2f} |")  # fmt: skip
    for n, why in failed.items():
        print(f"| {n} | - | does not run: {why} | | | | | | |")

    if args.scifact:
        scifact_table(args.scifact.split(","), variants)


def scifact_table(names: list[str], variants: dict[str, Path]) -> None:
    """SciFact's claims in semantic and default hybrid mode, the variant embedding corpus
    and queries. ``fused-f32`` and ``int8-shipped`` run as a lab runs them (the default
    configuration, and ``[embedding] quantize = true``); other variants load their graph."""
    from bench import scifact

    sf = scifact.load()
    default, semantic = scifact.specs(quick=True)[0], scifact.specs(quick=True)[2]
    rows = []
    for n in names:
        setting: dict[str, Any] | None
        if n == "fused-f32":
            setting = None
        elif n == "int8-shipped":
            setting = {"quantize": True}
        else:
            setting = {"model": str(variants[n]), "tokenizer": str(default_tokenizer_path()),
                       "float32_cache": False}  # fmt: skip
        with tempfile.TemporaryDirectory(prefix="quant-scifact-") as tmp:
            info = scifact.build(sf, Path(tmp), embedding=setting)
            res = {
                s.mode: scifact.run(sf, Path(tmp), s, sf.queries, embedding=setting)
                for s in (semantic, default)
            }
        sem, hyb = res["semantic"], res["hybrid"]
        rows.append(
            f"| {n} | {len(sf.queries)} | {sem.mean_ndcg:.4f} | {sem.mean_recall:.4f} | "
            f"{hyb.mean_ndcg:.4f} | {hyb.mean_recall:.4f} | "
            f"{statistics.median(hyb.ms):.1f} | {info.get('embed', '')} |"
        )
        print(rows[-1], file=sys.stderr, flush=True)
    print(
        "\n| variant | claims | semantic nDCG@10 | semantic R@100 | hybrid (default) nDCG@10 "
        "| hybrid R@100 | hybrid p50 ms | corpus embedding |"
    )
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
