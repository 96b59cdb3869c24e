"""Search latency of two checkouts of papersift on one scale directory, in alternation.

    .venv/bin/python bench/ab_latency.py OLD_CHECKOUT [--size 0] [--modes keyword,hybrid]
        [--pairs 2]

A change that should not cost speed is best judged against the code before it, in the same
hour: this shared 2-core machine drifts by more than such a change costs between runs of
``run_all`` (keyword p50 at 663k papers: 7.98 ms one day, 10.2 ms the next for unchanged
code). Each run is a fresh process of one checkout (``git worktree add DIR REV``; its
``bench/.cache`` must point at this one's) timing the scale benchmark's 100 queries, 3
rounds after a warm-up, per query the median, wall and CPU (process time, all threads: the
figure that holds on a loaded machine); runs alternate old, new, old, new.
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

from bench.common import git_revision  # noqa: E402

# Run inside each checkout: its own engine code, the same queries and data directory.
_CHILD = """
import statistics, sys, time
sys.path.insert(0, sys.argv[1])
from bench import scale_data
from bench.common import bench_config
from bench.peers.compare import sample_docs, title_queries
from bench.scale import HAND_QUERIES
try:
    from papersift.engine.results import SearchRequest
    from papersift.engine.search import open_engine
except ImportError:  # a checkout from before the one-package layout (issue 20)
    from engine.results import SearchRequest
    from engine.search import open_engine

size, modes = int(sys.argv[2]), sys.argv[3].split(",")
engine = open_engine(bench_config(scale_data.data_path(size)))
engine.data.vectors  # loaded before timing, as serve does
queries = list(HAND_QUERIES) + title_queries(sample_docs(size), 100 - len(HAND_QUERIES))
for mode in modes:
    for q in queries[:15]:
        engine.search(SearchRequest(q, mode=mode))
    engine.facet_table.wait()
    # Background reads a checkout may start: not billed to the timed queries.
    if hasattr(engine, "researcher_table"):
        engine.researcher_table.wait()
    if hasattr(engine.data.vectors, "wait_checked"):
        engine.data.vectors.wait_checked()
    per = [[] for _ in queries]
    cpu = [[] for _ in queries]
    for _ in range(3):
        for i, q in enumerate(queries):
            t0, c0 = time.perf_counter(), time.process_time()
            engine.search(SearchRequest(q, mode=mode))
            per[i].append((time.perf_counter() - t0) * 1000)
            cpu[i].append((time.process_time() - c0) * 1000)
    meds = sorted(statistics.median(p) for p in per)
    cpus = sorted(statistics.median(c) for c in cpu)
    print(mode, round(statistics.median(meds), 2), round(meds[int(len(meds) * 0.95)], 2),
          round(statistics.median(cpus), 2), round(cpus[int(len(cpus) * 0.95)], 2))
engine.close()
"""


def run(checkout: Path, size: int, modes: str) -> dict[str, tuple[float, ...]]:
    """p50 and p95 ms and the median and p95 CPU ms (process time: every thread) per mode of
    one fresh process on ``checkout``."""
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(checkout), str(size), modes],
        cwd=checkout, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    rows = [line.split() for line in out.splitlines() if line.strip()]
    return {r[0]: tuple(float(x) for x in r[1:]) for r in rows if len(r) == 5}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", type=Path, help="the other checkout (a git worktree)")
    ap.add_argument("--size", type=int, default=0, help="scale directory: 10000, 100000, 0 = all")
    ap.add_argument("--modes", default="keyword,hybrid")
    ap.add_argument("--pairs", type=int, default=2)
    args = ap.parse_args()
    sides = {f"old {git_revision(args.old)}": args.old, f"new {git_revision(ROOT)}": ROOT}
    rows = []
    for pair in range(args.pairs):
        for name, checkout in sides.items():
            t0 = time.perf_counter()
            for mode, (p50, p95, cpu, cpu95) in run(checkout, args.size, args.modes).items():
                rows.append((pair + 1, name, mode, p50, p95, cpu, cpu95))
            print(f"pair {pair + 1} {name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    print("| pair | checkout | mode | p50 ms | p95 ms | CPU ms (median query) | CPU ms (p95) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for pair, name, mode, p50, p95, cpu, cpu95 in sorted(rows, key=lambda r: (r[2], r[0])):
        print(f"| {pair} | {name} | {mode} | {p50:.2f} | {p95:.2f} | {cpu:.2f} | {cpu95:.2f} |")
    for mode in args.modes.split(","):
        for name in sides:
            p50s = [r[3] for r in rows if r[1] == name and r[2] == mode]
            cpus = [r[5] for r in rows if r[1] == name and r[2] == mode]
            tails = [r[6] for r in rows if r[1] == name and r[2] == mode]
            print(f"{mode}, {name}: median p50 {statistics.median(p50s):.2f} ms, "
                  f"CPU {statistics.median(cpus):.2f} ms, CPU p95 "
                  f"{statistics.median(tails):.2f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
