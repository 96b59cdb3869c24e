"""What compressing a response costs at each brotli quality and gzip level (issue 23).

    .venv/bin/python bench/compression_levels.py [--size 0] [--queries 60] [--rounds 9] [--write]

A search answer of the JSON API (a 24-hit page: ~55 KB) costs a few ms of CPU to compute,
and compressing it for a client that sends ``Accept-Encoding`` is paid on top of that for
every new search (the page cache keeps only HTML pages). The bodies are real: the app
(``server.app.create_app``) on a scale directory answers title queries in hybrid mode, as
``/api/v1/search`` and as the ``/search`` page, and paper pages; each body is then compressed
by every candidate in turn (the order the same for all, so a shared machine's drift falls
on all alike), ``--rounds`` times. The table gives the median thread CPU of one body and
the mean compressed size per candidate; the rows ``server.compress`` uses are marked.
"""

from __future__ import annotations

import dataclasses
import gzip
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(ROOT))

import brotli  # noqa: E402

from bench import scale_data  # noqa: E402
from bench.common import (  # noqa: E402
    bench_config,
    load_average,
    log,
    machine_info,
    publish,
    scale_parser,
    table,
)
from bench.peers.compare import sample_docs, title_queries  # noqa: E402
from papersift.server import compress  # noqa: E402

Compressor = Callable[[bytes], bytes]


def candidates() -> dict[str, Compressor]:
    def gz(level: int) -> Compressor:
        return lambda data: gzip.compress(data, compresslevel=level, mtime=0)

    def br(quality: int) -> Compressor:
        return lambda data: brotli.compress(data, quality=quality)

    return {
        **{f"gzip {level}": gz(level) for level in (1, 2, 4, 6, 9)},
        **{f"brotli {q}": br(q) for q in (1, 2, 3, 4, 5, 6)},
    }


def bodies(size: int, n: int) -> dict[str, list[bytes]]:
    """Real response bodies by kind, uncompressed (the client asks for none)."""
    from starlette.testclient import TestClient

    from papersift.engine.search import open_engine
    from papersift.server.app import create_app

    config = bench_config(scale_data.data_path(size))
    config = dataclasses.replace(config, server=dataclasses.replace(config.server, rate_limit=0))
    docs = sample_docs(size)
    queries = title_queries(docs, n)
    plain = {"accept-encoding": "identity"}
    out: dict[str, list[bytes]] = {"/api/v1/search": [], "/search": [], "/papers/{id}": []}
    with open_engine(config) as engine, TestClient(create_app(engine, config)) as client:
        for q, doc in zip(queries, docs[:n], strict=False):
            for path in ("/api/v1/search", "/search"):
                r = client.get(path, params={"q": q, "mode": "hybrid"}, headers=plain)
                r.raise_for_status()
                out[path].append(r.content)
            r = client.get(f"/papers/{doc.id}", headers=plain)
            r.raise_for_status()
            out["/papers/{id}"].append(r.content)
    return out


def measure(kinds: dict[str, list[bytes]], rounds: int) -> list[list[str]]:
    in_use = {f"gzip {compress.GZIP_LEVEL}", f"brotli {compress.BROTLI_QUALITY}"}
    rows: list[list[str]] = []
    comps = candidates()
    for kind, items in kinds.items():
        cpu: dict[str, list[int]] = {name: [] for name in comps}
        sizes = {name: sum(len(f(b)) for b in items) / len(items) for name, f in comps.items()}
        for _ in range(rounds):
            for body in items:
                for name, f in comps.items():
                    t0 = time.thread_time_ns()
                    f(body)
                    cpu[name].append(time.thread_time_ns() - t0)
        raw = sum(map(len, items)) / len(items)
        for name in comps:
            mark = " (used)" if name in in_use else ""
            rows.append([
                kind, f"{raw / 1024:.1f}", name + mark, f"{statistics.median(cpu[name]) / 1e6:.3f}",
                f"{sizes[name] / 1024:.1f}", f"{sizes[name] / raw:.3f}",
            ])  # fmt: skip
        log(f"compression: {kind} done")
    return rows


def main() -> None:
    ap = scale_parser(__doc__, queries=60, rounds=9)
    args = ap.parse_args()
    machine, load0 = machine_info(), load_average()
    kinds = bodies(args.size, args.queries)
    rows = measure(kinds, args.rounds)
    head = ["response", "body KB", "compressor", "CPU ms (median)", "compressed KB", "ratio"]
    body = (
        "## Compressing a response: brotli qualities and gzip levels (issue 23)\n\n"
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {machine['cpu']}, "
        f"revision {machine['revision']}; load {load0} at the start, {load_average()} at the end. "
        f"`.venv/bin/python bench/compression_levels.py --size {args.size} --queries "
        f"{args.queries} --rounds {args.rounds}`: {args.queries} hybrid title queries' bodies "
        "per kind, each compressed by every candidate in turn; thread CPU per body.\n\n"
        + table(head, rows)
    )
    publish("compression-levels", body, args.write)


if __name__ == "__main__":
    main()
