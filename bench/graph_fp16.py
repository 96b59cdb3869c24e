"""The vector graph's vectors in float16 against float32, in one process (issue 23).

    .venv/bin/python bench/graph_fp16.py [--size 0] [--queries 200] [--rounds 8] [--write]

Compaction builds the graph over float16 vectors (``engine.ann.new_graph``); a graph built
before holds float32. This builds whichever of the two the scale directory's graph is not
into ``bench/.cache/graphs-<size>/`` (float32 with FAISS's ``IndexHNSWFlat``, as compaction
did before; float16 with ``engine.ann.build``), then reads both into memory as ``serve``
does and measures, side by side:

1. each graph's file size and build time (when built here);
2. the graph's top 1,000 alone (``VectorIndex.ranking``, as the engine calls it): CPU per
   query, recall@100 against a scan of the float32 vectors, the largest score error in the
   top 100;
3. whole hybrid searches: one engine (result cache off), its vector index swapped each round,
   an untimed round of each first, rounds alternating and the order swapped each pair.
"""

from __future__ import annotations

import statistics
import sys
import time
from functools import partial
from pathlib import Path

import faiss
import numpy as np

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import scale_data
from bench.common import (
    CACHE,
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
)
from bench.peers.compare import sample_docs, title_queries
from papersift.engine import ann
from papersift.engine.search import SearchEngine, open_engine
from papersift.engine.vector_segments import read_segment
from papersift.engine.vectors import VectorIndex

CANDIDATES = 1000  # [search] candidates' default


def graph_kind(path: Path) -> str:
    index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC)
    assert isinstance(index, faiss.IndexHNSW), path
    storage = faiss.downcast_index(index.storage)
    return "float16" if isinstance(storage, faiss.IndexScalarQuantizer) else "float32"


def build_float32(vectors: np.ndarray, path: Path) -> None:
    """The graph as compaction built it before float16: the same M and efConstruction."""
    index = faiss.IndexHNSWFlat(vectors.shape[1], ann.HNSW_M, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = ann.EF_CONSTRUCTION
    faiss.omp_set_num_threads(2)
    for start in range(0, len(vectors), ann.BUILD_CHUNK):
        index.add(np.ascontiguousarray(vectors[start : start + ann.BUILD_CHUNK]))
    faiss.write_index(index, str(path))


def graphs(engine: SearchEngine, size: int) -> tuple[dict[str, VectorIndex], list[str]]:
    """Both kinds of graph over the directory's oldest segment, each served from a folder of
    links (the segments, and that kind's graph), read into memory; and notes on each."""
    mapped = engine.data.vectors
    segments = mapped.segments()
    first = segments[0]
    own = ann.graph_path(first)
    if not own.exists():
        raise SystemExit(f"{scale_data.label(size)}: no vector graph (below [search] ann_above)")
    cache = CACHE / f"graphs-{scale_data.label(size)}"
    cache.mkdir(parents=True, exist_ok=True)
    files = {graph_kind(own): own}
    notes = [f"the directory's graph is {next(iter(files))} ({own.stat().st_size / 1e6:.0f} MB)"]
    for kind in ("float32", "float16"):
        path = cache / f"{first.stem}-{kind}.hnsw"
        if kind not in files and not path.exists():
            _, _, vectors = read_segment(first, mapped.dim)
            log(f"graph-fp16: building the {kind} graph of {len(vectors):,} vectors")
            t0 = time.perf_counter()
            if kind == "float32":
                build_float32(np.ascontiguousarray(vectors, np.float32), path)
            else:
                ann.build(np.ascontiguousarray(vectors, np.float32), path)
            notes.append(f"{kind} built here in {time.perf_counter() - t0:.0f} s (2 threads)")
        files.setdefault(kind, path)
    served: dict[str, VectorIndex] = {}
    for kind, path in files.items():
        folder = cache / kind
        folder.mkdir(exist_ok=True)
        for link in folder.iterdir():
            link.unlink()
        for seg in segments:
            (folder / seg.name).symlink_to(seg.resolve())
        (folder / own.name).symlink_to(path.resolve())
        notes.append(f"{kind}: {path.stat().st_size / 1e6:.0f} MB")
        served[kind] = served_vectors(engine, folder)
    return served, notes


def run(size: int, n: int, rounds: int) -> str:
    from papersift.engine.results import SearchRequest

    engine = open_engine(bench_config(scale_data.data_path(size)))
    try:
        served, notes = graphs(engine, size)
        engine.facet_table.start()
        engine.facet_table.wait(timeout=300)
        queries = title_queries(sample_docs(size), n)
        embedder = engine.data.embedder
        qvecs = np.stack([embedder.embed_query(q) for q in queries])
        seg_ids, _, vectors = read_segment(engine.data.vectors.segments()[0], qvecs.shape[1])
        exact = np.asarray(vectors, np.float32) @ qvecs.T  # [rows, queries]
        row_of = np.full(int(seg_ids.max()) + 1, -1, np.int64)
        row_of[seg_ids] = np.arange(len(seg_ids))
        step_rows = []
        for kind, vi in served.items():
            for q in qvecs[:30]:
                vi.ranking(q, CANDIDATES)
            c0 = time.process_time()
            found = [vi.ranking(q, CANDIDATES) for q in qvecs]
            ms = (time.process_time() - c0) * 1000 / len(qvecs)
            recall, error = [], []
            for i, got in enumerate(found):
                top = set(np.argpartition(-exact[:, i], 100)[:100].tolist())
                rows = row_of[got.ids[:100]]
                recall.append(len(top & set(rows.tolist())) / 100)
                error.append(float(np.abs(got.scores[:100] - exact[rows, i]).max()))
            step_rows.append(
                f"| {kind} | {ms:.2f} | {statistics.mean(recall):.3f} | {max(error):.1e} |"
            )
            log(f"graph-fp16: {step_rows[-1]}")

        def search(q: str) -> object:
            return engine.search(SearchRequest(q, mode="hybrid", page_size=24))

        data = engine.data
        variants = {kind: partial(setattr, data, "_vectors", vi) for kind, vi in served.items()}
        for switch in variants.values():  # an untimed round of each
            switch()
            for q in queries:
                search(q)
        timed = partial(cpu_ms_per, queries, search)
        cpu = alternating_rounds(variants, timed, rounds, "graph-fp16")
    finally:
        engine.close()
    info = machine_info()
    return (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {info['cpu']}, "
        f"revision {info['revision']}; scale directory {scale_data.label(size)}, {n} title "
        f"queries (int8 query vectors), {rounds} rounds alternating; load average at the end "
        f"{load_average()}. Graphs: " + "; ".join(notes) + ".\n\n"
        "| graph's vectors | top 1,000 (ms of CPU per query) | recall@100 against a float32 "
        "scan | largest score error in the top 100 |\n| --- | ---: | ---: | ---: |\n"
        + "\n".join(step_rows)
        + "\n\n| search | float32 graph (ms of CPU per search, median round) | float16 | float16 - "
        "float32 (median pair) | pairs where float16 was cheaper |\n"
        "| --- | ---: | ---: | ---: | ---: |\n"
        f"| hybrid, {scale_data.label(size)} | {paired_cells(cpu, 'float32', 'float16')}\n"
    )


def main() -> None:
    ap = scale_parser(__doc__, rounds=8)
    args = ap.parse_args()
    scale_data.require(args.size)
    publish("graph fp16", run(args.size, args.queries, args.rounds), args.write)


if __name__ == "__main__":
    main()
