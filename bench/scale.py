"""papersift at 10k, 100k and 672k papers: import, index sizes, open time, query latency.

    .venv/bin/python bench/scale.py [--sizes 10000,100000,0] [--queries 100] [--rounds 3]

Data directories come from ``bench/scale_data.py`` (cached in ``bench/.cache/``; built on
first use: the full import takes ~10-25 minutes here, the 10k real embedding ~10 minutes).
Latency is ``SearchEngine.search`` in this process (default page of 24 with snippets and
facets), per mode and per variant (no filter, a category filter, newest first); queries are
3-5 words cut from titles of that corpus plus run_core's hand-written ones; per query the
median of the rounds, then percentiles over queries.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scale_data
from bench.common import (
    CACHE,
    bench_config,
    dir_size,
    latency_row,
    load_average,
    log,
    mb,
    percentile,
    table,
)
from bench.peers.compare import sample_docs, title_queries
from bench.run_core import HAND_QUERIES
from papersift.engine.results import Filters, Mode, SearchRequest, Sort
from papersift.engine.search import open_engine

MODES: tuple[Mode, ...] = ("keyword", "semantic", "hybrid")
CATEGORY = "quant-ph"  # about 13-19% of the first 10k and 100k papers: a broad filter
VARIANTS: tuple[tuple[str, Filters, Sort], ...] = (
    ("relevance", Filters(), "relevance"),
    (f"category {CATEGORY}", Filters(categories=(CATEGORY,)), "relevance"),
    ("newest first", Filters(), "newest"),
)


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def measure(size: int, n_queries: int, rounds: int) -> dict[str, Any]:
    """Everything for one size: build metadata, open time, latency per mode and variant."""
    meta = scale_data.ensure(size)
    root = scale_data.data_path(size)
    rss0 = _rss_mb()
    t0 = time.perf_counter()
    engine = open_engine(bench_config(root))
    data = engine.data
    data.vectors  # noqa: B018 - model and vectors load here, as `serve` does before serving
    open_s = time.perf_counter() - t0
    rss_open = _rss_mb() - rss0
    try:
        docs = sample_docs(size)
        queries = list(HAND_QUERIES) + title_queries(docs, n_queries - len(HAND_QUERIES))
        cat_total = engine.search(SearchRequest("", filters=VARIANTS[1][1], page_size=1)).total
        cells = [(m, v) for m in MODES for v in VARIANTS]
        for q in queries[:15]:  # warm-up
            for m, (_, f, s) in cells:
                engine.search(SearchRequest(q, mode=m, filters=f, sort=s))
        # The first fused search starts building the facet table; time the steady state.
        engine.facet_table.wait()
        times: dict[tuple[str, str], list[list[float]]] = {
            (m, v[0]): [[] for _ in queries] for m, v in cells
        }
        fallback: dict[tuple[str, str], int] = {(m, v[0]): 0 for m, v in cells}
        emb: list[list[float]] = [[] for _ in queries]
        for r in range(rounds):
            log(f"scale: {scale_data.label(size)} latency round {r + 1}/{rounds}")
            for i, q in enumerate(queries):
                t1 = time.perf_counter()
                data.embedder.embed_query(q)
                emb[i].append((time.perf_counter() - t1) * 1000)
                for m, (name, f, s) in cells:
                    t1 = time.perf_counter()
                    res = engine.search(SearchRequest(q, mode=m, filters=f, sort=s))
                    times[(m, name)][i].append((time.perf_counter() - t1) * 1000)
                    if r == 0 and res.mode != m:
                        fallback[(m, name)] += 1
        lat = {f"{m}|{v}": [statistics.median(t) for t in ts] for (m, v), ts in times.items()}
        return {
            "meta": meta,
            "papers": data.store.count(),
            "vectors": data.vectors.size,
            "open_s": open_s,
            "rss_open_mb": rss_open,
            "rss_end_mb": _rss_mb(),
            "queries": len(queries),
            "rounds": rounds,
            "category_total": cat_total,
            "latency": lat,
            "fallback": {f"{m}|{v}": n for (m, v), n in fallback.items()},
            "measured": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "embed": [statistics.median(t) for t in emb],
            "load": load_average(),
        }
    finally:
        engine.close()


def _on_disk(r: dict[str, Any], folder: str, built: int) -> int:
    """The folder's size now (index changes since the build: a schema upgrade, the vector
    graph), else what the build recorded."""
    path = scale_data.data_path(r["meta"]["size"]) / folder
    return dir_size(path) if path.is_dir() else built


def report(results: list[dict[str, Any]], rounds: int) -> str:
    build_rows, lat_rows = [], []
    for r in results:
        m, label = r["meta"], scale_data.label(r["meta"]["size"])
        build_rows.append([
            label,
            f"{r['papers']:,}",
            f"{m['import_s']:.0f}",
            f"{m['import_cpu_s']:.0f}",
            f"{r['papers'] / m['import_s']:,.0f}",
            mb(m["sqlite_bytes"]),
            mb(_on_disk(r, "lexical", m["lexical_bytes"])),
            mb(_on_disk(r, "vectors", m.get("vectors_bytes", 0))),
            f"{r['open_s']:.2f}",
            f"{r['rss_open_mb']:,.0f} MB",
            f"{m['built']}, load {m['load_average']}",
        ])  # fmt: skip
        for key, ms in r["latency"].items():
            mode, variant = key.split("|")
            lat_rows.append([
                label, mode, variant, *latency_row(ms)[:3], str(r["fallback"][key]),
            ])  # fmt: skip
        lat_rows.append([label, "(query embedding alone)", "", *latency_row(r["embed"])[:3], ""])
    vec_notes = "; ".join(
        f"{scale_data.label(r['meta']['size'])}: {r['meta']['vectors']}" for r in results
    )
    cats = ", ".join(
        f"{r['category_total']:,} ({scale_data.label(r['meta']['size'])})" for r in results
    )
    loads = "; ".join(
        f"{scale_data.label(r['meta']['size'])} {r['queries']} x {r['rounds']}, {r['load']}, "
        f"{r['measured']}"
        for r in results
    )
    return "\n\n".join([
        "### Import, index sizes, open time\n\n"
        "Import = `indexer.build.import_files` of the first N papers of "
        "`arxiv-snapshot-bench.jsonl.xz` into an empty data directory, measured once when the "
        "cache was built (wall and CPU seconds; the date and load average of that build are "
        "in the last column: CPU s is the better guide on a busy machine). *open* = "
        "`open_engine` plus loading the model and all vectors, in process; RSS is what that "
        "added to this process. The import columns are from an older build of the "
        "importer (the core section has this build's import rate on the first 100k). "
        "*lexical/* and *vectors/* are sizes on disk when this report was written; above "
        "100k papers *vectors/* holds the segment and its HNSW graph (which repeats the "
        "vectors).\n\n"
        + table(
            ["corpus", "papers", "import s", "import CPU s", "papers/s", "papers.sqlite",
             "lexical/", "vectors/", "open s", "RSS added", "built"],
            build_rows,
        ),
        f"### Query latency by corpus size\n\n`SearchEngine.search`, default page (24 hits "
        f"with snippets and facets), {results[0]['queries']} queries ({len(HAND_QUERIES)} "
        f"hand-written, the rest cut from titles of the corpus), {rounds} rounds after a "
        "warm-up, per query the median, then percentiles over queries; semantic and hybrid "
        f"include embedding the query. Category filter `{CATEGORY}` allows "
        + cats
        + " papers. *fell back* = queries answered by keywords instead (no free text).\n\n"
        + table(
            ["corpus", "mode", "variant", "p50 ms", "p95 ms", "p99 ms", "fell back"], lat_rows
        )
        + f"\n\nVectors: {vec_notes}.\n\nPer size: queries x rounds, load average "
        f"(1/5/15 min) at the end, when it ran: {loads}.",
    ])  # fmt: skip


def result_path(size: int) -> Path:
    return CACHE / f"scale-result-{scale_data.label(size)}.json"


def save(result: dict[str, Any]) -> None:
    """Keep one size's figures, so a later run of other sizes reports all of them."""
    result_path(result["meta"]["size"]).write_text(json.dumps(result) + "\n", encoding="utf-8")


def saved(sizes: Sequence[int]) -> list[dict[str, Any]]:
    """The last measured figures of each size that has some, in the given order."""
    out = []
    for size in sizes:
        path = result_path(size)
        if path.exists():
            out.append(json.loads(path.read_text(encoding="utf-8")))
    return out


def summary(results: list[dict[str, Any]]) -> dict[str, float]:
    """p50/p99 of the no-filter cells at the largest size, for the targets table."""
    r = results[-1]
    out = {"papers": float(r["papers"]), "open_s": float(r["open_s"])}
    for mode in MODES:
        ms = r["latency"][f"{mode}|relevance"]
        out[f"{mode}_p50"] = percentile(ms, 50)
        out[f"{mode}_p99"] = percentile(ms, 99)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(map(str, scale_data.SIZES)))
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    results = [measure(int(s), args.queries, args.rounds) for s in args.sizes.split(",")]
    print(report(results, args.rounds))


if __name__ == "__main__":
    main()
