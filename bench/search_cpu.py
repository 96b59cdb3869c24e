"""CPU per new search over HTTP: uncached `/api/v1/search` by mode (issue 23).

    .venv/bin/python bench/search_cpu.py [--size 0] [--modes hybrid,keyword] [--seconds 10]
        [--repeats 3] [--concurrency 8] [--code CHECKOUT [--code CHECKOUT]]

One `papersift serve` (bench/http_load.py's ``Server``) on a cached scale directory with the
result cache off (``[search] cache_size = 0``), so every request is a full search; wrk in a
separate process on loopback cycles through 200 title queries of that directory, modes
alternating run by run. *CPU ms/request* is the server process's user + system CPU time over
the run (``/proc/PID/stat``) divided by the requests wrk completed: what a new search costs
the server, whatever the load generator takes of the 2 cores. *Event loop* is the part of it
spent on the main thread (``/proc/PID/task/PID/stat``), where uvicorn parses the requests
and the route builds and writes the JSON; the searches themselves run on worker threads.
Runs start once the server is idle (its start-up work, e.g. building the facet table, is
not billed to them). Targets (issue 23, 663k papers): hybrid <= 15 ms (so >= 120 req/s at
concurrency 8 on 2 cores), keyword <= 5 ms.

With ``--code`` twice (an A/B run, e.g. a ``git worktree`` of the revision before a change),
the two checkouts serve in turn on the same directory, one server at a time, the order
alternating repeat by repeat, and the table has a row per checkout and mode. With ``--dir``
twice, this checkout serves two data directories in turn the same way (e.g. the keyword
index in one segment and as the import left it: bench/lexical_segments.py); with both
twice, each checkout serves its own directory (a revision before and after, each on the
index it would have).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scale_data
from bench.common import ROOT, git_revision, load_average, log, machine_info, table
from bench.html_load import cpu_seconds
from bench.http_load import Server, _lua, run_wrk


def wait_idle(pid: int, window: float = 2.0, limit: float = 300.0) -> float:
    """Wait until the server spends under 5% of a core over ``window`` seconds (its facet
    table and other start-up work done, or they would be billed to the first runs); the
    seconds waited."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit:
        c0 = cpu_seconds(pid)
        time.sleep(window)
        if cpu_seconds(pid) - c0 < 0.05 * window:
            break
    return time.perf_counter() - t0


def measure(
    size: int, modes: list[str], seconds: int, repeats: int, conns: int, code: Path | None = None,
    root: Path | None = None,
) -> dict[str, list[dict[str, float]]]:  # fmt: skip
    """Per mode, one wrk run per repeat against one uncached server, modes alternating
    (``root``: the data directory, by default the scale directory of ``size``)."""
    from bench.peers.compare import sample_docs, title_queries

    queries = title_queries(sample_docs(size), 200)
    env = {"PAPERSIFT_SEARCH_CACHE_SIZE": "0"}
    server = Server(root or scale_data.data_path(size), queries[0], env, code)
    server.start()
    log(f"search-cpu: serve answered {server.cold_start_s:.1f} s after spawn")
    log(f"search-cpu: server idle after {wait_idle(server.proc.pid):.0f} s more")
    runs: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            script = _lua(queries, Path(tmp))
            for mode in modes:  # warm-up: every query once per mode
                run_wrk(f"{server.base}/api/v1/search?mode={mode}&q=", 2, 4, script)
            wait_idle(server.proc.pid)
            for r in range(repeats):
                for mode in modes if r % 2 == 0 else modes[::-1]:
                    url = f"{server.base}/api/v1/search?mode={mode}&q="
                    pid = server.proc.pid
                    # The main thread (its id is the process's) runs uvicorn's event loop.
                    cpu0, loop0 = cpu_seconds(pid), cpu_seconds(pid, pid)
                    res = run_wrk(url, conns, seconds, script)
                    cpu, loop = cpu_seconds(pid) - cpu0, cpu_seconds(pid, pid) - loop0
                    res["cpu_ms"] = 1000 * cpu / max(1.0, res["requests"])
                    res["loop_ms"] = 1000 * loop / max(1.0, res["requests"])
                    res["load"] = os.getloadavg()[0]
                    runs[mode].append(res)
                    log(f"search-cpu: {mode} c{conns}: {res['rps']:.1f} req/s, "
                        f"{res['cpu_ms']:.2f} ms CPU/req, {res['errors']:.0f} errors")  # fmt: skip
    finally:
        server.stop()
    return runs


def measure_ab(
    size: int, modes: list[str], seconds: int, repeats: int, conns: int,
    codes: list[Path | None], roots: list[Path | None],
) -> dict[str, list[dict[str, float]]]:  # fmt: skip
    """Per checkout (or data directory) and mode (``"<revision> <mode>"``, ``"<directory>
    <mode>"``), one run per repeat: a server of each in turn, the order alternating."""
    runs: dict[str, list[dict[str, float]]] = {}
    pairs = list(zip(codes, roots, strict=True))
    for r in range(repeats):
        for code, root in pairs if r % 2 == 0 else pairs[::-1]:
            names = [git_revision(code)] if code is not None and len(set(codes)) > 1 else []
            names += [root.name] if root is not None and len(set(roots)) > 1 else []
            name = " ".join(names) or git_revision(code or ROOT)
            log(f"search-cpu: repeat {r + 1}, {name} ({code or root})")
            for mode, res in measure(size, modes, seconds, 1, conns, code, root).items():
                runs.setdefault(f"{name} {mode}", []).extend(res)
    return runs


def report(
    runs: dict[str, list[dict[str, float]]], size: int, conns: int, seconds: int,
    first: str = "revision and mode",
) -> str:  # fmt: skip
    rows: list[list[Any]] = []
    for mode, res in sorted(runs.items(), key=lambda kv: kv[0].split()[::-1]):
        med = {k: statistics.median(x[k] for x in res) for k in res[0]}
        rows.append([
            mode, str(conns), f"{med['rps']:.1f}", f"{med['cpu_ms']:.2f}",
            " / ".join(f"{x['cpu_ms']:.2f}" for x in res), f"{med['loop_ms']:.2f}",
            f"{med['p50']:.1f}", f"{med['p99']:.1f}", f"{int(sum(x['errors'] for x in res))}",
            " ".join(f"{x['load']:.1f}" for x in res),
        ])  # fmt: skip
    info = machine_info()
    first = first if any(" " in k for k in runs) else "mode"
    heads = [first, "concurrency", "req/s", "CPU ms/request", "each run", "of which event loop",
             "p50 ms", "p99 ms", "errors", "load after each run"]  # fmt: skip
    n = len(next(iter(runs.values())))
    return (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {info['cpu']}, "
        f"revision {info['revision']}; {scale_data.label(size)} directory, result cache off, "
        f"wrk at concurrency {conns}, {seconds} s per run, median of {n} runs; load average "
        f"at the end {load_average()}.\n\n" + table(heads, rows)
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=0)
    ap.add_argument("--modes", default="hybrid,keyword")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument(
        "--code", type=lambda p: Path(p).resolve(), action="append",
        help="the checkout that serves (default: this one); twice for an A/B run",
    )  # fmt: skip
    ap.add_argument(
        "--dir", type=lambda p: Path(p).resolve(), action="append",
        help="the data directory served (default: the scale directory); twice for an A/B run",
    )  # fmt: skip
    args = ap.parse_args()
    scale_data.require(args.size)
    modes, codes, roots = args.modes.split(","), args.code or [], args.dir or []
    for root in roots:
        if not (root / "manifest.json").exists():
            sys.exit(f"{root} is not a data directory (no manifest.json)")
    if len(codes) > 1 and len(roots) > 1 and len(codes) != len(roots):
        sys.exit("give one --dir per --code (each checkout serves its directory), or one of them")
    one = codes[0] if codes else None
    ab = (
        (codes, roots) if len(codes) == len(roots) > 1
        else (codes, [None] * len(codes)) if len(codes) > 1
        else ([one] * len(roots), roots)
    )  # fmt: skip
    if len(ab[0]) > 1:
        runs = measure_ab(args.size, modes, args.seconds, args.repeats, args.concurrency, *ab)
    else:
        root = roots[0] if roots else None
        runs = measure(args.size, modes, args.seconds, args.repeats, args.concurrency, one, root)
    first = (
        "revision, directory and mode" if len(codes) > 1 and len(roots) > 1
        else "directory and mode" if len(roots) > 1 else "revision and mode"
    )  # fmt: skip
    print(report(runs, args.size, args.concurrency, args.seconds, first))


if __name__ == "__main__":
    main()
