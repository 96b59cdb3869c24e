"""CPU of a filtered hybrid search in process, one checkout against another.

    .venv/bin/python bench/filtered_search.py --code OLD --code NEW [--size 0] [--queries 100]
        [--category cs] [--pairs 2] [--rounds 3]

Each checkout runs in a process of its own, one after the other, their order alternating
over ``--pairs``: the title queries in hybrid mode with a category filter, ``--rounds``
times (the query text changed each round, so nothing is answered from a cache), after a
warm-up. Process CPU per query, each round; the median over all rounds per checkout.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(ROOT))

from bench.common import git_revision, load_average, log, machine_info  # noqa: E402

CHILD = """
import sys, time
sys.path.insert(0, {code!r})
from bench import scale_data
from bench.common import bench_config
from bench.peers.compare import sample_docs, title_queries
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import open_engine

engine = open_engine(bench_config(scale_data.data_path({size})))
engine.data.vectors  # loads the vectors
queries = title_queries(sample_docs({size}), {n})
only = Filters(categories=({category!r},))
for q in queries[:10]:
    engine.search(SearchRequest(q, mode="hybrid", filters=only))
engine.facet_table.wait()
engine.researcher_table.wait()
engine.data.vectors.wait_checked()
for r in range({rounds}):
    c0 = time.process_time()
    for q in queries:
        engine.search(SearchRequest(q + " " * (r + 1), mode="hybrid", filters=only))
    print((time.process_time() - c0) * 1000 / len(queries), flush=True)
engine.close()
"""


def run_one(code: str, size: int, n: int, category: str, rounds: int) -> list[float]:
    script = CHILD.format(code=code, size=size, n=n, category=category, rounds=rounds)
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=code, check=True, capture_output=True, text=True
    ).stdout
    return [float(line) for line in out.split()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--code", action="append", required=True, help="a checkout (twice)")
    ap.add_argument("--size", type=int, default=0, help="scale directory: 10000, 100000, 0 = all")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--category", default="cs", help="the filter: a category or an archive")
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    times: dict[str, list[float]] = {c: [] for c in args.code}
    for p in range(args.pairs):
        for code in args.code if p % 2 == 0 else args.code[::-1]:
            ms = run_one(code, args.size, args.queries, args.category, args.rounds)
            times[code] += ms
            log(f"{code}: " + " / ".join(f"{x:.2f}" for x in ms))
    info = machine_info()
    print(
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {info['cpu']}; "
        f"{args.queries} title queries, hybrid, filter `{args.category}`, {args.pairs} "
        f"alternating runs of {args.rounds} rounds; load average at the end {load_average()}.\n"
    )
    print("| checkout | process CPU ms per query (median) | each round |\n| --- | ---: | --- |")
    for code, ms in times.items():
        each = " / ".join(f"{x:.2f}" for x in ms)
        print(f"| {git_revision(Path(code))} | {statistics.median(ms):.2f} | {each} |")


if __name__ == "__main__":
    main()
