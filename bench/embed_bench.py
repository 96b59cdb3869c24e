"""Benchmark of engine.embed: graph variants A/B in one process, interleaved; vector agreement.

Variants: ``shipped`` (the int8 model as is, de-quantised at load), ``float32`` (the saved
float32 graph), ``fused`` (float32 with attention and GELU fused: what ``Embedder`` loads with
a cache directory, the default), and with ``--dynamic-int8`` a dynamically re-quantised copy
of the float32 graph (for comparison only: it changes the vectors). ``--threads`` takes a
list (``0,1``: onnxruntime's default and one thread). All variants are loaded first; then
every round embeds the same papers once per variant, in alternating order, and records the
process CPU time (``os.times``, all threads) and the wall time. The machine is shared, so
the table gives medians over rounds: CPU ms per paper is the steadier figure (spinning
onnxruntime threads count as CPU), papers/s the wall rate as the machine was.

    .venv/bin/python bench/embed_bench.py [--papers 128] [--batch 8] [--rounds 5]
        [--threads 0] [--variants shipped,float32,fused] [--dynamic-int8] [--agree 500]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tokenizers import Tokenizer

from papersift.core.resources import demo_corpus_path
from papersift.engine.embed import Embedder
from papersift.engine.model_graphs import float32_graph
from papersift.engine.model_id import default_model_path, default_tokenizer_path, sha256_file


def demo_texts(n: int) -> tuple[list[str], list[str]]:
    """``n`` paper texts (title. abstract, as the indexer embeds them) spread over the demo
    corpus, and short queries made of the first words of other titles."""
    with gzip.open(demo_corpus_path(), "rt", encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh]
    step = max(1, len(records) // n)
    papers = [" ".join(f"{r['title']}. {r['abstract']}".split()) for r in records[::step][:n]]
    queries = [" ".join(r["title"].split()[:4]) for r in records[step // 2 :: step][:200]]
    return papers, queries


def cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system


def build_graphs(tmp: Path, dynamic: bool) -> dict[str, Path | None]:
    """Graph files by variant; None: load the model with a cache directory (fused)."""
    src = default_model_path()
    graphs: dict[str, Path | None] = {"shipped": src}
    graphs["float32"] = float32_graph(src, sha256_file(src), tmp / "f32")
    graphs["fused"] = None
    if dynamic:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        out = tmp / "dynamic-int8.onnx"
        quantize_dynamic(str(graphs["float32"]), str(out), weight_type=QuantType.QInt8)
        graphs["dynamic-int8"] = out
    return graphs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", type=int, default=128, help="papers embedded per round")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", default="0", help="comma-separated intra-op thread counts")
    ap.add_argument("--variants", default="shipped,float32,fused")
    ap.add_argument("--dynamic-int8", action="store_true", help="also a re-quantised graph")
    ap.add_argument("--agree", type=int, default=500, help="papers for the vector agreement")
    ap.add_argument("--queries", type=int, default=100, help="queries timed per variant")
    args = ap.parse_args()

    texts, queries = demo_texts(max(args.papers, args.agree))
    tok = Tokenizer.from_file(str(default_tokenizer_path()))
    tok.enable_truncation(args.max_length)
    tok.no_padding()
    lengths = [len(e.ids) for e in tok.encode_batch(texts)]
    step = max(1, len(texts) // args.papers)
    timed = texts[::step][: args.papers]  # spread over the corpus: real length mix

    names = args.variants.split(",") + (["dynamic-int8"] if args.dynamic_int8 else [])
    with tempfile.TemporaryDirectory(prefix="embed-bench-") as tmp_name:
        tmp = Path(tmp_name)
        graphs = build_graphs(tmp, args.dynamic_int8)
        embedders: dict[str, Embedder] = {}
        load_s: dict[str, float] = {}
        for threads in map(int, args.threads.split(",")):
            for name in names:
                key = f"{name} t{threads}"
                t0 = time.perf_counter()
                graph = graphs[name]
                embedders[key] = Embedder(
                    graph or default_model_path(),
                    default_tokenizer_path(),
                    max_length=args.max_length,
                    batch_size=args.batch,
                    threads=threads,
                    cache_dir=(tmp / "fused") if graph is None else None,
                )
                load_s[key] = time.perf_counter() - t0  # fused: the first includes the build
                embedders[key].embed(timed[-args.batch :])  # warm-up

        # Vector agreement with the shipped graph (same threads), on --agree papers.
        ref_key = next((k for k in embedders if k.startswith("shipped")), None)
        agree: dict[str, tuple[float, float]] = {}
        if ref_key is not None and args.agree:
            sample = texts[: args.agree]
            ref = embedders[ref_key].embed(sample)
            for key, emb in embedders.items():
                vecs = emb.embed(sample)
                cos = (vecs * ref).sum(axis=1)
                agree[key] = (float(np.abs(vecs - ref).max()), float(cos.min()))

        cpu: dict[str, list[float]] = {k: [] for k in embedders}
        rate: dict[str, list[float]] = {k: [] for k in embedders}
        load_before = os.getloadavg()[0]
        for r in range(args.rounds):
            keys = list(embedders) if r % 2 == 0 else list(embedders)[::-1]
            for key in keys:
                c0, w0 = cpu_seconds(), time.perf_counter()
                embedders[key].embed(timed)
                cpu[key].append((cpu_seconds() - c0) / len(timed))
                rate[key].append(len(timed) / (time.perf_counter() - w0))
        lat: dict[str, list[float]] = {k: [] for k in embedders}
        for q in queries[: args.queries]:
            for key, emb in embedders.items():
                q0 = time.perf_counter()
                emb.embed_query(q)
                lat[key].append((time.perf_counter() - q0) * 1000)

    tokens = [lengths[texts.index(t)] for t in timed]
    print(
        f"{len(timed)} demo papers (title. abstract; mean {statistics.mean(tokens):.0f} tokens, "
        f"max_length {args.max_length}), batch {args.batch}, {args.rounds} interleaved rounds, "
        f"{os.cpu_count()} CPUs, load average {load_before:.1f} before / "
        f"{os.getloadavg()[0]:.1f} after"
    )
    head = ("graph", "threads", "CPU ms/paper", "vs first", "papers/s", "best papers/s",
            "query p50 ms", "load s", "max abs diff", "min cosine")  # fmt: skip
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("-" * (len(h) + 2) for h in head) + "|")
    first = statistics.median(next(iter(cpu.values())))
    for key in embedders:
        name, nthreads = key.rsplit(" t", 1)
        med = statistics.median(cpu[key])
        diff, cos = agree.get(key, (float("nan"), float("nan")))
        cells = [
            name,
            nthreads,
            f"{med * 1000:.1f}",
            f"{first / med:.2f}x",
            f"{statistics.median(rate[key]):.1f}",
            f"{max(rate[key]):.1f}",
            f"{statistics.median(lat[key]):.2f}",
            f"{load_s[key]:.2f}",
            f"{diff:.1e}",
            f"{cos:.6f}",
        ]
        print("| " + " | ".join(c.rjust(len(h)) for c, h in zip(cells, head, strict=True)) + " |")


if __name__ == "__main__":
    main()
