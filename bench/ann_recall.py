"""Recall and CPU of the HNSW graph against exact search, on the cached scale directories.

    .venv/bin/python bench/ann_recall.py [--sizes 100000,0] [--queries 100] [--ef 1000,1500]
        [--build-efc 40,200]

Above ``[search] ann_above`` vectors the product answers semantic search from the HNSW graph
(``engine.ann``); issue 23 asks that its top 100 keep >= 0.98 of the exact top 100. Both
sides run through ``VectorIndex.search`` as the engine calls it (one FAISS thread, the top
``[search] candidates``): the directory's own index (graph) and the same vectors loaded
without a graph (a flat scan). The queries are the scale benchmark's title queries,
embedded by the directory's model. Prints one markdown row per size and efSearch.

``--build-efc`` instead builds graphs in memory from the directory's vectors with each
efConstruction given (as ``engine.ann.new_graph`` makes them) and times raw FAISS searches
on them against a flat scan: how graph quality trades against build time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import faiss
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script: make the repo root importable
    sys.path.insert(0, str(ROOT))

from bench import scale_data  # noqa: E402
from bench.common import bench_config, load_average  # noqa: E402
from bench.peers.compare import sample_docs, title_queries  # noqa: E402
from papersift.engine import ann  # noqa: E402
from papersift.engine.datadir import DataDir  # noqa: E402
from papersift.engine.vector_segments import read_segment  # noqa: E402
from papersift.engine.vectors import VectorIndex  # noqa: E402


def _timed(search: VectorIndex, queries: list[np.ndarray], k: int) -> tuple[list[list[int]], float]:
    """Docids of each query's top ``k`` and the CPU ms per query."""
    found = []
    c0 = time.process_time()
    for q in queries:
        found.append([d for d, _ in search.search(q, k)])
    return found, (time.process_time() - c0) * 1000 / len(queries)


def _recall(approx: list[list[int]], exact: list[list[int]], at: int) -> tuple[float, float]:
    """Mean and worst share of each exact top ``at`` that the approximate top ``at`` holds."""
    shares = [
        len(set(a[:at]) & set(e[:at])) / max(1, len(e[:at]))
        for a, e in zip(approx, exact, strict=True)
    ]
    return statistics.fmean(shares), min(shares)


def built_graphs(size: int, n_queries: int, builds: list[int], efs: list[int]) -> None:
    """Graphs built here with each efConstruction, searched by raw FAISS (one thread)."""
    config = bench_config(scale_data.data_path(size))
    data = DataDir(config, create=False)
    try:
        (segment,) = data.vectors.segments()[:1]
        vectors = np.ascontiguousarray(read_segment(segment)[2], np.float32)
        texts = title_queries(sample_docs(size), n_queries)
        queries = [data.embedder.embed_query(t).reshape(1, -1) for t in texts]
    finally:
        data.close()
    k = config.search.candidates
    flat = faiss.IndexFlatIP(vectors.shape[1])
    flat.add(vectors)
    exact = [flat.search(q, k)[1][0].tolist() for q in queries]
    print("| papers | efConstruction | build s (2 threads) | efSearch | CPU ms/query | "
          "recall@10 | recall@100 (worst) | load |")  # fmt: skip
    print("| ---: | ---: | ---: | ---: | ---: | --- | --- | --- |")
    for efc in builds:
        graph = ann.new_graph(vectors.shape[1], efc)
        faiss.omp_set_num_threads(2)
        t0 = time.perf_counter()
        graph.add(vectors)
        build_s = time.perf_counter() - t0
        faiss.omp_set_num_threads(1)
        for ef in efs:
            params = faiss.SearchParametersHNSW()  # type: ignore[attr-defined]
            params.efSearch = ef
            c0 = time.process_time()
            approx = [graph.search(q, k, params=params)[1][0].tolist() for q in queries]
            ms = (time.process_time() - c0) * 1000 / len(queries)
            r10 = _recall(approx, exact, 10)[0]
            r100, worst = _recall(approx, exact, 100)
            print(f"| {len(vectors):,} | {efc} | {build_s:.0f} | {ef} | {ms:.2f} | {r10:.4f} | "
                  f"{r100:.4f} ({worst:.2f}) | {load_average()} |")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,0", help="scale directories (0: all papers)")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--ef", default="", help="efSearch values to try (default: the config's)")
    ap.add_argument("--build-efc", default="", help="efConstruction values to build and try")
    args = ap.parse_args()
    faiss.omp_set_num_threads(1)  # as SearchEngine runs searches
    if args.build_efc:
        efs = [int(e) for e in args.ef.split(",") if e] or [1000, 1500]
        builds = [int(e) for e in args.build_efc.split(",")]
        for size in (int(s) for s in args.sizes.split(",")):
            built_graphs(size, args.queries, builds, efs)
        return
    print("| papers | vectors | efSearch | graph CPU ms/query | exact CPU ms/query | "
          "recall@10 (worst) | recall@100 (worst) | recall@1000 (worst) | load |")  # fmt: skip
    print("| ---: | --- | ---: | ---: | ---: | --- | --- | --- | --- |")
    for size in (int(s) for s in args.sizes.split(",")):
        meta = scale_data.read_meta(size)
        if meta is None:
            sys.exit(f"no cached {scale_data.label(size)} directory: run bench/scale_data.py")
        config = bench_config(scale_data.data_path(size))
        data = DataDir(config, create=False)
        try:
            graph = data.vectors
            if not graph.has_graph:
                print(f"| {meta['papers']:,} | no graph (at most ann_above) | | | | | | | |")
                continue
            flat = VectorIndex(graph.folder, graph.dim, graphs=False)
            flat.load(data.store.text_hashes)
            texts = title_queries(sample_docs(size), args.queries)
            queries = [data.embedder.embed_query(t) for t in texts]
            k = config.search.candidates
            exact, exact_ms = _timed(flat, queries, k)
            for ef in [int(e) for e in args.ef.split(",") if e] or [graph.ann_ef]:
                graph.ann_ef = ef
                _timed(graph, queries[:10], k)  # warm the mapped graph
                approx, graph_ms = _timed(graph, queries, k)
                cells = [
                    f"{m:.4f} ({w:.2f})"
                    for m, w in (_recall(approx, exact, at) for at in (10, 100, k))
                ]
                kind = "recycled" if "recycled" in meta["vectors"] else "real"
                print(f"| {meta['papers']:,} | {kind} | {ef} | {graph_ms:.2f} | {exact_ms:.2f} | "
                      f"{' | '.join(cells)} | {load_average()} |")  # fmt: skip
        finally:
            data.close()


if __name__ == "__main__":
    main()
