"""End to end over HTTP: cold start of `papersift serve`, throughput and latency under load.

    .venv/bin/python bench/http_load.py [--size 0] [--seconds 8] [--repeats 3]

``papersift serve`` runs as its own process on a cached scale data directory (see
``bench/scale_data.py``; rate limit off, everything else default). Cold start = from spawning
the process until the first search is answered. The load comes from ``wrk`` (Debian
``apt-get install wrk``) in a separate process on loopback, cycling through 200 queries with a
Lua script; without wrk, a bounded Python client (threads, one connection each) stands in and
the table says so. Peak RSS is the server's ``VmHWM`` at the end.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

import httpx

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scale_data
from bench.common import ROOT, load_average, log, model_env, stop_process, table

PATHS = ("/api/v1/search", "/search")
CONCURRENCY = (1, 8, 32)
_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a process, in kB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    return out


class Server:
    """`papersift serve` in a child process on ``root``; ``cold_start_s`` after ``start``."""

    def __init__(
        self, root: Path, probe: str, env: dict[str, str] | None = None, code: Path | None = None
    ) -> None:
        """``code``: the checkout whose papersift serves (another one for an A/B run)."""
        self.root, self.probe, self.extra_env = root, probe, env or {}
        self.code = code or ROOT
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.cold_start_s = float("nan")

    def start(self) -> None:
        env = dict(os.environ)
        env.update(
            PAPERSIFT_DATA_DIR=str(self.root),
            PAPERSIFT_DATA_BOOTSTRAP="none",
            PAPERSIFT_SERVER_RATE_LIMIT="0",
            PAPERSIFT_SERVER_PORT=str(self.port),
            **model_env(self.root),
            **self.extra_env,
        )
        self.cwd = tempfile.mkdtemp(prefix="papersift-http-")  # no ./config.toml: defaults
        self.log = open(Path(self.cwd) / "serve.log", "wb")  # noqa: SIM115 - closed in stop()
        url = f"{self.base}/api/v1/search?q={urllib.parse.quote(self.probe)}"
        t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "papersift", "serve"],
            cwd=self.cwd, env=env | {"PYTHONPATH": str(self.code)},
            stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        with httpx.Client(timeout=30) as client:
            while time.perf_counter() - t0 < 600:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"serve exited with {self.proc.returncode}; see {self.cwd}")
                try:
                    if client.get(url).status_code == 200:
                        self.cold_start_s = time.perf_counter() - t0
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.02)
        raise RuntimeError("serve did not answer a search within 600 s")

    def stop(self) -> dict[str, int]:
        mem = _status(self.proc.pid)
        stop_process(self.proc)
        self.log.close()
        shutil.rmtree(self.cwd, ignore_errors=True)
        return mem


def _lua(queries: list[str], folder: Path) -> Path:
    quoted = ", ".join('"' + urllib.parse.quote(q) + '"' for q in queries)
    script = folder / "queries.lua"
    script.write_text(
        f"local qs = {{{quoted}}}\nlocal n = 0\n"
        "request = function()\n  n = n + 1\n"
        "  return wrk.format('GET', wrk.path .. qs[(n % #qs) + 1])\nend\n",
        encoding="utf-8",
    )
    return script


def _ms(text: str) -> float:
    m = re.fullmatch(r"([\d.]+)(us|ms|s)", text)
    return float(m.group(1)) * _UNITS[m.group(2)] if m else float("nan")


def run_wrk(url: str, conns: int, seconds: int, script: Path) -> dict[str, float]:
    cmd = ["wrk", f"-t{min(conns, 2)}", f"-c{conns}", f"-d{seconds}s", "--latency",
           "--timeout", "30s", "-s", str(script), url]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    res: dict[str, float] = {"errors": 0.0}
    for pct in ("50", "90", "99"):
        m = re.search(rf"^\s+{pct}%\s+(\S+)", out, re.M)
        res[f"p{pct}"] = _ms(m.group(1)) if m else float("nan")
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    res["rps"] = float(m.group(1)) if m else float("nan")
    m = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    res["errors"] += int(m.group(1)) if m else 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    res["errors"] += sum(int(x) for x in m.groups()) if m else 0
    m = re.search(r"(\d+) requests in", out)
    res["requests"] = float(m.group(1)) if m else 0.0
    return res


def run_python(url: str, conns: int, seconds: int, queries: list[str]) -> dict[str, float]:
    """The stand-in for wrk: ``conns`` threads, one keep-alive connection each."""
    lat: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop = time.perf_counter() + seconds

    def worker(offset: int) -> None:
        with httpx.Client(timeout=30) as client:
            n = offset
            while time.perf_counter() < stop:
                n += 1
                t0 = time.perf_counter()
                ok = client.get(url + urllib.parse.quote(queries[n % len(queries)])).is_success
                with lock:
                    lat.append((time.perf_counter() - t0) * 1000)
                    errors[0] += not ok

    threads = [threading.Thread(target=worker, args=(i * 7,)) for i in range(conns)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lat.sort()

    def pick(q: float) -> float:
        return lat[min(len(lat) - 1, int(len(lat) * q))] if lat else float("nan")

    return {"p50": pick(0.5), "p90": pick(0.9), "p99": pick(0.99), "errors": float(errors[0]),
            "rps": len(lat) / (time.perf_counter() - t0), "requests": float(len(lat))}  # fmt: skip


def measure(
    size: int,
    queries: list[str],
    seconds: int,
    repeats: int,
    *,
    cache: bool = True,
    paths: tuple[str, ...] = PATHS,
) -> dict[str, Any]:
    """One server, every path at every concurrency. ``cache`` False turns the result cache
    off (``[search] cache_size = 0``), so every request is a full search."""
    scale_data.ensure(size)
    env = {} if cache else {"PAPERSIFT_SEARCH_CACHE_SIZE": "0"}
    server = Server(scale_data.data_path(size), queries[0], env)
    log(f"http: serve on {scale_data.label(size)}, result cache {'on' if cache else 'off'}")
    server.start()
    log(f"http: first search answered {server.cold_start_s:.2f} s after spawn")
    tool = "wrk" if shutil.which("wrk") else "python"
    rows: dict[tuple[str, int], list[dict[str, float]]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            script = _lua(queries, Path(tmp))
            for path in paths:  # warm-up: every query once per path
                run_wrk(f"{server.base}{path}?q=", 2, 3, script) if tool == "wrk" else None
            for r in range(repeats):
                for path in paths:
                    for c in CONCURRENCY:
                        url = f"{server.base}{path}?q="
                        log(f"http: {path} concurrency {c} ({r + 1}/{repeats}, {tool})")
                        res = (run_wrk(url, c, seconds, script) if tool == "wrk"
                               else run_python(url, c, seconds, queries))  # fmt: skip
                        res["load"] = os.getloadavg()[0]
                        rows.setdefault((path, c), []).append(res)
    finally:
        mem = server.stop()
    return {
        "size": size, "cold_start_s": server.cold_start_s, "mem": mem, "tool": tool,
        "runs": rows, "seconds": seconds, "repeats": repeats, "load": load_average(),
        "cache": cache, "queries": len(queries),
    }  # fmt: skip


def report(runs: list[dict[str, Any]]) -> tuple[str, dict[str, float]]:
    """One table over the servers measured (result cache on, then off) and a summary
    whose uncached keys end in ``nocache``."""
    rows, summary = [], {}
    for r in runs:
        tag = "" if r["cache"] else " nocache"
        for (path, c), res in r["runs"].items():
            med = {k: statistics.median(x[k] for x in res) for k in res[0]}
            errors = sum(x["errors"] for x in res)
            requests = int(sum(x["requests"] for x in res))
            rows.append([path, "on" if r["cache"] else "off", str(c), f"{med['rps']:.1f}",
                         f"{med['p50']:.1f}", f"{med['p90']:.1f}", f"{med['p99']:.1f}",
                         f"{int(errors)} / {requests:,}",
                         " ".join(f"{x['load']:.1f}" for x in res)])  # fmt: skip
            summary[f"{path} c{c} rps{tag}"] = med["rps"]
            summary[f"{path} c{c} errors{tag}"] = errors
    first = runs[0]
    mem = first["mem"]
    summary.update(cold_start_s=first["cold_start_s"], peak_rss_mb=max(
        r["mem"].get("VmHWM", 0) for r in runs) / 1024)  # fmt: skip
    starts = ", ".join(f"{r['cold_start_s']:.2f} s" for r in runs)
    md = (
        f"`papersift serve` on the {scale_data.label(first['size'])} data directory, default "
        f"config (a search worker thread per core, hybrid default mode) with `[server] "
        f"rate_limit` 0; "
        f"load from {first['tool']} in a separate process on loopback, cycling through "
        f"{first['queries']} title queries, {first['seconds']} s per run, median of "
        f"{first['repeats']} runs (*errors* and requests summed over them; the load column is "
        "the 1-minute figure after each run). The load generator shares the 2 cores with the "
        "server. *result cache* on is the default config: after the warm-up pass every "
        "request repeats one of those queries and is answered from the cache, which is what "
        "repeated requests get but not what a new query costs; off (`[search] cache_size = "
        "0`, a second server) makes every request a full search.\n\n"
        + table(["path", "result cache", "concurrency", "req/s", "p50 ms", "p90 ms",
                 "p99 ms", "errors / requests", "load after each run"], rows)
        + f"\n\nCold start, spawn to the first answered `/api/v1/search` (Python start, "
        f"imports, opening store and Tantivy, loading the model and the vectors): "
        f"**{first['cold_start_s']:.2f} s** (each server: {starts}). Server RSS at the end "
        f"{mem.get('VmRSS', 0) / 1024:,.0f} MB, peak (VmHWM) "
        f"**{summary['peak_rss_mb']:,.0f} MB**. Load average at the end {runs[-1]['load']}."
    )  # fmt: skip
    return md, summary


def measure_both(size: int, queries: list[str], seconds: int, repeats: int) -> list[dict[str, Any]]:
    """The default server (cache on), then one with the cache off for the API path."""
    return [
        measure(size, queries, seconds, repeats),
        measure(size, queries, seconds, repeats, cache=False, paths=("/api/v1/search",)),
    ]


def main() -> None:
    from bench.peers.compare import sample_docs, title_queries

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=0)
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    queries = title_queries(sample_docs(args.size), 200)
    md, _ = report(measure_both(args.size, queries, args.seconds, args.repeats))
    print(md)


if __name__ == "__main__":
    main()
