"""HTML pages against the JSON API over HTTP, result cache on, two checkouts in alternation.

    .venv/bin/python bench/html_load.py [--old CHECKOUT] [--data DIR] [--seconds 6]
        [--repeats 3] [--write]

One ``papersift serve`` per checkout (``--old``: ``git worktree add DIR main``; default: this
checkout alone) on the same data directory (default: the bundled demo corpus, imported and
indexed once under ``bench/.cache/demo``). wrk, in its own process on loopback, cycles
through 200 title queries (search) or 200 paper ids (paper pages) at concurrency 8, after a
warm-up pass that fills the result cache; runs alternate between the checkouts. Every path
is timed as wrk sends it by default (no ``Accept-Encoding``) and as a browser asks
(``Accept-Encoding: gzip, deflate, br``). Beside req/s, the server's CPU per request
(``/proc/PID/stat`` user + system time over the run / requests answered), which the other
engineers' load on this shared machine disturbs far less than req/s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

import httpx

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import CACHE, ROOT, load_average, log, machine_info, publish, table
from bench.http_load import Server, run_wrk

DEMO = ROOT / "papersift" / "data" / "corpus" / "arxiv-demo.jsonl.gz"
BROWSER = "gzip, deflate, br"
CONCURRENCY = 8
# (label, path prefix, what it cycles through); the paper page's data is the paper and its
# similar papers, so its API peer is /similar with the page's 8.
PATHS = (
    ("/api/v1/search", "/api/v1/search?q=", "queries"),
    ("/search", "/search?q=", "queries"),
    ("/api/v1/papers/{id}/similar", "/api/v1/papers/", "similar"),
    ("/papers/{id}-{slug}", "/", "pages"),
)
PAIRS = (("/search", "/api/v1/search"), ("/papers/{id}-{slug}", "/api/v1/papers/{id}/similar"))


def demo_data(folder: Path) -> Path:
    """The demo corpus imported and indexed (embedded) into ``folder``, once."""
    done = folder / ".complete"
    if done.is_file():
        return folder
    env = {**os.environ, "PAPERSIFT_DATA_DIR": str(folder), "PAPERSIFT_DATA_BOOTSTRAP": "none"}
    with tempfile.TemporaryDirectory() as cwd:  # no ./config.toml: defaults
        for args in (["import", str(DEMO)], ["index"]):
            log(f"demo data: papersift {args[0]}")
            subprocess.run(
                [sys.executable, "-m", "papersift", *args],
                env=env,
                cwd=cwd,
                check=True,
                capture_output=True,
            )
    done.write_text("ok\n")
    return folder


def targets(data: Path) -> tuple[list[str], list[str], list[str]]:
    """200 title queries, 200 paper ids and those papers' page paths (without the leading
    slash: wrk's path is "/" for a bare host), from the store."""
    sys.path.insert(0, str(ROOT))
    from papersift.core.urls import paper_path
    from papersift.engine.store import PaperStore

    store = PaperStore(data / "papers.sqlite")
    try:
        with store.reading() as db:
            ids = [
                str(r[0])
                for r in db.execute(
                    "SELECT docid FROM papers WHERE arxiv_id NOT LIKE '%/%' ORDER BY docid"
                )
            ]
        pick = [int(i) for i in ids[:: max(1, len(ids) // 200)][:200]]
        papers = store.get(pick)
    finally:
        store.close()
    chosen = [papers[d] for d in pick if d in papers]
    queries = [" ".join(p.title.split()[:4]) for p in chosen]
    return queries, [p.arxiv_id for p in chosen], [paper_path(p).lstrip("/") for p in chosen]


def _lua(items: list[str], folder: Path, name: str, suffix: str = "") -> Path:
    values = [urllib.parse.quote(x, safe="/-.") for x in items]
    script = folder / f"{name}.lua"
    script.write_text(
        f"local xs = {json.dumps(values)}\n".replace("[", "{").replace("]", "}")
        + "local n = 0\nrequest = function()\n  n = n + 1\n"
        f"  return wrk.format('GET', wrk.path .. xs[(n % #xs) + 1] .. '{suffix}')\nend\n",
        encoding="utf-8",
    )
    return script


def cpu_seconds(pid: int, thread: int | None = None) -> float:
    """User + system CPU seconds of process ``pid``, or of its thread ``thread`` alone."""
    stat = f"/proc/{pid}/stat" if thread is None else f"/proc/{pid}/task/{thread}/stat"
    fields = Path(stat).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wrk_with(url: str, script: Path, seconds: int, encoding: str | None) -> dict[str, float]:
    if encoding is None:
        return run_wrk(url, CONCURRENCY, seconds, script)
    # run_wrk has no header option: the Lua script sets the header for every request.
    with_header = script.with_name(script.stem + "-enc.lua")
    with_header.write_text(
        f"wrk.headers['Accept-Encoding'] = '{encoding}'\n" + script.read_text(), encoding="utf-8"
    )
    return run_wrk(url, CONCURRENCY, seconds, with_header)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", type=Path, help="another checkout, timed in alternation")
    ap.add_argument("--data", type=Path, help="a data directory (default: the demo corpus)")
    ap.add_argument("--seconds", type=int, default=6)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--write", action="store_true", help="write the section of RESULTS.md")
    args = ap.parse_args()
    data = args.data or demo_data(CACHE / "demo")
    queries, ids, pages = targets(data)
    codes = [("before", args.old)] if args.old else []
    codes.append(("after" if args.old else "this", ROOT))
    servers = {}
    for label, code in codes:
        s = Server(data, queries[0], code=code)
        s.start()
        servers[label] = s
        log(f"{label}: serving {code} on {s.base}")
    runs: dict[tuple[str, str, str], list[dict[str, float]]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            scripts = {
                "queries": _lua(queries, folder, "queries"),
                "similar": _lua(ids, folder, "similar", "/similar?limit=8"),
                "pages": _lua(pages, folder, "pages"),
            }
            items = {"queries": queries, "similar": ids, "pages": pages}
            suffix = {"queries": "", "similar": "/similar?limit=8", "pages": ""}
            for label, s in servers.items():  # warm-up: every target once, per encoding
                log(f"{label}: warm-up")
                with httpx.Client(timeout=60) as client:
                    for _, prefix, kind in PATHS:
                        for accept in ("identity", BROWSER):
                            for x in items[kind]:
                                url = s.base + prefix + urllib.parse.quote(x, safe="/-.")
                                url += suffix[kind]
                                headers = {"Accept-Encoding": accept}
                                client.get(url, headers=headers).raise_for_status()
            for r in range(args.repeats):
                for path, prefix, kind in PATHS:
                    for enc in (None, BROWSER):
                        for label, s in servers.items():
                            cpu0 = cpu_seconds(s.proc.pid)
                            res = wrk_with(s.base + prefix, scripts[kind], args.seconds, enc)
                            res["cpu_ms"] = (
                                1000 * (cpu_seconds(s.proc.pid) - cpu0) / max(1.0, res["requests"])
                            )
                            res["load"] = os.getloadavg()[0]
                            runs.setdefault((label, path, enc or "none"), []).append(res)
                            log(
                                f"{r + 1}/{args.repeats} {label} {path} enc={enc}: "
                                f"{res['rps']:.0f} req/s, {res['cpu_ms']:.2f} ms CPU/req"
                            )
    finally:
        for s in servers.values():
            s.stop()
    publish("html-load", report(runs, codes, args, data), args.write)


def report(
    runs: dict[tuple[str, str, str], list[dict[str, float]]],
    codes: list[tuple[str, Path | None]],
    args: argparse.Namespace,
    data: Path,
) -> str:
    med = {k: {f: statistics.median(x[f] for x in v) for f in v[0]} for k, v in runs.items()}
    rows = []
    for (label, path, enc), m in med.items():
        errors = sum(x["errors"] for x in runs[(label, path, enc)])
        rows.append(
            [
                label,
                path,
                enc,
                f"{m['rps']:.0f}",
                f"{m['cpu_ms']:.2f}",
                f"{m['p50']:.1f}",
                f"{m['p99']:.1f}",
                f"{errors:.0f}",
                " ".join(f"{x['load']:.1f}" for x in runs[(label, path, enc)]),
            ]
        )
    ratios = []
    for label, _ in codes:
        for page, api in PAIRS:
            for enc in ("none", BROWSER):
                p, a = med[(label, page, enc)], med[(label, api, enc)]
                ratios.append(
                    [
                        label,
                        f"{page} / {api}",
                        enc,
                        f"{p['rps'] / a['rps']:.2f}",
                        f"{a['cpu_ms'] / p['cpu_ms']:.2f}",
                    ]
                )
    info = machine_info()
    corpus = "the demo corpus (6,189 papers)" if args.data is None else str(data)
    body = "\n".join(
        [
            "## HTML pages against the API (issue 23)",
            "",
            f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {info['cpu']}, "
            f"{info['cores']} cores shared with four other engineers' work (see the load "
            f"column), revision {info['revision']}. `.venv/bin/python bench/html_load.py"
            + (" --old ../main" if args.old else "")
            + f" --seconds {args.seconds} --repeats "
            f"{args.repeats} --write` on {corpus}. "
            "One `papersift serve` per checkout (default config, result cache on, rate limit "
            "off), wrk at concurrency 8 in a separate process, 200 title queries or 200 papers "
            "cycled after a warm-up pass; median of the runs, checkouts alternating run by run. "
            "*encoding* none is wrk's default request; the other is what browsers send. *CPU "
            "ms/req*: the server process's user + system CPU over the run / requests.",
            "",
            table(
                [
                    "code",
                    "path",
                    "encoding",
                    "req/s",
                    "CPU ms/req",
                    "p50 ms",
                    "p99 ms",
                    "errors",
                    "load after each run",
                ],
                rows,
            ),
            "",
            "Pages against their API peer (target: req/s ratio >= 0.60):",
            "",
            table(
                ["code", "page / API", "encoding", "req/s ratio", "CPU ratio (API / page)"], ratios
            ),
            "",
            f"Load average at the end: {load_average()}.",
        ]
    )
    return body


if __name__ == "__main__":
    main()
