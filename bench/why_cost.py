"""CPU per API search request of two checkouts, in alternation: what "why this result"
(``engine.why``) adds to a search and its JSON.

    .venv/bin/python bench/why_cost.py OLD_CHECKOUT [--every 4] [--modes keyword,hybrid]
        [--pairs 3] [--page-size 20]
    .venv/bin/python bench/why_cost.py --in-process [--rounds 5] ...

The data is a slice of the demo corpus (every ``--every``-th paper, imported and embedded
once into ``bench/.cache/why-demo-<every>``). Each run is a fresh process of one checkout
(``git worktree add DIR REV``) that answers 100 queries (titles' first words and the scale
benchmark's hand queries) as ``/api/v1/search`` does, uncached: ``engine.search``, then
``server.bodies.search_body`` encoded by msgspec. Per query the median of 3 rounds of CPU
time (process time, all threads), after a warm-up; runs alternate old, new, old, new, so
the shared machine's drift falls on both.

On a loaded machine process against process drifts by more than the change costs, so
``--in-process`` times one process of this checkout instead, each request twice in
alternation (the order flipped every query): as it is, and with the search handing no
evidence to ``engine.hits.make_hits`` (``why`` null: the old path). The difference of the
two medians per query is what computing and encoding ``why`` costs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(ROOT))

from bench.common import CACHE, bench_config, git_revision  # noqa: E402

_CHILD = """
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
import msgspec
import papersift
from bench.common import bench_config
from papersift.engine.results import SearchRequest
from papersift.engine.search import open_engine
from papersift.server.bodies import search_body

assert papersift.__file__.startswith(sys.argv[1]), papersift.__file__
data, modes, size = sys.argv[2], sys.argv[3].split(","), int(sys.argv[4])
queries = json.loads(sys.argv[5])
engine = open_engine(bench_config(__import__("pathlib").Path(data)))
engine.data.vectors  # loaded before timing, as serve does

def answer(q, mode):
    result = engine.search(SearchRequest(q, mode=mode, page_size=size))
    return msgspec.json.encode(search_body(result, "http://localhost:8000", None, {}))

for mode in modes:
    for q in queries[:15]:
        answer(q, mode)
    engine.facet_table.wait()
    cpu = [[] for _ in queries]
    for _ in range(3):
        for i, q in enumerate(queries):
            c0 = time.process_time()
            answer(q, mode)
            cpu[i].append((time.process_time() - c0) * 1000)
    meds = sorted(statistics.median(c) for c in cpu)
    print(mode, round(statistics.median(meds), 3), round(statistics.mean(meds), 3))
engine.close()
"""


def build(every: int) -> Path:
    """The demo slice's data directory, imported and embedded once."""
    from papersift.engine.datadir import DataDir
    from papersift.indexer.build import import_files, index_backlog
    from tests.corpus import sample_records, write_jsonl

    path = CACHE / f"why-demo-{every}"
    if (path / "done").exists():
        return path
    source = write_jsonl(CACHE / f"why-demo-{every}.jsonl", sample_records(every))
    data = DataDir(bench_config(path))
    import_files(data, [source])
    index_backlog(data)
    data.close()
    (path / "done").write_text("ok\n")
    return path


def queries(path: Path) -> list[str]:
    """100 queries: the hand queries and the first 3-6 words of titles."""
    import json

    from bench.run_core import HAND_QUERIES

    lines = path.with_suffix(".jsonl").read_text(encoding="utf-8").splitlines()
    titles = [json.loads(line)["title"] for line in lines]
    picked = [" ".join(t.split()[: 3 + i % 4]) for i, t in enumerate(titles[::7])]
    return (list(HAND_QUERIES) + picked)[:100]


def run(checkout: Path, data: Path, modes: str, size: int, qs: list[str]) -> dict[str, float]:
    import json

    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(checkout), str(data), modes, str(size), json.dumps(qs)],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    rows = [line.split() for line in out.splitlines() if line.strip()]
    return {r[0]: float(r[1]) for r in rows if len(r) == 3}


def in_process(data: Path, modes: list[str], size: int, qs: list[str], rounds: int) -> None:
    """Each query with and without ``why``, alternating, in one process; medians."""
    import msgspec

    from papersift.engine import search as search_module
    from papersift.engine.results import SearchRequest
    from papersift.engine.search import open_engine
    from papersift.server.bodies import search_body

    engine = open_engine(bench_config(data))
    real = search_module._evidence

    def answer(q: str, mode: str, why: bool) -> float:
        search_module._evidence = real if why else (lambda *a, **k: None)  # type: ignore[assignment]
        c0 = time.process_time()
        result = engine.search(SearchRequest(q, mode=mode, page_size=size))  # type: ignore[arg-type]
        msgspec.json.encode(search_body(result, "http://localhost:8000", None, {}))
        return (time.process_time() - c0) * 1000

    print(f"{len(qs)} queries, page size {size}, {rounds} rounds, load {os.getloadavg()[0]:.1f}")
    print("| mode | CPU ms without why | with why | difference (median of per-query) |")
    print("| --- | --- | --- | --- |")
    for mode in modes:
        for q in qs[:15]:
            answer(q, mode, True)
        engine.facet_table.wait()
        off: list[list[float]] = [[] for _ in qs]
        on: list[list[float]] = [[] for _ in qs]
        for r in range(rounds):
            for i, q in enumerate(qs):
                for why in (True, False) if (i + r) % 2 else (False, True):
                    (on if why else off)[i].append(answer(q, mode, why))
        a = [statistics.median(x) for x in off]
        b = [statistics.median(x) for x in on]
        diff = statistics.median(y - x for x, y in zip(a, b, strict=True))
        print(f"| {mode} | {statistics.median(a):.3f} | {statistics.median(b):.3f} | "
              f"{diff:+.3f} |")  # fmt: skip
    search_module._evidence = real
    engine.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", type=Path, nargs="?", help="the other checkout (a git worktree)")
    ap.add_argument("--in-process", action="store_true", help="with and without why, one process")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--every", type=int, default=4, help="every n-th demo paper")
    ap.add_argument("--modes", default="keyword,hybrid")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--page-size", type=int, default=20)
    args = ap.parse_args()
    data = build(args.every)
    qs = queries(data)
    if args.in_process:
        in_process(data, args.modes.split(","), args.page_size, qs, args.rounds)
        return
    if args.old is None:
        ap.error("name the other checkout, or ask for --in-process")
    sides = {f"old {git_revision(args.old)}": args.old.resolve(), f"new {git_revision(ROOT)}": ROOT}
    rows = []
    for pair in range(args.pairs):
        for name, checkout in sides.items():
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            for mode, cpu in run(checkout, data, args.modes, args.page_size, qs).items():
                rows.append((pair + 1, name, mode, cpu, load))
            print(f"pair {pair + 1} {name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    print(f"{len(qs)} queries, page size {args.page_size}, demo slice every {args.every}")
    print("| pair | checkout | mode | CPU ms per request (median query) | load |")
    print("| --- | --- | --- | --- | --- |")
    for pair, name, mode, cpu, load in sorted(rows, key=lambda r: (r[2], r[0])):
        print(f"| {pair} | {name} | {mode} | {cpu:.3f} | {load:.1f} |")
    for mode in args.modes.split(","):
        for name in sides:
            cpus = [r[3] for r in rows if r[1] == name and r[2] == mode]
            print(f"{mode}, {name}: median CPU {statistics.median(cpus):.3f} ms")


if __name__ == "__main__":
    main()
