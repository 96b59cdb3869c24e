"""The keyword index in one segment against the segments an import leaves (issue 23).

    .venv/bin/python bench/lexical_segments.py [--size 0] [--queries 200] [--rounds 4] [--write]

An import commits Tantivy every 100,000 papers and each commit leaves a segment; the 663k
directory had seven. ``engine.lexical_rewrite`` writes such an index again as one. The first
run on a directory keeps a copy of its keyword index as the import left it
(``bench/.cache/lexical-<size>-as-imported/``), then compacts the directory with the product's
own path (``DataDir.compact_lexical``), timed: wall and CPU seconds, and the process's peak
RSS. Every run then times, in one process and in rounds that alternate the order, each
title query's Tantivy passes over both indexes: hybrid's any-word top 1,000 (uncounted), the
counted match pass (top 2,000, as hybrid and keyword mode fetch it) and the categories and
years aggregation; thread CPU per query, median round. The two indexes hold the same papers,
but the copy still counts the documents that updates deleted in its term statistics, so
scores differ in the last digits; the table says how many queries have the same top 10.

It also makes ``bench/.cache/scale-<size>-as-imported/``: links to the directory's store,
vectors and model, with the kept copy as its keyword index, so that
``bench/search_cpu.py --dir bench/.cache/scale-full --dir bench/.cache/scale-full-as-imported``
measures the pair over HTTP (SQLite follows the link to the store's own file, so both
directories share one store and its write-ahead log; serve one at a time).
"""

from __future__ import annotations

import resource
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(ROOT))

from bench import scale_data  # noqa: E402
from bench.common import CACHE, bench_config, load_average, log, machine_info, publish, scale_parser  # noqa: E402
from bench.peers.compare import sample_docs, title_queries  # noqa: E402


def as_imported(size: int) -> Path:
    """Where the copy of the directory's keyword index as the import left it is kept."""
    return CACHE / f"lexical-{scale_data.label(size)}-as-imported"


def linked_directory(size: int) -> Path:
    """A data directory of links to the scale directory's files but the kept keyword index."""
    root, linked = scale_data.data_path(size), CACHE / f"scale-{scale_data.label(size)}-as-imported"
    linked.mkdir(exist_ok=True)
    for item in root.iterdir():
        if item.name in ("lexical", "writer.lock") or item.name.startswith("papers.sqlite-"):
            continue
        target = linked / item.name
        if item.name == "manifest.json":
            shutil.copyfile(item, target)
        elif not target.is_symlink():
            target.symlink_to(item.resolve())
    if not (linked / "lexical").is_symlink():
        (linked / "lexical").symlink_to(as_imported(size))
    return linked


def keep_and_compact(size: int) -> str:
    """Copy the scattered index aside (once), then compact the directory; what it cost."""
    from papersift.engine.datadir import DataDir
    from papersift.engine.lexical_rewrite import segment_sizes

    root = scale_data.data_path(size)
    before = segment_sizes(root / "lexical")
    if len(before) > 1 and not as_imported(size).exists():
        log(f"lexical-segments: keeping the {len(before)}-segment index in {as_imported(size)}")
        shutil.copytree(root / "lexical", as_imported(size))
    if not as_imported(size).exists():
        sys.exit(f"{root} has one segment and no copy of the index as imported")
    data = DataDir(bench_config(root), create=False)
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        done = data.compact_lexical(progress=sys.stderr.isatty())
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        papers = data.lexical.num_docs
    finally:
        data.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    copy = segment_sizes(as_imported(size))
    if not done:
        return f"The directory was compacted by an earlier run (the copy has {len(copy)} segments)."
    return (
        f"Compacting the directory's {len(before)} segments ({', '.join(str(s[0]) for s in before)}"
        f" live papers) into one of {papers:,}: {wall:.1f} s wall, {cpu:.1f} s CPU, peak RSS of "
        f"the process {peak:.0f} MB (`DataDir.compact_lexical`)."
    )


def run(size: int, n: int, rounds: int) -> str:
    from papersift.engine.lexical import LexicalIndex
    from papersift.engine.plan import make_plan
    from papersift.engine.results import SearchRequest
    from papersift.engine.search import open_engine

    compacted = keep_and_compact(size)
    linked_directory(size)
    engine = open_engine(bench_config(scale_data.data_path(size)))
    try:
        one = engine.data.lexical
        cfg = engine.config.search
        copy = LexicalIndex(as_imported(size), title_boost=cfg.title_boost,
                            author_boost=cfg.author_boost)  # fmt: skip
        indexes = {"as imported": copy, "one segment": one}
        plans = []
        for q in title_queries(sample_docs(size), n):
            plan = make_plan(engine, SearchRequest(q, mode="hybrid", page_size=24), 24)
            if plan.keyword.query is not None and plan.keyword.ranking is not None:
                plans.append(plan)
        Pass = Callable[[LexicalIndex, Any], object]
        passes: dict[str, Pass] = {
            "hybrid's any-word top 1,000": lambda lex, p: lex.top(p.keyword.ranking, 1000),
            "counted match pass, top 2,000": lambda lex, p: lex.search(p.keyword.query, 2000),
            "categories and years aggregation": lambda lex, p: lex.facets(
                p.keyword.query, 30, ("categories", "years")
            ),
        }
        times: dict[tuple[str, str], list[float]] = {}
        for r in range(rounds):
            for label, one_pass in passes.items():
                order = list(indexes.items())
                for name, lex in order if r % 2 == 0 else order[::-1]:
                    c0 = time.thread_time()
                    for p in plans:
                        one_pass(lex, p)
                    ms = (time.thread_time() - c0) * 1000 / len(plans)
                    times.setdefault((label, name), []).append(ms)
            log(f"lexical-segments: round {r + 1} of {rounds}")
        same = sum(
            copy.top(p.keyword.ranking, 10)[0] == one.top(p.keyword.ranking, 10)[0] for p in plans
        )
        segments = copy.index.searcher().num_segments
    finally:
        engine.close()
    rows = []
    for label in passes:
        a = statistics.median(times[(label, "as imported")])
        b = statistics.median(times[(label, "one segment")])
        rows.append(f"| {label} | {a:.2f} | {b:.2f} | {b / a:.2f} |")
    info = machine_info()
    return (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {info['cpu']}, "
        f"revision {info['revision']}; scale directory {scale_data.label(size)}, "
        f"{len(plans)} title queries, {rounds} rounds alternating; load average at the end "
        f"{load_average()}.\n\n{compacted}\n\n"
        f"| Tantivy pass (thread CPU ms per query, median round) | {segments} segments, "
        "as imported | one segment | ratio |\n| --- | ---: | ---: | ---: |\n"
        + "\n".join(rows)
        + f"\n\nThe any-word top 10 is the same on both for {same} of {len(plans)} queries.\n"
    )


def main() -> None:
    ap = scale_parser(__doc__)
    args = ap.parse_args()
    publish("lexical segments", run(args.size, args.queries, args.rounds), args.write)


if __name__ == "__main__":
    main()
