"""Thread hand-offs of a new search over HTTP: futex calls, context switches and CPU per
request, counted by `perf stat` on the server under wrk (issue 23).

    .venv/bin/python bench/server_switches.py [--size 0] [--modes hybrid,keyword]
        [--seconds 8] [--repeats 2] [--code CHECKOUT [--code CHECKOUT]]

A search costs the server 1.5-2 ms more CPU over HTTP than the same searches one after
another in one thread. Part is the event loop's own work; the rest is the threads handing
the GIL to each other: the event loop, the request's worker and the query pool each drop
it around native calls (Tantivy, SQLite's row steps, numpy on large arrays, onnxruntime,
FAISS; uvloop around its poll and takes it back for every callback), and when another
thread waits, every drop and take is a futex call and often a context switch. This counts
them per request, with the same server and load as bench/search_cpu.py (result cache off,
200 title queries, concurrency 8), so a change that should make fewer of them can be seen
to. With ``--code`` twice the checkouts serve in turn, the order alternating by repeat.

Needs Linux ``perf`` (Debian: linux-perf) allowed to read syscall tracepoints (root, or
``kernel.perf_event_paranoid`` at -1).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scale_data
from bench.common import git_revision, load_average, log, machine_info, table
from bench.http_load import Server, _lua, run_wrk
from bench.search_cpu import wait_idle

EVENTS = {
    "syscalls:sys_enter_futex": "futex calls",
    "context-switches": "context switches",
    "task-clock": "CPU ms",  # perf reports it in ms
}


def count(pid: int, seconds: int, url: str, script: Path) -> dict[str, float]:
    """``EVENTS`` of process ``pid`` per request over a wrk run of ``seconds``."""
    perf = subprocess.Popen(
        ["perf", "stat", "-x", ",", "-e", ",".join(EVENTS), "-p", str(pid), "--",
         "sleep", str(seconds)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    res = run_wrk(url, 8, seconds, script)
    _, err = perf.communicate()
    out = {"requests": res["requests"], "rps": res["rps"]}
    for line in err.splitlines():  # value,unit,event,...
        fields = line.split(",")
        if len(fields) > 2 and fields[2] in EVENTS and fields[0].replace(".", "").isdigit():
            out[EVENTS[fields[2]]] = float(fields[0]) / max(1.0, res["requests"])
    return out


def measure(
    size: int, modes: list[str], seconds: int, code: Path | None
) -> dict[str, dict[str, float]]:
    """One server of ``code`` (this checkout if None), one counted run per mode."""
    from bench.peers.compare import sample_docs, title_queries

    queries = title_queries(sample_docs(size), 200)
    server = Server(
        scale_data.data_path(size), queries[0], {"PAPERSIFT_SEARCH_CACHE_SIZE": "0"}, code
    )
    server.start()
    wait_idle(server.proc.pid)
    runs: dict[str, dict[str, float]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            script = _lua(queries, Path(tmp))
            for mode in modes:
                url = f"{server.base}/api/v1/search?mode={mode}&q="
                run_wrk(url, 2, 4, script)  # every query's first search, uncounted
                wait_idle(server.proc.pid)
                runs[mode] = count(server.proc.pid, seconds, url, script)
                log(f"server-switches: {mode}: " + ", ".join(
                    f"{k} {v:.2f}" for k, v in runs[mode].items()))  # fmt: skip
    finally:
        server.stop()
    return runs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=0)
    ap.add_argument("--modes", default="hybrid,keyword")
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--code", type=lambda p: Path(p).resolve(), action="append")
    args = ap.parse_args()
    if shutil.which("perf") is None:
        sys.exit("needs Linux perf (Debian: apt install linux-perf)")
    scale_data.require(args.size)
    codes: list[Path | None] = args.code or [None]
    modes = args.modes.split(",")
    runs: dict[tuple[str, str], list[dict[str, float]]] = {}
    for r in range(args.repeats):
        for code in codes if r % 2 == 0 else codes[::-1]:
            name = git_revision(code) if code is not None else git_revision()
            for mode, res in measure(args.size, modes, args.seconds, code).items():
                runs.setdefault((name, mode), []).append(res)
    heads = ["revision", "mode", "req/s", *EVENTS.values(), "requests"]
    rows = [
        [name, mode, f"{statistics.median(x['rps'] for x in res):.1f}"]
        + [f"{statistics.median(x.get(k, float('nan')) for x in res):.2f}" for k in EVENTS.values()]
        + [" / ".join(f"{x['requests']:.0f}" for x in res)]
        for (name, mode), res in sorted(runs.items(), key=lambda kv: (kv[0][1], kv[0][0]))
    ]
    print(
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
        f"{machine_info()['cpu']}; {scale_data.label(args.size)} directory, result cache off, "
        f"wrk at concurrency 8, {args.seconds} s per run, per request, median of "
        f"{args.repeats} runs; load average at the end {load_average()}.\n\n" + table(heads, rows)
    )


if __name__ == "__main__":
    main()
