"""Queries embedded by the int8 query graph against the float32 graph (issue 23).

    .venv/bin/python bench/query_int8.py [--size 0] [--queries 200] [--rounds 8]
        [--no-scifact] [--write]

``[embedding] query_int8`` runs a query's weight products on the model's own int8 weights
(``engine.onnx_int8``). Three questions, each answered side by side in one run:

1. How far do query vectors move? The cosine between both graphs' vectors of the title
   queries of a scale directory and of the 809 SciFact claims.
2. What does it save? Process CPU of the query embedding alone (both sessions in one
   process), then of whole hybrid searches on the scale directory, one at a time and two at
   once (one engine, result cache off, the embedder's query session swapped each round, an
   untimed round of each first, rounds alternating and the order swapped each pair, so a
   shared machine's drift falls on both).
3. What does it cost in quality? SciFact nDCG@10 and Recall@100 in hybrid, semantic and RRF
   mode with the setting on and off, and the 95% paired-bootstrap interval of the change
   (SciFact's 5,183 papers are searched exactly, so only the query vector differs).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import scale_data, scifact
from bench.common import (
    alternating_rounds,
    bench_config,
    cpu_ms_per,
    load_average,
    log,
    machine_info,
    paired_cells,
    publish,
    scale_parser,
    served_vectors,
    table,
)
from bench.peers.compare import sample_docs, title_queries
from papersift.engine import embed
from papersift.engine.embed import Embedder
from papersift.engine.model_graphs import graph_cache_dir
from papersift.engine.model_id import default_model_path, default_tokenizer_path
from papersift.engine.query import parse_user_query

SCIFACT_MODES: tuple[tuple[str, dict[str, str]], ...] = (
    ("hybrid", {}),
    ("semantic", {}),
    ("hybrid", {"fusion": "rrf"}),
)


def embedders(root: Path) -> dict[str, Embedder]:
    """Embedders of the directory's model on its graph cache: float32 and int8 queries."""
    return {
        name: Embedder(
            default_model_path(), default_tokenizer_path(), cache_dir=graph_cache_dir(root),
            query_int8=flag,
        )
        for name, flag in (("float32", False), ("int8", True))
    }  # fmt: skip


def vectors_and_steps(size: int, queries: list[str], claims: list[str], rounds: int) -> str:
    """Cosines of the two graphs' query vectors and the embedding's CPU per query."""
    emb = embedders(scale_data.data_path(size))
    log(f"query-int8: query graph {emb['int8'].query_graph_path.name}")
    lines = ["| texts | n | least cosine | median cosine |", "| --- | ---: | ---: | ---: |"]
    for label, texts in (("title queries", queries), ("SciFact claims", claims)):
        if not texts:
            continue
        plain = [parse_user_query(t).semantic_text or t for t in texts]
        cos = [float(emb["float32"].embed_query(t) @ emb["int8"].embed_query(t)) for t in plain]
        lines.append(f"| {label} | {len(cos)} | {min(cos):.5f} | {statistics.median(cos):.5f} |")
    current = [emb["float32"]]
    variants = {name: partial(current.__setitem__, 0, e) for name, e in emb.items()}
    timed = partial(cpu_ms_per, queries, lambda q: current[0].embed_query(q))
    cpu = alternating_rounds(variants, timed, rounds, "query-int8 embedding")
    f32, i8 = statistics.median(cpu["float32"]), statistics.median(cpu["int8"])
    log(f"query-int8: embedding {f32:.2f} vs {i8:.2f} ms")
    lines += [
        "",
        "| step | float32 (ms of CPU per query, median round) | int8 | int8 / float32 |",
        "| --- | ---: | ---: | ---: |",
        f"| the query embedding | {f32:.2f} | {i8:.2f} | {i8 / f32:.2f} |",
    ]
    return "\n".join(lines)


def whole_searches(size: int, queries: list[str], rounds: int) -> str:
    """Process CPU per hybrid search, one engine, the query session swapped per round: one
    search at a time, then two at once (as the server's two workers run them)."""
    from papersift.engine.results import SearchRequest
    from papersift.engine.search import open_engine

    engine = open_engine(bench_config(scale_data.data_path(size)))
    rows = []
    try:
        data = engine.data
        data._vectors = served_vectors(engine)  # as the server holds it
        engine.facet_table.start()
        engine.facet_table.wait(timeout=300)
        emb = data.embedder
        sessions = {
            "float32": emb._load(emb.graph_path, 1, emb.providers, spin=False),
            "int8": emb._for_queries(),
        }

        def search(q: str) -> object:
            return engine.search(SearchRequest(q, mode="hybrid", page_size=24))

        variants = {
            name: partial(setattr, emb, "_query_session", session)
            for name, session in sessions.items()
        }
        with ThreadPoolExecutor(max_workers=2) as pool:
            for switch in variants.values():  # one untimed round each: nothing cold
                switch()
                for q in queries:
                    search(q)

            def two_at_once() -> float:
                c0 = time.process_time()
                list(pool.map(search, queries))
                return (time.process_time() - c0) * 1000 / len(queries)

            for threads, timed in ((1, partial(cpu_ms_per, queries, search)), (2, two_at_once)):
                tag = f"query-int8 {threads} at once"
                cpu = alternating_rounds(variants, timed, rounds, tag)
                rows.append(
                    f"| hybrid, {scale_data.label(size)}, {threads} at once | "
                    + paired_cells(cpu, "float32", "int8")
                )
    finally:
        engine.close()
    return (
        "| search | float32 (ms of CPU per search, median round) | int8 | int8 - float32 "
        "(median pair) | pairs where int8 was cheaper |\n| --- | ---: | ---: | ---: | ---: |\n"
        + "\n".join(rows)
    )


def scifact_quality() -> str:
    """SciFact in three modes with query_int8 off and on, and the paired change."""
    sf = scifact.load()
    rows = []
    with tempfile.TemporaryDirectory(prefix="papersift-query-int8-") as tmp:
        data_dir = Path(tmp) / "data"
        scifact.build(sf, data_dir)
        for mode, search in SCIFACT_MODES:
            label = "hybrid RRF" if search else mode
            spec = scifact.RunSpec(label, mode, search)  # type: ignore[arg-type]
            res = {
                flag: scifact.run(sf, data_dir, spec, sf.queries, {"query_int8": flag})
                for flag in (False, True)
            }
            lo, hi = scifact.paired_ci(res[True].ndcg, res[False].ndcg)
            off, on = res[False], res[True]
            rows.append([
                label, f"{off.mean_ndcg:.4f}", f"{on.mean_ndcg:.4f}",
                f"{on.mean_ndcg - off.mean_ndcg:+.4f} [{lo:+.4f}, {hi:+.4f}]",
                f"{off.mean_recall:.4f}", f"{on.mean_recall:.4f}",
            ])  # fmt: skip
            log(f"query-int8: SciFact {rows[-1]}")
    return table(
        ["mode", "nDCG@10 float32", "int8", "int8 - float32 [95% paired CI]", "R@100 float32",
         "int8"],
        rows,
    )  # fmt: skip


def main() -> None:
    ap = scale_parser(__doc__, rounds=8)
    ap.add_argument("--no-scifact", action="store_true", help="skip the SciFact runs")
    args = ap.parse_args()
    scale_data.require(args.size)
    # Measure the int8 graph whether or not this CPU would choose it (it is used only where
    # it is clearly cheaper than float32; the tables below say whether it is here).
    embed.cpu_ratio = lambda *_: 0.0
    queries = title_queries(sample_docs(args.size), args.queries)
    claims = [] if args.no_scifact else [text for _, text in scifact.load().queries]
    parts = [vectors_and_steps(args.size, queries, claims, args.rounds)]
    parts.append(whole_searches(args.size, queries, args.rounds))
    if not args.no_scifact:
        parts.append(scifact_quality())
    info = machine_info()
    head = (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {info['cpu']}, "
        f"revision {info['revision']}; scale directory {scale_data.label(args.size)}, "
        f"{len(queries)} title queries, {args.rounds} rounds alternating; load average at "
        f"the end {load_average()}."
    )
    publish("query int8", head + "\n\n" + "\n\n".join(parts) + "\n", args.write)


if __name__ == "__main__":
    main()
