"""A search's second strand beside it or inline, in process, one and two searches at once.

    .venv/bin/python bench/query_threads.py [--size 0] [--queries 200] [--rounds 8]
        [--mode hybrid] [--write]

One engine on a scale directory (result cache off). Rounds of every title query alternate
between the second strand always on the pool ("beside": Tantivy's passes beside hybrid's
embedding) and ``engine.query_threads``' choice (beside while one search runs, inline once
others do), the order swapped each pair; first with one thread searching (where the choice
is "beside", so inline is forced for the comparison), then with two at once, as the
server's two workers search. Process CPU per search (issue 23).
"""

from __future__ import annotations

import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import scale_data
from bench.common import bench_config, load_average, log, machine_info, publish, scale_parser
from bench.peers.compare import sample_docs, title_queries


def run(size: int, n: int, rounds: int, mode: str) -> str:
    from papersift.engine import query_threads
    from papersift.engine.results import SearchRequest
    from papersift.engine.search import open_engine

    engine = open_engine(bench_config(scale_data.data_path(size)))
    choose = query_threads.QueryThreads.executor
    policies: dict[str, Callable[[Any], Any]] = {
        "beside": lambda self: self._pool,
        "inline": lambda self: query_threads.INLINE,
        "choice": choose,
    }
    rows = []
    try:
        engine.facet_table.start()
        engine.facet_table.wait(timeout=300)
        queries = title_queries(sample_docs(size), n)

        def cpu_per_search(threads: int) -> float:
            parts = [queries[i::threads] for i in range(threads)]
            workers = [
                threading.Thread(
                    target=lambda part: [
                        engine.search(SearchRequest(q, mode=mode, page_size=24))  # type: ignore[arg-type]
                        for q in part
                    ],
                    args=(part,),
                )
                for part in parts
            ]
            c0 = time.process_time()
            for w in workers:
                w.start()
            for w in workers:
                w.join()
            return (time.process_time() - c0) * 1000 / len(queries)

        for threads, other in ((1, "inline"), (2, "choice")):
            cpu: dict[str, list[float]] = {"beside": [], other: []}
            for r in range(rounds):
                pair = ["beside", other] if r % 2 == 0 else [other, "beside"]
                for name in pair:
                    query_threads.QueryThreads.executor = policies[name]  # type: ignore[method-assign]
                    cpu_per_search(threads)  # warm
                    cpu[name].append(cpu_per_search(threads))
            diff = [o - b for o, b in zip(cpu[other], cpu["beside"], strict=True)]
            rows.append(
                f"| {threads} | {other} | {statistics.median(cpu['beside']):.2f} | "
                f"{statistics.median(cpu[other]):.2f} | {statistics.median(diff):+.2f} | "
                f"{sum(d < 0 for d in diff)} of {len(diff)} |"
            )
            log(f"query-threads: {rows[-1]}")
    finally:
        query_threads.QueryThreads.executor = choose  # type: ignore[method-assign]
        engine.close()
    info = machine_info()
    return (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {info['cpu']}, "
        f"revision {info['revision']}; scale directory {scale_data.label(size)}, {n} title "
        f"queries, {mode}, {rounds} rounds per policy alternating; load average at the end "
        f"{load_average()}.\n\n"
        "| searching at once | against | beside (ms of CPU per search, median round) | "
        "against | against - beside (median pair) | pairs where it was cheaper |\n"
        "| ---: | --- | ---: | ---: | ---: | ---: |\n" + "\n".join(rows) + "\n"
    )


def main() -> None:
    ap = scale_parser(__doc__, rounds=8)
    ap.add_argument("--mode", default="hybrid")
    args = ap.parse_args()
    scale_data.require(args.size)
    publish("query threads", run(args.size, args.queries, args.rounds, args.mode), args.write)


if __name__ == "__main__":
    main()
