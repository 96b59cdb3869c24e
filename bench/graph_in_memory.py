"""Whole searches with the vector graph mapped against read into memory, in one process.

    .venv/bin/python bench/graph_in_memory.py [--size 0] [--queries 200] [--rounds 8]
        [--modes hybrid,keyword] [--write]

One engine on a scale directory (result cache off) holds two vector indexes of the same
segment: the graph mapped from its file, as CLI commands open it, and read into memory on
huge pages, as ``serve`` does (``[server] graph_in_memory``, ``engine.huge_pages``). Rounds
of every title query alternate between the two, the order swapped each pair, so the noise
of a shared machine falls on both alike; process CPU per search, per round. The graph's own
step is in ``bench/search_steps.py``; this says what the whole search gains (issue 23).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import scale_data
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
)
from bench.peers.compare import sample_docs, title_queries
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine, open_engine


def _search(engine: SearchEngine, mode: str, q: str) -> object:
    return engine.search(SearchRequest(q, mode=mode, page_size=24))  # type: ignore[arg-type]


def _warm_then_time(queries: list[str], search: Callable[[str], object]) -> float:
    for q in queries[:50]:  # warm this graph's pages again
        search(q)
    return cpu_ms_per(queries, search)


def run(size: int, n: int, rounds: int, modes: list[str]) -> str:
    engine = open_engine(bench_config(scale_data.data_path(size)))
    rows = []
    try:
        data = engine.data
        mapped, in_memory = data.vectors, served_vectors(engine)
        engine.facet_table.start()
        engine.facet_table.wait(timeout=300)
        queries = title_queries(sample_docs(size), n)
        variants = {
            "mapped": lambda: setattr(data, "_vectors", mapped),
            "in memory": lambda: setattr(data, "_vectors", in_memory),
        }
        for mode in modes:
            search = partial(_search, engine, mode)
            timed = partial(_warm_then_time, queries, search)
            cpu = alternating_rounds(variants, timed, rounds, f"graph-in-memory {mode}")
            rows.append(f"| {mode} | {paired_cells(cpu, 'mapped', 'in memory')}")
            log(f"graph-in-memory: {rows[-1]}")
    finally:
        engine.close()
    info = machine_info()
    return (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {info['cpu']}, "
        f"revision {info['revision']}; scale directory {scale_data.label(size)}, {n} title "
        f"queries, {rounds} rounds per graph alternating; load average at the end "
        f"{load_average()}.\n\n"
        "| mode | mapped (ms of CPU per search, median round) | in memory | in memory - mapped "
        "(median pair) | pairs where in memory was cheaper |\n| --- | ---: | ---: | ---: | ---: |\n"
        + "\n".join(rows)
        + "\n"
    )


def main() -> None:
    ap = scale_parser(__doc__, rounds=8)
    ap.add_argument("--modes", default="hybrid,keyword")
    args = ap.parse_args()
    scale_data.require(args.size)
    modes = args.modes.split(",")
    publish("graph in memory", run(args.size, args.queries, args.rounds, modes), args.write)


if __name__ == "__main__":
    main()
