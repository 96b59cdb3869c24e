"""Search latency while a background job runs in the same process, or in another one.

    .venv/bin/python bench/search_beside_jobs.py [--size 0] [--queries 60] [--rounds 2]
        [--chunk 8] [--write]

``serve`` runs its jobs (the embedding backlog, harvests, enrichment) on threads of the
process that answers searches. A job that spends its time in native code which lets go of
the GIL (onnxruntime, SQLite, lxml's parser) competes with the searches only for the cores;
one that runs Python holds the GIL, and every search waits at each of its own native calls
for the job's thread to give the GIL back (Python's switch interval, 5 ms). This measures
which of the two the embedding backlog is, against the alternative of running it in a child
process, with a pure-Python loop as the other extreme. In process, one searching thread,
title queries (bench/peers/compare.py) in keyword and hybrid mode; the variants alternate
round by round:

- *idle*: nothing beside the searches;
- *embedding, thread*: the backlog's work (``Embedder.embed`` of real titles and abstracts
  from the store, ``--chunk`` papers a call) on a thread of this process, as ``serve`` runs it;
- *embedding, process*: the same loop in a child process (its own model);
- *harvest parsing, thread*: a thread parsing a recorded arXiv OAI-PMH page over and over, the
  CPU work of a harvest (whose fetches, 3 s apart, wait without the GIL);
- *Python, thread*: a thread running a pure-Python loop (a job that never lets go of the GIL).

Each embedding variant starts timing once its first chunk is done (the model loaded). The
table gives the search latency (wall, ms) and the papers the job embedded per second meanwhile.
"""

from __future__ import annotations

import multiprocessing as mp
import statistics
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scale_data
from bench.common import (
    bench_config,
    load_average,
    log,
    machine_info,
    percentile,
    publish,
    scale_parser,
    served_vectors,
    table,
)
from bench.peers.compare import sample_docs, title_queries
from papersift.engine.embed import Embedder
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine, open_engine

MODES = ("keyword", "hybrid")
VARIANTS = (
    "idle", "embedding, thread", "embedding, process", "harvest parsing, thread", "Python, thread",
)  # fmt: skip
# A recorded arXiv OAI-PMH ListRecords page (tests/fixtures/oai): the harvest's own CPU work.
OAI_PAGE = (
    Path(__file__).resolve().parent.parent
    / "tests"
    / "fixtures"
    / "oai"
    / "ListRecordsResponse.xml"
)
TEXTS = 1024  # papers whose text the embedding job cycles through


def embed_chunks(
    embedder: Embedder, texts: list[str], chunk: int, stop: Any, done: Synchronized[int]
) -> None:
    """Embed ``texts`` ``chunk`` at a time until ``stop`` is set, counting in ``done``."""
    start = 0
    while not stop.is_set():
        batch = texts[start : start + chunk] or texts[:chunk]
        embedder.embed(batch)
        with done.get_lock():
            done.value += len(batch)
        start = (start + chunk) % len(texts)


def embed_in_child(
    size: int, texts: list[str], chunk: int, stop: Any, done: Synchronized[int]
) -> None:
    """``embed_chunks`` in a spawned process, with a model of its own."""
    from papersift.engine.datadir import DataDir

    data = DataDir(bench_config(scale_data.data_path(size)), create=False)
    try:
        embed_chunks(data.indexing_embedder, texts, chunk, stop, done)
    finally:
        data.close()


def parse_loop(stop: threading.Event, done: Synchronized[int]) -> None:
    """Parse a recorded OAI-PMH page into papers until ``stop`` is set, as a harvest does
    each page it fetches (lxml, then the records as ``Paper``)."""
    from papersift.indexer.oai import parse_response

    body = OAI_PAGE.read_bytes()
    while not stop.is_set():
        page = parse_response(200, body)
        with done.get_lock():
            done.value += len(page.papers)


def python_loop(stop: threading.Event, done: Synchronized[int]) -> None:
    """Pure Python until ``stop`` is set: the GIL is let go only when Python forces it."""
    x = 0
    while not stop.is_set():
        for i in range(1000):
            x += i * i % 7


def timed(engine: SearchEngine, queries: list[str], mode: str, page: int) -> list[float]:
    """Wall ms of each query's search (``page``: a page not asked for before, as the result
    cache is off anyway)."""
    out = []
    for q in queries:
        t0 = time.perf_counter()
        engine.search(SearchRequest(q, mode=mode, page=page))  # type: ignore[arg-type]
        out.append((time.perf_counter() - t0) * 1000)
    return out


def background(
    variant: str, engine: SearchEngine, size: int, texts: list[str], chunk: int
) -> tuple[Callable[[], None], Synchronized[int]]:
    """Start ``variant``'s job; returns how to stop it and its count of papers embedded."""
    ctx = mp.get_context("spawn")
    done: Synchronized[int] = ctx.Value("q", 0)
    if variant == "idle":
        return lambda: None, done
    if variant == "embedding, process":
        stop_p = ctx.Event()
        proc = ctx.Process(target=embed_in_child, args=(size, texts, chunk, stop_p, done))
        proc.start()

        def stopper() -> None:
            stop_p.set()
            proc.join()

    else:
        stop_t = threading.Event()
        target: Callable[..., None] = python_loop
        args: tuple[Any, ...] = (stop_t, done)
        if variant == "embedding, thread":
            target = embed_chunks
            args = (engine.data.indexing_embedder, texts, chunk, stop_t, done)
        elif variant == "harvest parsing, thread":
            target = parse_loop
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()

        def stopper() -> None:
            stop_t.set()
            thread.join()

    if variant.startswith("embedding"):
        while done.value == 0:  # the model loaded and a first chunk embedded
            time.sleep(0.1)
    return stopper, done


def main() -> None:
    ap = scale_parser(__doc__, queries=60, rounds=2)
    ap.add_argument("--chunk", type=int, default=8, help="papers per embedding call")
    args = ap.parse_args()
    engine = open_engine(bench_config(scale_data.data_path(args.size)))
    engine.data._vectors = served_vectors(engine)  # as serve holds them
    engine.facet_table.start()
    engine.facet_table.wait(timeout=600)
    queries = title_queries(sample_docs(args.size), args.queries)
    store = engine.data.store
    papers = store.get(list(range(1, TEXTS + 1)))
    texts = [f"{p.title}. {p.abstract}" for p in papers.values()]
    for mode in MODES:  # warm: model session, searchers, tables
        timed(engine, queries, mode, 1)
    walls: dict[tuple[str, str], list[float]] = {(v, m): [] for v in VARIANTS for m in MODES}
    rates: dict[str, list[float]] = {v: [] for v in VARIANTS}
    page = 2
    for rnd in range(args.rounds):
        order = VARIANTS if rnd % 2 == 0 else VARIANTS[::-1]
        for variant in order:
            stop, done = background(variant, engine, args.size, texts, args.chunk)
            n0, t0 = done.value, time.perf_counter()
            for mode in MODES:
                walls[variant, mode] += timed(engine, queries, mode, page)
                page += 1
            if variant != "idle" and not variant.startswith("Python"):
                rates[variant].append((done.value - n0) / (time.perf_counter() - t0))
            stop()
            log(f"round {rnd + 1} {variant}: done")
    engine.close()
    rows = []
    for variant in VARIANTS:
        cells: list[str] = [variant]
        for mode in MODES:
            w = walls[variant, mode]
            cells += [f"{statistics.median(w):.1f}", f"{percentile(w, 90):.1f}"]
        cells.append(f"{statistics.fmean(rates[variant]):.0f}" if rates[variant] else "")
        rows.append(cells)
    info = machine_info()
    head = (
        f"{len(queries)} title queries x {args.rounds} rounds per variant and mode, "
        f"scale directory {args.size or 'full'}; {info['cpu']}, {info['cores']} cores; "
        f"revision {info['revision']}; load {load_average()} at the end\n\n"
    )
    headers = ["beside the searches", "keyword p50 ms", "p90", "hybrid p50 ms", "p90",
               "papers/s embedded or parsed"]  # fmt: skip
    publish("search-beside-jobs", head + table(headers, rows), args.write)


if __name__ == "__main__":
    main()
